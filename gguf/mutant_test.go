package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestDataOffsetIsNextAlignment: the data section starts at the first
// multiple of the alignment at or after the header's end, as the GGUF
// format (and llama.cpp) puts it, for every residue of the header's length
// including an already-aligned one. The header's length is counted here by
// hand from the format (no KVs, one 2-D tensor named by L bytes): 4 magic
// + 4 version + 8 tensor count + 8 KV count, then 8 + L name, 4 n_dims,
// 2×8 shape, 4 type, 8 offset: 64 + L. The reader and the writer share
// alignUp, so a round trip alone cannot see an off-by-one in it.
func TestDataOffsetIsNextAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for L := 1; L <= DefaultAlignment+8; L++ { // every residue; names are at most MaxTensorName (63) bytes
		data := make([]byte, 4*4)
		for i := 0; i < 4; i++ {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(r.NormFloat64())+0.5))
		}
		var buf bytes.Buffer
		w := NewWriter(&buf, 3)
		name := strings.Repeat("t", L)
		w.AddTensorBytes(name, TypeF32, []uint64{2, 2}, data)
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("name of %d bytes: %v", L, err)
		}
		header := int64(64 + L)
		if want := (header + DefaultAlignment - 1) / DefaultAlignment * DefaultAlignment; f.DataOffset != want {
			t.Fatalf("header of %d bytes: data section at %d, want %d", header, f.DataOffset, want)
		}
		if got := buf.Bytes()[f.DataOffset : f.DataOffset+16]; !bytes.Equal(got, data) {
			t.Fatalf("header of %d bytes: the data section does not start with the tensor", header)
		}
	}
}

// TestFourDimTensorRoundTrip: 4 dims is GGUF's most (GGML_MAX_DIMS) and is
// allowed, by the writer and the reader alike; 5 is refused.
func TestFourDimTensorRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	shape := []uint64{3, 2, 2, 2}
	data := make([]byte, 4*24)
	for i := 0; i < 24; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(r.NormFloat64())+0.5))
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, 3)
	w.AddTensorBytes("conv.weight", TypeF32, shape, data)
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.TensorData("conv.weight")
	if err != nil || !bytes.Equal(got, data) || !slices.Equal(f.Tensors[0].Shape, shape) {
		t.Fatalf("4-D tensor: shape %v, data equal %v, err %v", f.Tensors[0].Shape, bytes.Equal(got, data), err)
	}
	buf.Reset()
	w = NewWriter(&buf, 3)
	w.AddTensorBytes("five", TypeF32, []uint64{3, 2, 2, 2, 1}, data)
	if err := w.Write(); err == nil {
		t.Error("a 5-D tensor was written")
	}
}

// TestWriterRefusesZeroAlignment: general.alignment 0 (a uint32, so only
// the zero test stands between it and a division by zero in Write) is an
// error, as are 3 and a uint64.
func TestWriterRefusesZeroAlignment(t *testing.T) {
	for _, v := range []Value{Uint32Value(0), Uint32Value(3), Uint64Value(32)} {
		var buf bytes.Buffer
		w := NewWriter(&buf, 3)
		w.SetKV("general.alignment", v)
		w.AddTensorBytes("x", TypeF32, []uint64{1}, []byte{0, 0, 0x80, 0x3f})
		if err := w.Write(); err == nil || !strings.Contains(err.Error(), "general.alignment") {
			t.Errorf("general.alignment %s %v: err %v", v.TypeName(), v, err)
		}
	}
}

// TestValueSignedAndBool: Uint64 refuses a negative value of every signed
// width and takes a non-negative one, 0 included; Any gives a bool as itself.
func TestValueSignedAndBool(t *testing.T) {
	for _, v := range []Value{Int8Value(-3), Int16Value(-300), Int32Value(-70000), Int64Value(-1 << 40)} {
		if x, ok := v.Uint64(); ok {
			t.Errorf("%s %v: Uint64 = %d, ok", v.TypeName(), v, x)
		}
	}
	for _, v := range []Value{Int8Value(3), Int16Value(300), Int32Value(70000), Int64Value(1 << 40), Uint32Value(7)} {
		if x, ok := v.Uint64(); !ok || x == 0 {
			t.Errorf("%s %v: Uint64 = %d, %v", v.TypeName(), v, x, ok)
		}
	}
	if x, ok := Int32Value(0).Uint64(); !ok || x != 0 {
		t.Errorf("int32 0: Uint64 = %d, %v", x, ok)
	}
	for _, b := range []bool{true, false} {
		if got := BoolValue(b).Any(); got != b {
			t.Errorf("BoolValue(%v).Any() = %v", b, got)
		}
	}
}

// TestValueTypeOnePastLast: a KV whose type is the first number past the
// last value type (13) is refused, not read.
func TestValueTypeOnePastLast(t *testing.T) {
	var b []byte
	b = append(b, "GGUF"...)
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 0) // tensors
	b = binary.LittleEndian.AppendUint64(b, 1) // KVs
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = append(b, 'a')
	b = binary.LittleEndian.AppendUint32(b, uint32(numValueTypes))
	b = append(b, make([]byte, 32)...)
	if _, err := Parse(b); err == nil {
		t.Errorf("value type %d accepted", numValueTypes)
	}
	if s := ValueType(numValueTypes).String(); !strings.Contains(s, "13") {
		t.Errorf("ValueType(13).String() = %q", s)
	}
}
