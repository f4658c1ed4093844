package gguf

import (
	"errors"
	"fmt"
	"math"
)

// Typed getters. Each resolves its key with FullKey and returns an error
// naming the full key when it is missing (errors.Is(err, ErrKeyNotFound)) or
// has a type the getter does not accept.
//
// Widening accepted:
//   - integer getters (Uint32, Int32, Uint64, Int64) read any integer type
//     whose value fits the result (a uint32 getter takes uint8, uint16, or a
//     non-negative int32; a negative int32 or a uint64 above 2^32-1 is an
//     error); never floats or bools.
//   - Float32 and Float64 read float32 or float64 (float64 is rounded to
//     the nearest float32); never integers.
//   - Int32s and Uint32s read arrays of any integer type whose elements all
//     fit; Float32s reads float32 or float64 arrays.
//   - String, Bool and Strings take only their own type.

// ErrKeyNotFound is matched (errors.Is) by getter errors for absent keys.
var ErrKeyNotFound = errors.New("gguf: key not found")

// KeyError is a getter failure: the key is absent, has another type, or
// holds a value out of range of the result.
type KeyError struct {
	Key     string // full key, with the architecture prefix
	Missing bool
	Msg     string // e.g. "is string, want uint32"
}

// Error formats as `gguf: key "qwen35.block_count" is string, want uint32`.
func (e *KeyError) Error() string {
	if e.Missing {
		return fmt.Sprintf("gguf: key %q not found", e.Key)
	}
	return fmt.Sprintf("gguf: key %q %s", e.Key, e.Msg)
}

// Is makes errors.Is(err, ErrKeyNotFound) true for missing keys.
func (e *KeyError) Is(target error) bool { return e.Missing && target == ErrKeyNotFound }

func (f *File) get(key string) (Value, string, error) {
	k := f.FullKey(key)
	v, ok := f.Lookup(k)
	if !ok {
		return Value{}, k, &KeyError{Key: k, Missing: true}
	}
	return v, k, nil
}

func wrongType(k string, v Value, want string) error {
	return &KeyError{Key: k, Msg: fmt.Sprintf("is %s, want %s", v.TypeName(), want)}
}

func (f *File) intIn(key, want string, lo int64, hi uint64) (uint64, error) {
	v, k, err := f.get(key)
	if err != nil {
		return 0, err
	}
	if !v.isInteger() {
		return 0, wrongType(k, v, want)
	}
	if v.isSigned() {
		x := int64(v.num)
		if x < lo || (x >= 0 && uint64(x) > hi) {
			return 0, &KeyError{Key: k, Msg: fmt.Sprintf("is %s %d, out of range for %s", v.typ, x, want)}
		}
		return v.num, nil
	}
	if v.num > hi {
		return 0, &KeyError{Key: k, Msg: fmt.Sprintf("is %s %d, out of range for %s", v.typ, v.num, want)}
	}
	return v.num, nil
}

// Uint32 returns an integer key as uint32 (see the widening rules above).
func (f *File) Uint32(key string) (uint32, error) {
	x, err := f.intIn(key, "uint32", 0, math.MaxUint32)
	return uint32(x), err
}

// Int32 returns an integer key as int32.
func (f *File) Int32(key string) (int32, error) {
	x, err := f.intIn(key, "int32", math.MinInt32, math.MaxInt32)
	return int32(x), err
}

// Uint64 returns an integer key as uint64.
func (f *File) Uint64(key string) (uint64, error) {
	return f.intIn(key, "uint64", 0, math.MaxUint64)
}

// Int64 returns an integer key as int64.
func (f *File) Int64(key string) (int64, error) {
	x, err := f.intIn(key, "int64", math.MinInt64, math.MaxInt64)
	return int64(x), err
}

// Float32 returns a float key as float32.
func (f *File) Float32(key string) (float32, error) {
	x, err := f.float(key, "float32")
	return float32(x), err
}

// Float64 returns a float key as float64.
func (f *File) Float64(key string) (float64, error) {
	return f.float(key, "float64")
}

func (f *File) float(key, want string) (float64, error) {
	v, k, err := f.get(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.Float64()
	if !ok {
		return 0, wrongType(k, v, want)
	}
	return x, nil
}

// String returns a string key.
func (f *File) String(key string) (string, error) {
	v, k, err := f.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.Str()
	if !ok {
		return "", wrongType(k, v, "string")
	}
	return s, nil
}

// Bool returns a bool key.
func (f *File) Bool(key string) (bool, error) {
	v, k, err := f.get(key)
	if err != nil {
		return false, err
	}
	b, ok := v.Bool()
	if !ok {
		return false, wrongType(k, v, "bool")
	}
	return b, nil
}

// Strings returns a string-array key. The slice is shared with the File:
// do not modify it.
func (f *File) Strings(key string) ([]string, error) {
	v, k, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.arr.([]string)
	if v.typ != ValueArray || !ok {
		return nil, wrongType(k, v, "[]string")
	}
	return s, nil
}

// Int32s returns an integer-array key as []int32. An int32 array is
// returned shared (do not modify it); other integer arrays are converted
// when every element fits.
func (f *File) Int32s(key string) ([]int32, error) {
	v, k, err := f.get(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.arr.([]int32); ok {
		return s, nil
	}
	return convertInts[int32](k, v, "[]int32", math.MinInt32, math.MaxInt32)
}

// Uint32s returns an integer-array key as []uint32, shared when the file
// holds uint32 and converted when every element of another integer type
// fits.
func (f *File) Uint32s(key string) ([]uint32, error) {
	v, k, err := f.get(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.arr.([]uint32); ok {
		return s, nil
	}
	return convertInts[uint32](k, v, "[]uint32", 0, math.MaxUint32)
}

// Float32s returns a float-array key as []float32, shared for float32
// arrays, converted (rounded) for float64 arrays.
func (f *File) Float32s(key string) ([]float32, error) {
	v, k, err := f.get(key)
	if err != nil {
		return nil, err
	}
	switch s := v.arr.(type) {
	case []float32:
		return s, nil
	case []float64:
		out := make([]float32, len(s))
		for i, x := range s {
			out[i] = float32(x)
		}
		return out, nil
	}
	return nil, wrongType(k, v, "[]float32")
}

func convertInts[T int32 | uint32](k string, v Value, want string, lo int64, hi uint64) ([]T, error) {
	if v.typ != ValueArray {
		return nil, wrongType(k, v, want)
	}
	switch v.elem {
	case ValueUint8, ValueInt8, ValueUint16, ValueInt16, ValueUint32, ValueInt32, ValueUint64, ValueInt64:
	default:
		return nil, wrongType(k, v, want)
	}
	n := v.Len()
	out := make([]T, n)
	for i := range out {
		e := v.Index(i)
		if e.isSigned() {
			x := int64(e.num)
			if x < lo || (x >= 0 && uint64(x) > hi) {
				return nil, &KeyError{Key: k, Msg: fmt.Sprintf("element %d is %s %d, out of range for %s", i, e.typ, x, want)}
			}
		} else if e.num > hi {
			return nil, &KeyError{Key: k, Msg: fmt.Sprintf("element %d is %s %d, out of range for %s", i, e.typ, e.num, want)}
		}
		out[i] = T(int64(e.num))
	}
	return out, nil
}
