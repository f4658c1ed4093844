package gguf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ValueType is the type tag of a GGUF metadata value (gguf_type).
type ValueType uint32

// GGUF metadata value types, numbered as in the file format.
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12

	numValueTypes = 13
)

var valueTypeNames = [numValueTypes]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// valueTypeSize is the encoded size of a scalar of each type (0 for string
// and array, whose size depends on the content).
var valueTypeSize = [numValueTypes]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// String returns the GGUF name of the type ("uint32", "string", ...).
func (t ValueType) String() string {
	if t < numValueTypes {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

func (t ValueType) valid() bool { return t < numValueTypes }

// KV is one metadata entry, in file order.
type KV struct {
	Key   string
	Value Value
}

// Value is one GGUF metadata value: a scalar, a string, or an array whose
// elements all share one type (arrays may nest). The zero Value is invalid
// (Type reports uint8 but Valid is false); make values with the *Value
// constructors or read them from a File.
//
// Scalars live in num (integers sign- or zero-extended, floats as IEEE bits),
// strings in str, arrays in arr as a typed Go slice ([]uint8 ... []float64,
// []bool, []string) or []Value for nested arrays.
type Value struct {
	typ  ValueType
	elem ValueType // element type for arrays
	ok   bool
	num  uint64
	str  string
	arr  any
}

// Scalar constructors.

// Uint8Value makes a uint8 value.
func Uint8Value(x uint8) Value { return Value{typ: ValueUint8, ok: true, num: uint64(x)} }

// Int8Value makes an int8 value.
func Int8Value(x int8) Value { return Value{typ: ValueInt8, ok: true, num: uint64(int64(x))} }

// Uint16Value makes a uint16 value.
func Uint16Value(x uint16) Value { return Value{typ: ValueUint16, ok: true, num: uint64(x)} }

// Int16Value makes an int16 value.
func Int16Value(x int16) Value { return Value{typ: ValueInt16, ok: true, num: uint64(int64(x))} }

// Uint32Value makes a uint32 value.
func Uint32Value(x uint32) Value { return Value{typ: ValueUint32, ok: true, num: uint64(x)} }

// Int32Value makes an int32 value.
func Int32Value(x int32) Value { return Value{typ: ValueInt32, ok: true, num: uint64(int64(x))} }

// Uint64Value makes a uint64 value.
func Uint64Value(x uint64) Value { return Value{typ: ValueUint64, ok: true, num: x} }

// Int64Value makes an int64 value.
func Int64Value(x int64) Value { return Value{typ: ValueInt64, ok: true, num: uint64(x)} }

// Float32Value makes a float32 value.
func Float32Value(x float32) Value {
	return Value{typ: ValueFloat32, ok: true, num: uint64(math.Float32bits(x))}
}

// Float64Value makes a float64 value.
func Float64Value(x float64) Value {
	return Value{typ: ValueFloat64, ok: true, num: math.Float64bits(x)}
}

// BoolValue makes a bool value.
func BoolValue(x bool) Value {
	v := Value{typ: ValueBool, ok: true}
	if x {
		v.num = 1
	}
	return v
}

// StringValue makes a string value.
func StringValue(s string) Value { return Value{typ: ValueString, ok: true, str: s} }

// Array constructors. The slice is kept, not copied: do not modify it after.

func arrayOf(elem ValueType, xs any) Value {
	return Value{typ: ValueArray, elem: elem, ok: true, arr: xs}
}

// Uint8sValue makes an array of uint8.
func Uint8sValue(xs []uint8) Value { return arrayOf(ValueUint8, xs) }

// Int8sValue makes an array of int8.
func Int8sValue(xs []int8) Value { return arrayOf(ValueInt8, xs) }

// Uint16sValue makes an array of uint16.
func Uint16sValue(xs []uint16) Value { return arrayOf(ValueUint16, xs) }

// Int16sValue makes an array of int16.
func Int16sValue(xs []int16) Value { return arrayOf(ValueInt16, xs) }

// Uint32sValue makes an array of uint32.
func Uint32sValue(xs []uint32) Value { return arrayOf(ValueUint32, xs) }

// Int32sValue makes an array of int32 (e.g. tokenizer.ggml.token_type).
func Int32sValue(xs []int32) Value { return arrayOf(ValueInt32, xs) }

// Uint64sValue makes an array of uint64.
func Uint64sValue(xs []uint64) Value { return arrayOf(ValueUint64, xs) }

// Int64sValue makes an array of int64.
func Int64sValue(xs []int64) Value { return arrayOf(ValueInt64, xs) }

// Float32sValue makes an array of float32 (e.g. tokenizer.ggml.scores).
func Float32sValue(xs []float32) Value { return arrayOf(ValueFloat32, xs) }

// Float64sValue makes an array of float64.
func Float64sValue(xs []float64) Value { return arrayOf(ValueFloat64, xs) }

// BoolsValue makes an array of bool.
func BoolsValue(xs []bool) Value { return arrayOf(ValueBool, xs) }

// StringsValue makes an array of strings (e.g. tokenizer.ggml.tokens).
func StringsValue(xs []string) Value { return arrayOf(ValueString, xs) }

// ArrayValue makes an array of elem-typed values, the general form needed for
// arrays of arrays. Every element must have type elem; the Writer reports a
// mismatch. Scalar elements are packed into the typed slice form.
func ArrayValue(elem ValueType, vals ...Value) Value {
	if elem != ValueArray {
		if packed, ok := packScalars(elem, vals); ok {
			return arrayOf(elem, packed)
		}
	}
	cp := append([]Value(nil), vals...)
	return arrayOf(elem, cp)
}

// packScalars converts vals (all of type elem) to the typed slice form.
func packScalars(elem ValueType, vals []Value) (any, bool) {
	for _, v := range vals {
		if !v.ok || v.typ != elem {
			return nil, false
		}
	}
	switch elem {
	case ValueUint8:
		return packNum(vals, func(u uint64) uint8 { return uint8(u) }), true
	case ValueInt8:
		return packNum(vals, func(u uint64) int8 { return int8(u) }), true
	case ValueUint16:
		return packNum(vals, func(u uint64) uint16 { return uint16(u) }), true
	case ValueInt16:
		return packNum(vals, func(u uint64) int16 { return int16(u) }), true
	case ValueUint32:
		return packNum(vals, func(u uint64) uint32 { return uint32(u) }), true
	case ValueInt32:
		return packNum(vals, func(u uint64) int32 { return int32(u) }), true
	case ValueUint64:
		return packNum(vals, func(u uint64) uint64 { return u }), true
	case ValueInt64:
		return packNum(vals, func(u uint64) int64 { return int64(u) }), true
	case ValueFloat32:
		return packNum(vals, func(u uint64) float32 { return math.Float32frombits(uint32(u)) }), true
	case ValueFloat64:
		return packNum(vals, math.Float64frombits), true
	case ValueBool:
		return packNum(vals, func(u uint64) bool { return u != 0 }), true
	case ValueString:
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = v.str
		}
		return out, true
	}
	return nil, false
}

func packNum[T any](vals []Value, conv func(uint64) T) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = conv(v.num)
	}
	return out
}

// Valid reports whether v was made by a constructor or read from a file.
func (v Value) Valid() bool { return v.ok }

// Type returns the value's type tag.
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array (meaningless otherwise).
func (v Value) ElemType() ValueType { return v.elem }

// TypeName describes the type for messages: "uint32", "[]string",
// "[][]int32" (for nested arrays the inner type is taken from the first
// element).
func (v Value) TypeName() string {
	if v.typ != ValueArray {
		return v.typ.String()
	}
	if v.elem == ValueArray {
		if vs, ok := v.arr.([]Value); ok && len(vs) > 0 {
			return "[]" + vs[0].TypeName()
		}
		return "[][]?"
	}
	return "[]" + v.elem.String()
}

// Len returns the number of elements of an array, the byte length of a
// string, and 0 otherwise.
func (v Value) Len() int {
	switch v.typ {
	case ValueString:
		return len(v.str)
	case ValueArray:
		return sliceLen(v.arr)
	}
	return 0
}

func sliceLen(a any) int {
	switch s := a.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []Value:
		return len(s)
	}
	return 0
}

// Index returns element i of an array as a Value. It panics like a slice
// index when i is out of range or v is not an array.
func (v Value) Index(i int) Value {
	switch s := v.arr.(type) {
	case []uint8:
		return Uint8Value(s[i])
	case []int8:
		return Int8Value(s[i])
	case []uint16:
		return Uint16Value(s[i])
	case []int16:
		return Int16Value(s[i])
	case []uint32:
		return Uint32Value(s[i])
	case []int32:
		return Int32Value(s[i])
	case []uint64:
		return Uint64Value(s[i])
	case []int64:
		return Int64Value(s[i])
	case []float32:
		return Float32Value(s[i])
	case []float64:
		return Float64Value(s[i])
	case []bool:
		return BoolValue(s[i])
	case []string:
		return StringValue(s[i])
	case []Value:
		return s[i]
	}
	panic(fmt.Sprintf("gguf: Index on %s value", v.typ))
}

// Any returns the value as a plain Go value: uint8 ... float64, bool,
// string, a typed slice ([]int32, []string, ...) or []Value for arrays of
// arrays. Slices are shared, not copied.
func (v Value) Any() any {
	switch v.typ {
	case ValueUint8:
		return uint8(v.num)
	case ValueInt8:
		return int8(v.num)
	case ValueUint16:
		return uint16(v.num)
	case ValueInt16:
		return int16(v.num)
	case ValueUint32:
		return uint32(v.num)
	case ValueInt32:
		return int32(v.num)
	case ValueUint64:
		return v.num
	case ValueInt64:
		return int64(v.num)
	case ValueFloat32:
		return math.Float32frombits(uint32(v.num))
	case ValueFloat64:
		return math.Float64frombits(v.num)
	case ValueBool:
		return v.num != 0
	case ValueString:
		return v.str
	case ValueArray:
		return v.arr
	}
	return nil
}

func (v Value) isSigned() bool {
	return v.typ == ValueInt8 || v.typ == ValueInt16 || v.typ == ValueInt32 || v.typ == ValueInt64
}

func (v Value) isInteger() bool {
	switch v.typ {
	case ValueUint8, ValueInt8, ValueUint16, ValueInt16, ValueUint32, ValueInt32, ValueUint64, ValueInt64:
		return true
	}
	return false
}

// Int64 returns an integer value of any width as int64. ok is false for
// non-integers and for uint64 values above math.MaxInt64.
func (v Value) Int64() (x int64, ok bool) {
	if !v.isInteger() {
		return 0, false
	}
	if !v.isSigned() && v.num > math.MaxInt64 {
		return 0, false
	}
	return int64(v.num), true
}

// Uint64 returns an integer value of any width as uint64. ok is false for
// non-integers and negative values.
func (v Value) Uint64() (x uint64, ok bool) {
	if !v.isInteger() {
		return 0, false
	}
	if v.isSigned() && int64(v.num) < 0 {
		return 0, false
	}
	return v.num, true
}

// Float64 returns a float32 or float64 value as float64.
func (v Value) Float64() (x float64, ok bool) {
	switch v.typ {
	case ValueFloat32:
		return float64(math.Float32frombits(uint32(v.num))), true
	case ValueFloat64:
		return math.Float64frombits(v.num), true
	}
	return 0, false
}

// Str returns a string value.
func (v Value) Str() (s string, ok bool) {
	return v.str, v.typ == ValueString && v.ok
}

// Bool returns a bool value.
func (v Value) Bool() (b bool, ok bool) {
	return v.num != 0, v.typ == ValueBool && v.ok
}

// String renders the value for people: strings quoted, arrays longer than
// eight elements summarised as `[151936 strings: "!", "\"", "#", ...]`.
func (v Value) String() string {
	var b strings.Builder
	v.format(&b, 8)
	return b.String()
}

// Format renders the value like String but shows at most maxElems elements
// of each array (all of them when maxElems < 0).
func (v Value) Format(maxElems int) string {
	var b strings.Builder
	v.format(&b, maxElems)
	return b.String()
}

func (v Value) format(b *strings.Builder, maxElems int) {
	switch v.typ {
	case ValueString:
		b.WriteString(strconv.Quote(v.str))
	case ValueFloat32:
		b.WriteString(strconv.FormatFloat(float64(math.Float32frombits(uint32(v.num))), 'g', -1, 32))
	case ValueFloat64:
		b.WriteString(strconv.FormatFloat(math.Float64frombits(v.num), 'g', -1, 64))
	case ValueArray:
		n := v.Len()
		show := n
		if maxElems >= 0 && n > maxElems {
			show = min(3, maxElems)
			fmt.Fprintf(b, "[%d %ss: ", n, v.elemNoun())
		} else {
			b.WriteByte('[')
		}
		for i := range show {
			if i > 0 {
				b.WriteString(", ")
			}
			v.Index(i).format(b, maxElems)
		}
		if show < n {
			b.WriteString(", ...")
		}
		b.WriteByte(']')
	default:
		fmt.Fprint(b, v.Any())
	}
}

func (v Value) elemNoun() string {
	if v.elem == ValueArray {
		return "array"
	}
	return v.elem.String()
}
