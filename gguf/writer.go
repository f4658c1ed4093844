package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Writer builds a GGUF file: metadata and tensor infos first, then tensor
// data streamed from callbacks at Write time, so no tensor is held in
// memory. Output is deterministic: keys and tensors are written in the
// order they were set/added. Errors from SetKV and AddTensor are kept and
// returned by Write, naming the key or tensor. Make one with NewWriter: the
// zero Writer has no output, and Write says so.
type Writer struct {
	out     io.Writer
	version uint32
	kvs     []KV
	kvIdx   map[string]int
	tensors []wtensor
	tIdx    map[string]bool
	err     error
}

type wtensor struct {
	name   string
	typ    Type
	shape  []uint64
	nbytes uint64
	write  func(io.Writer) error
}

// NewWriter returns a Writer producing a GGUF file of the given version
// (2 or 3; the little-endian layouts are identical) on out.
func NewWriter(out io.Writer, version uint32) *Writer {
	w := &Writer{out: out, version: version, kvIdx: map[string]int{}, tIdx: map[string]bool{}}
	if out == nil {
		w.err = errNoOutput
	} else if version != 2 && version != 3 {
		w.err = fmt.Errorf("gguf: writer: version %d not supported (want 2 or 3)", version)
	}
	return w
}

// errNoOutput is the error of a Writer with nothing to write to: NewWriter
// given a nil io.Writer, or a zero Writer.
var errNoOutput = errors.New("gguf: writer: no output (make a Writer with NewWriter and a non-nil io.Writer)")

// usable reports whether w came from NewWriter, recording errNoOutput when
// not: a zero Writer's maps are nil.
func (w *Writer) usable() bool {
	if w.kvIdx == nil {
		w.fail(errNoOutput)
		return false
	}
	return true
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// SetKV sets a metadata entry. Setting a key again replaces its value in
// place (the first position is kept). Keys are stored exactly as given and
// must not be empty (llama.cpp refuses a file with an empty key).
// general.alignment, if set, must be a uint32 power of two and is applied
// to the data layout. Arrays of arrays are valid GGUF, but llama.cpp's
// reader refuses them.
func (w *Writer) SetKV(key string, v Value) {
	if !w.usable() {
		return
	}
	if key == "" {
		w.fail(errors.New("gguf: writer: empty metadata key"))
		return
	}
	if err := checkValue(v, 0); err != nil {
		w.fail(fmt.Errorf("gguf: writer: key %q: %w", key, err))
		return
	}
	if key == "general.alignment" {
		a, ok := v.Any().(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			w.fail(fmt.Errorf("gguf: writer: general.alignment must be a uint32 power of two, got %s %v", v.TypeName(), v))
			return
		}
	}
	if i, ok := w.kvIdx[key]; ok {
		w.kvs[i].Value = v
		return
	}
	w.kvIdx[key] = len(w.kvs)
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
}

// AddTensor declares a tensor of type typ and ggml shape (ne order,
// shape[0] contiguous, at most 4 dims); name is at most MaxTensorName
// bytes. At Write time, write is called once and must write exactly the
// tensor's byte size (RowBytes of the row times the other dims); Write
// fails naming the tensor otherwise.
func (w *Writer) AddTensor(name string, typ Type, shape []uint64, write func(io.Writer) error) {
	if !w.usable() {
		return
	}
	if w.tIdx[name] {
		w.fail(fmt.Errorf("gguf: writer: duplicate tensor %q", name))
		return
	}
	if len(name) > MaxTensorName {
		w.fail(fmt.Errorf("gguf: writer: tensor %q: name is %d bytes, at most %d allowed (llama.cpp refuses longer names)", name, len(name), MaxTensorName))
		return
	}
	if len(shape) > 4 {
		w.fail(fmt.Errorf("gguf: writer: tensor %q has %d dims, at most 4 allowed", name, len(shape)))
		return
	}
	_, nb, err := tensorBytes(typ, shape)
	if err != nil {
		w.fail(fmt.Errorf("gguf: writer: tensor %q: %w", name, err))
		return
	}
	if write == nil {
		w.fail(fmt.Errorf("gguf: writer: tensor %q: nil data callback", name))
		return
	}
	w.tIdx[name] = true
	w.tensors = append(w.tensors, wtensor{name: name, typ: typ, shape: append([]uint64(nil), shape...), nbytes: nb, write: write})
}

// AddTensorReader declares a tensor whose data is read from r at Write
// time; r must yield exactly the tensor's byte size.
func (w *Writer) AddTensorReader(name string, typ Type, shape []uint64, r io.Reader) {
	w.AddTensor(name, typ, shape, func(dst io.Writer) error {
		_, err := io.Copy(dst, r)
		return err
	})
}

// AddTensorBytes declares a tensor whose data is b (kept, not copied).
func (w *Writer) AddTensorBytes(name string, typ Type, shape []uint64, b []byte) {
	w.AddTensor(name, typ, shape, func(dst io.Writer) error {
		_, err := dst.Write(b)
		return err
	})
}

func (w *Writer) alignment() uint64 {
	if i, ok := w.kvIdx["general.alignment"]; ok {
		if a, ok := w.kvs[i].Value.Any().(uint32); ok {
			return uint64(a)
		}
	}
	return DefaultAlignment
}

// Reserver is an output that can claim the room for a file before its
// first byte: a file on a disk too small for it then fails at once, not
// minutes into a long write. Write calls Reserve with the whole file's size
// when the io.Writer given to NewWriter is a Reserver.
type Reserver interface {
	Reserve(size int64) error
}

// Write writes the whole file. It may be called once.
func (w *Writer) Write() error {
	if w.out == nil {
		w.fail(errNoOutput)
	}
	if w.err != nil {
		return w.err
	}
	w.err = errors.New("gguf: writer: Write called twice")
	align := w.alignment()
	if r, ok := w.out.(Reserver); ok {
		dry := &encoder{w: io.Discard} // counts the header's bytes, padding included
		if err := w.header(dry, align); err != nil {
			return err
		}
		size := dry.n
		for _, t := range w.tensors {
			size = alignUp(size+t.nbytes, align)
		}
		if size > math.MaxInt64 {
			return fmt.Errorf("gguf: writer: the file would be %d bytes", size)
		}
		if err := r.Reserve(int64(size)); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(w.out, 1<<20)
	e := &encoder{w: bw}
	if err := w.header(e, align); err != nil {
		return err
	}
	for _, t := range w.tensors {
		cw := &countWriter{w: bw, limit: t.nbytes, name: t.name}
		if err := t.write(cw); err != nil {
			return fmt.Errorf("gguf: writer: tensor %q: %w", t.name, err)
		}
		if cw.n != t.nbytes {
			return fmt.Errorf("gguf: writer: tensor %q: callback wrote %d bytes, want %d (%v %v)", t.name, cw.n, t.nbytes, t.typ, t.shape)
		}
		e.n += cw.n
		e.pad(align)
		if e.err != nil {
			return fmt.Errorf("gguf: writer: tensor %q: %w", t.name, e.err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gguf: writer: %w", err)
	}
	return nil
}

// header encodes the metadata and tensor infos, and the padding up to the
// data when there are tensors.
func (w *Writer) header(e *encoder, align uint64) error {
	e.raw([]byte(magic))
	e.u32(w.version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	var off uint64
	for _, t := range w.tensors {
		e.str(t.name)
		e.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(off)
		off = alignUp(off+t.nbytes, align)
	}
	if e.err != nil {
		return fmt.Errorf("gguf: writer: header: %w", e.err)
	}
	if len(w.tensors) > 0 {
		e.pad(align)
	}
	return e.err
}

// countWriter counts bytes and refuses to write past the declared size, so
// an oversized callback cannot corrupt the next tensor's data.
type countWriter struct {
	w     io.Writer
	n     uint64
	limit uint64
	name  string
}

func (c *countWriter) Write(p []byte) (int, error) {
	if uint64(len(p)) > c.limit-c.n {
		return 0, fmt.Errorf("callback wrote more than the %d bytes of tensor %q", c.limit, c.name)
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// encoder writes GGUF's little-endian encoding, keeping the first error.
type encoder struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.n += uint64(n)
	e.err = err
}

func (e *encoder) u8(x uint8) { e.buf[0] = x; e.raw(e.buf[:1]) }
func (e *encoder) u16(x uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], x)
	e.raw(e.buf[:2])
}
func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], x)
	e.raw(e.buf[:4])
}
func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.raw(e.buf[:8])
}
func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		n, err := io.WriteString(e.w, s)
		e.n += uint64(n)
		e.err = err
	}
}

var zeros [256]byte

func (e *encoder) pad(align uint64) {
	p := alignUp(e.n, align) - e.n
	for p > 0 && e.err == nil {
		k := min(p, uint64(len(zeros)))
		e.raw(zeros[:k])
		p -= k
	}
}

// value writes v's payload (the type tag is written by the caller).
func (e *encoder) value(v Value) {
	switch v.typ {
	case ValueUint8, ValueInt8, ValueBool:
		e.u8(uint8(v.num))
	case ValueUint16, ValueInt16:
		e.u16(uint16(v.num))
	case ValueUint32, ValueInt32, ValueFloat32:
		e.u32(uint32(v.num))
	case ValueUint64, ValueInt64, ValueFloat64:
		e.u64(v.num)
	case ValueString:
		e.str(v.str)
	case ValueArray:
		e.u32(uint32(v.elem))
		e.u64(uint64(v.Len()))
		switch s := v.arr.(type) {
		case []uint8:
			e.raw(s)
		case []int8:
			for _, x := range s {
				e.u8(uint8(x))
			}
		case []bool:
			for _, x := range s {
				if x {
					e.u8(1)
				} else {
					e.u8(0)
				}
			}
		case []uint16:
			for _, x := range s {
				e.u16(x)
			}
		case []int16:
			for _, x := range s {
				e.u16(uint16(x))
			}
		case []uint32:
			for _, x := range s {
				e.u32(x)
			}
		case []int32:
			for _, x := range s {
				e.u32(uint32(x))
			}
		case []float32:
			for _, x := range s {
				e.u32(math.Float32bits(x))
			}
		case []uint64:
			for _, x := range s {
				e.u64(x)
			}
		case []int64:
			for _, x := range s {
				e.u64(uint64(x))
			}
		case []float64:
			for _, x := range s {
				e.u64(math.Float64bits(x))
			}
		case []string:
			for _, x := range s {
				e.str(x)
			}
		case []Value:
			for _, x := range s {
				e.value(x)
			}
		}
	}
}

// checkValue verifies v can be encoded: made by a constructor, arrays hold
// elements of the declared type, nesting within maxArrayDepth.
func checkValue(v Value, depth int) error {
	if !v.ok {
		return errors.New("zero Value (use a constructor such as Uint32Value)")
	}
	if !v.typ.valid() {
		return fmt.Errorf("unknown value type %d", uint32(v.typ))
	}
	if v.typ != ValueArray {
		return nil
	}
	if depth >= maxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", maxArrayDepth)
	}
	vs, nested := v.arr.([]Value)
	if !nested {
		if got := sliceElemType(v.arr); got != v.elem {
			return fmt.Errorf("array of %s holds %T", v.elem, v.arr)
		}
		return nil
	}
	for i, x := range vs {
		if !x.ok || x.typ != v.elem {
			return fmt.Errorf("array of %s: element %d is %s", v.elem, i, x.TypeName())
		}
		if err := checkValue(x, depth+1); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// sliceElemType maps a typed slice to its GGUF element type.
func sliceElemType(a any) ValueType {
	switch a.(type) {
	case []uint8:
		return ValueUint8
	case []int8:
		return ValueInt8
	case []uint16:
		return ValueUint16
	case []int16:
		return ValueInt16
	case []uint32:
		return ValueUint32
	case []int32:
		return ValueInt32
	case []uint64:
		return ValueUint64
	case []int64:
		return ValueInt64
	case []float32:
		return ValueFloat32
	case []float64:
		return ValueFloat64
	case []bool:
		return ValueBool
	case []string:
		return ValueString
	}
	return numValueTypes
}
