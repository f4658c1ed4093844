package gguf

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// magic is the first four bytes of every GGUF file.
const magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// minTensorInfoSize is the smallest encoded tensor info: name length (8),
// n_dims (4), type (4), offset (8), with an empty name and no dims.
const minTensorInfoSize = 24

// MaxTensorName is the longest tensor name in bytes: ggml keeps names in a
// 64-byte buffer (GGML_MAX_NAME) with a NUL, and llama.cpp refuses files
// with longer ones, so the reader refuses them and the Writer never writes
// them.
const MaxTensorName = 63

// File is an open GGUF file: its header, metadata and tensor infos, parsed
// eagerly, and its tensor data, mapped but never read until asked for.
type File struct {
	// Version is the GGUF version, 2 or 3 (identical layouts for
	// little-endian files).
	Version uint32
	// KVs holds every metadata entry in file order.
	KVs []KV
	// Tensors holds every tensor info in file order.
	Tensors []TensorInfo
	// Alignment is general.alignment, or DefaultAlignment.
	Alignment uint64
	// DataOffset is the file offset of the data section; tensor offsets are
	// relative to it.
	DataOffset int64
	// Size is the file size in bytes.
	Size int64

	name    string // path for messages
	data    []byte // the whole file image
	unmap   func() error
	kvIndex map[string]int
	tensIdx map[string]int
	arch    string
}

// TensorInfo describes one tensor: where its data lies and how to read it.
type TensorInfo struct {
	// Name is the GGUF tensor name, e.g. "blk.0.attn_q.weight".
	Name string
	// Type is the element storage type.
	Type Type
	// Shape is in ggml ne order: Shape[0] is the contiguous (row) length.
	Shape []uint64
	// Offset is the byte offset of the data from File.DataOffset.
	Offset uint64
}

// Elements returns the number of elements (the product of Shape; 1 for no
// dims), or 0 if it overflows.
func (t *TensorInfo) Elements() uint64 {
	n, _, err := tensorBytes(t.Type, t.Shape)
	if err != nil {
		return 0
	}
	return n
}

// Bytes returns the size of the tensor's data, or 0 for a type or shape that
// is not valid.
func (t *TensorInfo) Bytes() uint64 {
	_, b, err := tensorBytes(t.Type, t.Shape)
	if err != nil {
		return 0
	}
	return b
}

// Open maps the file at path read-only and parses its header, metadata and
// tensor infos. Tensor data is not read: TensorData returns slices of the
// mapping, valid until Close.
func Open(path string) (*File, error) {
	// Stat before opening: opening a named pipe would wait for a writer.
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("gguf: %s is a directory, not a GGUF file", path)
	} else if err == nil && !st.Mode().IsRegular() { // the file is mapped, so it must be one on disk
		return nil, fmt.Errorf("gguf: %s is not a regular file (GGUF files are memory-mapped): save it to a file first", path)
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if st.Size() < 8 {
		return nil, fmt.Errorf("gguf: %s: file is %d bytes, too short for a GGUF header", path, st.Size())
	}
	data, unmap, err := mapFile(fd, st.Size())
	if err != nil {
		return nil, fmt.Errorf("gguf: map %s: %w", path, err)
	}
	f, err := parse(data, path)
	if err != nil {
		_ = unmap()
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// Parse parses a GGUF image held in memory. The File keeps data (tensor data
// slices alias it), so data must not change while the File is used. Close is
// a no-op for parsed files.
func Parse(data []byte) (*File, error) {
	return parse(data, "")
}

// Close releases the mapping. Slices from TensorData become invalid: do not
// touch them afterwards.
func (f *File) Close() error {
	f.data = nil
	if f.unmap == nil {
		return nil
	}
	u := f.unmap
	f.unmap = nil
	if err := u(); err != nil {
		return fmt.Errorf("gguf: unmap %s: %w", f.name, err)
	}
	return nil
}

func parse(data []byte, name string) (*File, error) {
	f, err := parseImage(data)
	if err != nil {
		if name != "" {
			return nil, fmt.Errorf("gguf: %s: %w", name, err)
		}
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f.name = name
	return f, nil
}

func parseImage(data []byte) (*File, error) {
	d := &decoder{b: data}
	if len(data) < 8 {
		return nil, fmt.Errorf("%d bytes is too short for a GGUF header", len(data))
	}
	if string(data[:4]) != magic {
		return nil, fmt.Errorf("bad magic %q, want %q (not a GGUF file)", data[:4], magic)
	}
	d.off = 4
	version, _ := d.u32("version")
	switch {
	case version == 2 || version == 3:
	case version == 0:
		return nil, errors.New("GGUF version 0 is invalid (the version field is zero)")
	case version == 1:
		return nil, errors.New("GGUF v1 is not supported (32-bit counts); convert the file to v3")
	case version&0xffff == 0 && binary.BigEndian.Uint32(data[4:8]) <= 3:
		// A big-endian file's small version reads little-endian as
		// N<<24; llama.cpp uses the same test (low 16 bits zero).
		return nil, fmt.Errorf("big-endian GGUF (version bytes % x) is not supported", data[4:8])
	default:
		return nil, fmt.Errorf("unsupported GGUF version %d (want 2 or 3)", version)
	}
	f := &File{Version: version, Alignment: DefaultAlignment, data: data, Size: int64(len(data))}

	at := d.off
	nt, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nkv, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// Each KV takes at least key length (8) + a 1-byte key (empty keys are
	// refused) + type (4) + 1 byte value.
	const minKVSize = 14
	if nkv > uint64(d.remaining()/minKVSize) {
		return nil, d.errf(at+8, "metadata count %d is impossible: %d bytes left hold at most %d", nkv, d.remaining(), d.remaining()/minKVSize)
	}
	if nt > uint64(d.remaining()/minTensorInfoSize) {
		return nil, d.errf(at, "tensor count %d is impossible: %d bytes left hold at most %d tensor infos", nt, d.remaining(), d.remaining()/minTensorInfoSize)
	}

	f.KVs = make([]KV, 0, nkv)
	f.kvIndex = make(map[string]int, nkv)
	for i := range int(nkv) {
		kat := d.off
		d.ctx = fmt.Sprintf("metadata entry %d", i)
		key, err := d.str("key")
		if err != nil {
			return nil, err
		}
		d.ctx = fmt.Sprintf("key %q", key)
		if key == "" { // llama.cpp refuses these too
			return nil, d.errf(kat, "empty metadata key")
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, d.errf(kat, "duplicate metadata key")
		}
		t, err := d.u32("type")
		if err != nil {
			return nil, err
		}
		v, err := d.value(ValueType(t), 0)
		if err != nil {
			return nil, err
		}
		if key == "general.alignment" {
			a, isU32 := v.Any().(uint32)
			if !isU32 {
				return nil, d.errf(kat, "is %s, want uint32", v.TypeName())
			}
			if a == 0 || a&(a-1) != 0 {
				return nil, d.errf(kat, "alignment %d is not a power of two", a)
			}
			f.Alignment = uint64(a)
		}
		f.kvIndex[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{Key: key, Value: v})
	}
	d.ctx = ""
	if v, ok := f.Lookup("general.architecture"); ok {
		f.arch, _ = v.Str()
	}

	if nt > uint64(d.remaining()/minTensorInfoSize) {
		return nil, d.errf(d.off, "tensor count %d is impossible: %d bytes left hold at most %d tensor infos", nt, d.remaining(), d.remaining()/minTensorInfoSize)
	}
	f.Tensors = make([]TensorInfo, nt)
	f.tensIdx = make(map[string]int, nt)
	offsets := make([]int, nt) // where each info starts, for errors
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		offsets[i] = d.off
		d.ctx = fmt.Sprintf("tensor %d", i)
		name, err := d.str("name")
		if err != nil {
			return nil, err
		}
		d.ctx = fmt.Sprintf("tensor %q", name)
		if len(name) > MaxTensorName {
			return nil, d.errf(offsets[i], "name is %d bytes, at most %d allowed", len(name), MaxTensorName)
		}
		if _, dup := f.tensIdx[name]; dup {
			return nil, d.errf(offsets[i], "duplicate tensor name")
		}
		ti.Name = name
		dat := d.off
		nd, err := d.u32("n_dims")
		if err != nil {
			return nil, err
		}
		if nd > 4 {
			return nil, d.errf(dat, "%d dims, at most 4 allowed", nd)
		}
		if err := d.need(int(nd)*8+12, "info"); err != nil {
			return nil, err
		}
		ti.Shape = make([]uint64, nd)
		for j := range ti.Shape {
			ti.Shape[j], _ = d.u64("")
		}
		t, _ := d.u32("")
		ti.Type = Type(t)
		ti.Offset, _ = d.u64("")
		f.tensIdx[name] = i
	}
	d.ctx = ""

	// The data section starts at the next multiple of the alignment. A file
	// with no tensors may end before it.
	ds := alignUp(uint64(d.off), f.Alignment)
	if len(f.Tensors) > 0 && ds > uint64(len(data)) {
		return nil, d.errf(d.off, "data section at %d lies beyond the end of the file (%d bytes)", ds, len(data))
	}
	f.DataOffset = int64(min(ds, uint64(len(data))))
	avail := uint64(len(data)) - uint64(f.DataOffset)
	spans := make([]span, 0, len(f.Tensors)) // non-empty data ranges, for the overlap check
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		d.ctx = fmt.Sprintf("tensor %q", ti.Name)
		if !ti.Type.Valid() {
			what := "unknown"
			if ti.Type.Removed() {
				what = "removed"
			}
			return nil, d.errf(offsets[i], "%s type %v", what, ti.Type)
		}
		_, nb, err := tensorBytes(ti.Type, ti.Shape)
		if err != nil {
			return nil, d.errf(offsets[i], "%v", err)
		}
		if ti.Offset%f.Alignment != 0 {
			return nil, d.errf(offsets[i], "data offset %d is not a multiple of the alignment %d", ti.Offset, f.Alignment)
		}
		if ti.Offset > avail || nb > avail-ti.Offset {
			return nil, d.errf(offsets[i], "data [%d, +%d) runs past the end of the data section (%d bytes at file offset %d)", ti.Offset, nb, avail, f.DataOffset)
		}
		if nb > 0 {
			spans = append(spans, span{ti.Offset, ti.Offset + nb, i})
		}
	}
	// Tensors sharing bytes are a broken (or crafted) file: a weight would
	// be read as another's. Gaps between tensors are allowed. Sorted by
	// start, the ranges are disjoint iff each starts at or past the end of
	// the one before it.
	slices.SortFunc(spans, func(a, b span) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.i, b.i)) })
	for k := 1; k < len(spans); k++ {
		prev, cur := spans[k-1], spans[k]
		if cur.start < prev.end {
			d.ctx = fmt.Sprintf("tensor %q", f.Tensors[cur.i].Name)
			return nil, d.errf(offsets[cur.i], "data [%d, +%d) overlaps the data [%d, +%d) of tensor %q",
				cur.start, cur.end-cur.start, prev.start, prev.end-prev.start, f.Tensors[prev.i].Name)
		}
	}
	return f, nil
}

// span is the byte range [start, end) of tensor i in the data section.
type span struct {
	start, end uint64
	i          int
}

func alignUp(x, a uint64) uint64 {
	return (x + a - 1) / a * a
}

// Name returns the path the file was opened from ("" for Parse).
func (f *File) Name() string { return f.name }

// Closed reports whether Close has been called (or f holds no image): the
// slices TensorData returned are then invalid, and reading those of a
// mapped file ends the process with a fault no recover catches.
func (f *File) Closed() bool { return f.data == nil }

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensIdx[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the named tensor's bytes: a zero-copy, read-only slice
// of the mapping, valid until Close. Writing to it faults.
func (f *File) TensorData(name string) ([]byte, error) {
	ti, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: %s: no tensor %q", f.name, name)
	}
	return f.Data(ti)
}

// Data returns the bytes of ti, which must come from f.Tensors.
func (f *File) Data(ti *TensorInfo) ([]byte, error) {
	if f.data == nil {
		return nil, fmt.Errorf("gguf: %s: tensor %q: file is closed", f.name, ti.Name)
	}
	_, nb, err := tensorBytes(ti.Type, ti.Shape)
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", f.name, ti.Name, err)
	}
	start := uint64(f.DataOffset) + ti.Offset
	if ti.Offset > uint64(len(f.data)) || start > uint64(len(f.data)) || nb > uint64(len(f.data))-start {
		return nil, fmt.Errorf("gguf: %s: tensor %q: data out of range", f.name, ti.Name)
	}
	end := start + nb
	return f.data[start:end:end], nil
}

// Arch returns general.architecture ("" when absent).
func (f *File) Arch() string { return f.arch }

// FullKey returns the metadata key the getters use for key: keys starting
// with "general.", "tokenizer." or the architecture name plus "." are used
// as is; other keys get the "<arch>." prefix (when the file names one).
func (f *File) FullKey(key string) string {
	if f.arch == "" || strings.HasPrefix(key, "general.") || strings.HasPrefix(key, "tokenizer.") ||
		strings.HasPrefix(key, f.arch+".") {
		return key
	}
	return f.arch + "." + key
}

// Lookup returns the value of the exact key, without adding a prefix.
func (f *File) Lookup(fullKey string) (Value, bool) {
	i, ok := f.kvIndex[fullKey]
	if !ok {
		return Value{}, false
	}
	return f.KVs[i].Value, true
}

// Value returns the value of key (prefixed as FullKey says).
func (f *File) Value(key string) (Value, bool) { return f.Lookup(f.FullKey(key)) }

// Has reports whether key (prefixed as FullKey says) is present.
func (f *File) Has(key string) bool {
	_, ok := f.kvIndex[f.FullKey(key)]
	return ok
}
