package convert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/memra-ai/memra/gguf"
)

// Limits on untrusted safetensors input. A header is JSON read fully into
// memory, so it is capped; real checkpoints have headers well under 10 MiB.
const (
	maxHeaderBytes = 100 << 20
	maxTensorDims  = 8
)

// DType is a safetensors element type. Only the float types Hugging Face
// checkpoints of our architectures use are supported.
type DType string

// Supported element types.
const (
	DTypeF32  DType = "F32"
	DTypeF16  DType = "F16"
	DTypeBF16 DType = "BF16"
)

// size returns the bytes per element, or 0 for an unsupported type.
func (d DType) size() int {
	switch d {
	case DTypeF32:
		return 4
	case DTypeF16, DTypeBF16:
		return 2
	}
	return 0
}

// TensorMeta locates one tensor of a safetensors file. Shape is in PyTorch
// order (outermost first), e.g. a Linear weight is [out, in].
type TensorMeta struct {
	Name  string
	DType DType
	Shape []int64
	File  string // path of the .safetensors file holding it
	Begin int64  // absolute byte offset of the data in File
	Size  int64  // bytes
}

// safetensorsFile is one open .safetensors file.
type safetensorsFile struct {
	path    string
	f       *os.File
	tensors []*TensorMeta // sorted by name
}

// openSafetensors opens path and validates its header: every tensor's dtype,
// shape and byte range are checked against the file size, so later reads
// never go out of bounds.
func openSafetensors(path string) (*safetensorsFile, error) {
	if _, err := statInput(path); err != nil { // before the open, which waits on a named pipe
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, err := parseSafetensorsHeader(f, fi.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	st.f = f
	return st, nil
}

// parseSafetensorsHeader reads the header of the fileSize-byte safetensors
// file r (named path in messages) and returns its tensors, each checked to
// lie inside the data section and to share no bytes with another.
func parseSafetensorsHeader(r io.ReaderAt, fileSize int64, path string) (*safetensorsFile, error) {
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("safetensors %s: reading header length: file of %d bytes is too short", path, fileSize)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > maxHeaderBytes {
		return nil, fmt.Errorf("safetensors %s: header length %d exceeds the %d-byte limit", path, hlen, maxHeaderBytes)
	}
	if int64(hlen) > fileSize-8 {
		return nil, fmt.Errorf("safetensors %s: header length %d runs past the end of the %d-byte file (truncated?)", path, hlen, fileSize)
	}
	hdr := make([]byte, hlen)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("safetensors %s: reading header: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := decodeJSON(hdr, &raw); err != nil {
		return nil, fmt.Errorf("safetensors %s: header is not a JSON object: %w", path, err)
	}
	if raw == nil { // null decodes to a nil map without an error
		return nil, fmt.Errorf("safetensors %s: header is null, not a JSON object", path)
	}
	if dup := duplicateKey(hdr); dup != "" { // a map keeps only the last
		return nil, fmt.Errorf("safetensors %s: header names tensor %q twice", path, dup)
	}
	dataStart := int64(8 + hlen)
	dataLen := fileSize - dataStart
	st := &safetensorsFile{path: path}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			DType       string  `json:"dtype"`
			Shape       []int64 `json:"shape"`
			DataOffsets []int64 `json:"data_offsets"`
		}
		if err := decodeJSON(msg, &e); err != nil {
			return nil, fmt.Errorf("safetensors %s: tensor %q: bad header entry: %w", path, name, err)
		}
		dt := DType(e.DType)
		if dt.size() == 0 {
			return nil, fmt.Errorf("safetensors %s: tensor %q has dtype %q; supported: F32, F16, BF16", path, name, e.DType)
		}
		if len(e.Shape) > maxTensorDims {
			return nil, fmt.Errorf("safetensors %s: tensor %q has %d dims (limit %d)", path, name, len(e.Shape), maxTensorDims)
		}
		if len(e.DataOffsets) != 2 {
			return nil, fmt.Errorf("safetensors %s: tensor %q: data_offsets must have 2 entries, has %d", path, name, len(e.DataOffsets))
		}
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && elems > math.MaxInt64/8/d) {
				return nil, fmt.Errorf("safetensors %s: tensor %q has invalid shape %v", path, name, e.Shape)
			}
			elems *= d
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		want := elems * int64(dt.size())
		if b < 0 || end < b || end-b != want {
			return nil, fmt.Errorf("safetensors %s: tensor %q: data_offsets [%d,%d] do not hold %d bytes for %s%v", path, name, b, end, want, dt, e.Shape)
		}
		if end > dataLen {
			return nil, fmt.Errorf("safetensors %s: tensor %q: data ends at %d but the file has %d data bytes (truncated?)", path, name, end, dataLen)
		}
		st.tensors = append(st.tensors, &TensorMeta{
			Name: name, DType: dt, Shape: e.Shape, File: path,
			Begin: dataStart + b, Size: want,
		})
	}
	// Tensors' bytes may not overlap (the format's rule): one that did would
	// read another's values without a word.
	// Sorted by start, each non-empty tensor must begin at or after the
	// furthest end of those before it (empty ones hold no bytes).
	sort.Slice(st.tensors, func(i, j int) bool { return st.tensors[i].Begin < st.tensors[j].Begin })
	var last *TensorMeta // the non-empty tensor reaching furthest so far
	for _, b := range st.tensors {
		if b.Size == 0 {
			continue
		}
		if last != nil && b.Begin < last.Begin+last.Size {
			return nil, fmt.Errorf("safetensors %s: tensors %q and %q share bytes (data_offsets [%d,%d] and [%d,%d])",
				path, last.Name, b.Name, last.Begin-dataStart, last.Begin-dataStart+last.Size, b.Begin-dataStart, b.Begin-dataStart+b.Size)
		}
		if last == nil || b.Begin+b.Size > last.Begin+last.Size {
			last = b
		}
	}
	// llama.cpp's reader orders each file's tensors by name; so do we, which
	// also makes the output independent of JSON key order.
	sort.Slice(st.tensors, func(i, j int) bool { return st.tensors[i].Name < st.tensors[j].Name })
	return st, nil
}

// duplicateKey returns a key that the JSON object hdr (already decoded
// once, so well formed) holds twice at its top level, or "".
func duplicateKey(hdr []byte) string {
	d := json.NewDecoder(bytes.NewReader(hdr))
	if _, err := d.Token(); err != nil { // {
		return ""
	}
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		key, _ := tok.(string)
		if seen[key] {
			return key
		}
		seen[key] = true
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

// Checkpoint is a Hugging Face checkpoint's weights: one model.safetensors,
// or shards listed by model.safetensors.index.json.
type Checkpoint struct {
	Dir   string
	files []*safetensorsFile
	// Tensors in llama.cpp's iteration order: shard files sorted by name,
	// tensors within a file sorted by name.
	Tensors []*TensorMeta
	byName  map[string]*TensorMeta
	handles map[string]*os.File
}

// OpenCheckpoint opens the safetensors weights in dir. With an index file,
// the set of tensors in the shards must equal the index's weight map.
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	ck := &Checkpoint{Dir: dir, byName: map[string]*TensorMeta{}, handles: map[string]*os.File{}}
	var parts []string
	var weightMap map[string]string
	indexPath := filepath.Join(dir, "model.safetensors.index.json")
	b, err := readJSONFile(indexPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := decodeJSON(b, &idx); err != nil {
			return nil, fmt.Errorf("%s: %w", indexPath, err)
		}
		if len(idx.WeightMap) == 0 {
			return nil, fmt.Errorf("%s: no weight_map", indexPath)
		}
		weightMap = idx.WeightMap
		seen := map[string]bool{}
		for _, p := range weightMap {
			if p != filepath.Base(p) || strings.HasPrefix(p, ".") {
				return nil, fmt.Errorf("%s: shard name %q must be a plain file name in the checkpoint directory", indexPath, p)
			}
			if !seen[p] {
				seen[p] = true
				parts = append(parts, p)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	} else {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, "model") && strings.HasSuffix(n, ".safetensors") {
				parts = append(parts, n)
			}
		}
		if len(parts) == 0 {
			return nil, fmt.Errorf("%s: no model*.safetensors files and no model.safetensors.index.json", dir)
		}
	}
	sort.Strings(parts)
	for _, p := range parts {
		st, err := openSafetensors(filepath.Join(dir, p))
		if err != nil {
			ck.Close()
			return nil, err
		}
		ck.files = append(ck.files, st)
		ck.handles[st.path] = st.f
		for _, t := range st.tensors {
			if prev, dup := ck.byName[t.Name]; dup {
				ck.Close()
				return nil, fmt.Errorf("tensor %q is in both %s and %s", t.Name, prev.File, t.File)
			}
			ck.byName[t.Name] = t
			ck.Tensors = append(ck.Tensors, t)
		}
	}
	if weightMap != nil {
		var missing, extra []string
		for n, p := range weightMap {
			t, ok := ck.byName[n]
			if !ok || filepath.Base(t.File) != p {
				missing = append(missing, n+" (in "+p+")")
			}
		}
		for n := range ck.byName {
			if _, ok := weightMap[n]; !ok {
				extra = append(extra, n)
			}
		}
		if len(missing)+len(extra) > 0 {
			sort.Strings(missing)
			sort.Strings(extra)
			ck.Close()
			return nil, fmt.Errorf("%s: weight map and shards disagree: missing %s; not in the index %s",
				indexPath, short(missing), short(extra))
		}
	}
	return ck, nil
}

func short(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	if len(xs) > 8 {
		return strings.Join(xs[:8], ", ") + fmt.Sprintf(" and %d more", len(xs)-8)
	}
	return strings.Join(xs, ", ")
}

// Close closes the shard files.
func (ck *Checkpoint) Close() error {
	var first error
	for _, st := range ck.files {
		if err := st.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	ck.files = nil
	return first
}

// Tensor returns the metadata of a tensor by its Hugging Face name.
func (ck *Checkpoint) Tensor(name string) (*TensorMeta, bool) {
	t, ok := ck.byName[name]
	return t, ok
}

// decodeInto widens little-endian F32/F16/BF16 bytes into dst.
func decodeInto(dt DType, raw []byte, dst []float32) {
	switch dt {
	case DTypeF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case DTypeBF16:
		for i := range dst {
			dst[i] = gguf.BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case DTypeF16:
		for i := range dst {
			dst[i] = gguf.F16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	}
}

// roundF16 rounds x to the nearest half (ties to even) and widens it back:
// llama.cpp applies its transforms to F16 sources in half precision.
func roundF16(x float32) float32 {
	return gguf.F16ToF32(gguf.F32ToF16(x))
}

// decodeJSON is json.Unmarshal whose type errors name JSON's kinds and the
// field, not the Go type it was decoding into ("cannot unmarshal string into
// Go value of type struct { DType string ... }" means nothing to a user).
func decodeJSON(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "an integer"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	}
	if te.Field != "" {
		return fmt.Errorf("field %q is a JSON %s, want %s", te.Field, te.Value, want)
	}
	return fmt.Errorf("a JSON %s where %s belongs", te.Value, want)
}
