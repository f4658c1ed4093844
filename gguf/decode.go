package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// maxArrayDepth bounds arrays of arrays: each level costs only 12 bytes of
// input, so without a bound a small hostile file could recurse very deep.
const maxArrayDepth = 8

// decoder reads GGUF's little-endian encoding from an in-memory image (the
// mmap or a caller's slice), checking every length against what is left
// before allocating anything.
type decoder struct {
	b   []byte
	off int
	// ctx names what is being read (`key "x"`, `tensor "w"`); it prefixes
	// errors, so labels stay constant and nothing is formatted unless
	// something fails.
	ctx string
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

func (d *decoder) errf(at int, format string, args ...any) error {
	if d.ctx != "" {
		return fmt.Errorf("offset %d: %s: %s", at, d.ctx, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("offset %d: %s", at, fmt.Sprintf(format, args...))
}

func (d *decoder) need(n int, what string) error {
	if n < 0 || n > d.remaining() {
		return d.errf(d.off, "%s needs %d bytes, only %d left in the file", what, n, d.remaining())
	}
	return nil
}

func (d *decoder) u8(what string) (uint8, error) {
	if err := d.need(1, what); err != nil {
		return 0, err
	}
	x := d.b[d.off]
	d.off++
	return x, nil
}

func (d *decoder) u16(what string) (uint16, error) {
	if err := d.need(2, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint16(d.b[d.off:])
	d.off += 2
	return x, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return x, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return x, nil
}

// count reads a uint64 element count and checks that count elements of at
// least minSize bytes each fit in the rest of the file.
func (d *decoder) count(what string, minSize int) (int, error) {
	at := d.off
	n, err := d.u64(what)
	if err != nil {
		return 0, err
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(d.remaining()/minSize) {
		return 0, d.errf(at, "%s %d is impossible: %d bytes left hold at most %d", what, n, d.remaining(), d.remaining()/minSize)
	}
	return int(n), nil
}

// strBytes reads a length-prefixed string and returns its bytes (aliasing
// the image).
func (d *decoder) strBytes(what string) ([]byte, error) {
	at := d.off
	n, err := d.u64(what + " length")
	if err != nil {
		return nil, err
	}
	if n > uint64(d.remaining()) {
		return nil, d.errf(at, "%s length %d exceeds the %d bytes left", what, n, d.remaining())
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s, nil
}

func (d *decoder) str(what string) (string, error) {
	b, err := d.strBytes(what)
	return string(b), err
}

// value reads a value of type t. key names the entry for errors.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		x, err := d.u8("value")
		if err != nil {
			return Value{}, err
		}
		v := Value{typ: t, ok: true, num: uint64(x)}
		if t == ValueInt8 {
			v.num = uint64(int64(int8(x)))
		}
		return v, nil
	case ValueUint16, ValueInt16:
		x, err := d.u16("value")
		if err != nil {
			return Value{}, err
		}
		v := Value{typ: t, ok: true, num: uint64(x)}
		if t == ValueInt16 {
			v.num = uint64(int64(int16(x)))
		}
		return v, nil
	case ValueUint32, ValueInt32, ValueFloat32:
		x, err := d.u32("value")
		if err != nil {
			return Value{}, err
		}
		v := Value{typ: t, ok: true, num: uint64(x)}
		if t == ValueInt32 {
			v.num = uint64(int64(int32(x)))
		}
		return v, nil
	case ValueUint64, ValueInt64, ValueFloat64:
		x, err := d.u64("value")
		if err != nil {
			return Value{}, err
		}
		return Value{typ: t, ok: true, num: x}, nil
	case ValueString:
		s, err := d.str("string")
		if err != nil {
			return Value{}, err
		}
		return StringValue(s), nil
	case ValueArray:
		return d.array(depth)
	}
	return Value{}, d.errf(d.off-4, "unknown value type %d", uint32(t))
}

func (d *decoder) array(depth int) (Value, error) {
	if depth >= maxArrayDepth {
		return Value{}, d.errf(d.off, "arrays nested deeper than %d", maxArrayDepth)
	}
	at := d.off
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.valid() {
		return Value{}, d.errf(at, "unknown array element type %d", et)
	}
	minSize := valueTypeSize[elem]
	switch elem {
	case ValueString:
		minSize = 8
	case ValueArray:
		minSize = 12
	}
	n, err := d.count("array count", minSize)
	if err != nil {
		return Value{}, err
	}
	start := d.off
	switch elem {
	case ValueUint8:
		return arrayOf(elem, fixed(d, n, func(b []byte) uint8 { return b[0] })), nil
	case ValueInt8:
		return arrayOf(elem, fixed(d, n, func(b []byte) int8 { return int8(b[0]) })), nil
	case ValueBool:
		return arrayOf(elem, fixed(d, n, func(b []byte) bool { return b[0] != 0 })), nil
	case ValueUint16:
		return arrayOf(elem, fixed(d, n, binary.LittleEndian.Uint16)), nil
	case ValueInt16:
		return arrayOf(elem, fixed(d, n, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) })), nil
	case ValueUint32:
		return arrayOf(elem, fixed(d, n, binary.LittleEndian.Uint32)), nil
	case ValueInt32:
		return arrayOf(elem, fixed(d, n, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })), nil
	case ValueFloat32:
		return arrayOf(elem, fixed(d, n, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })), nil
	case ValueUint64:
		return arrayOf(elem, fixed(d, n, binary.LittleEndian.Uint64)), nil
	case ValueInt64:
		return arrayOf(elem, fixed(d, n, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })), nil
	case ValueFloat64:
		return arrayOf(elem, fixed(d, n, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })), nil
	case ValueString:
		// Two passes: validate every length, then copy the whole region
		// once into one Go string and hand out substrings of it, so a
		// 150k-entry vocabulary costs two allocations, not 150k.
		for i := range n {
			if d.remaining() < 8 {
				return Value{}, d.errf(d.off, "element %d length needs 8 bytes, only %d left", i, d.remaining())
			}
			l := binary.LittleEndian.Uint64(d.b[d.off:])
			if l > uint64(d.remaining()-8) {
				return Value{}, d.errf(d.off, "element %d length %d exceeds the %d bytes left", i, l, d.remaining()-8)
			}
			d.off += 8 + int(l)
		}
		region := string(d.b[start:d.off])
		out := make([]string, n)
		p := 0
		for i := range out {
			l := int(binary.LittleEndian.Uint64(d.b[start+p:]))
			out[i] = region[p+8 : p+8+l]
			p += 8 + l
		}
		return arrayOf(elem, out), nil
	case ValueArray:
		out := make([]Value, n)
		for i := range out {
			v, err := d.array(depth + 1)
			if err != nil {
				return Value{}, err
			}
			out[i] = v
		}
		return arrayOf(elem, out), nil
	}
	return Value{}, d.errf(at, "unknown array element type %d", et)
}

// fixed decodes n fixed-size elements; the caller has checked they fit.
func fixed[T any](d *decoder, n int, conv func([]byte) T) []T {
	var zero T
	size := sizeOf(zero)
	out := make([]T, n)
	b := d.b[d.off : d.off+n*size]
	for i := range out {
		out[i] = conv(b[i*size:])
	}
	d.off += n * size
	return out
}

func sizeOf(x any) int {
	switch x.(type) {
	case uint8, int8, bool:
		return 1
	case uint16, int16:
		return 2
	case uint32, int32, float32:
		return 4
	}
	return 8
}
