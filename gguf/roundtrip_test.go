package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// allValues has one entry per value type, arrays of each element type, and
// arrays of arrays (two levels, mixed inner element types).
func allValues() []KV {
	return []KV{
		{"general.architecture", StringValue("qwen35")},
		{"t.u8", Uint8Value(200)},
		{"t.i8", Int8Value(-100)},
		{"t.u16", Uint16Value(60000)},
		{"t.i16", Int16Value(-30000)},
		{"t.u32", Uint32Value(4000000000)},
		{"t.i32", Int32Value(-2000000000)},
		{"t.f32", Float32Value(-1.5e-7)},
		{"t.bool", BoolValue(true)},
		{"t.boolf", BoolValue(false)},
		{"t.str", StringValue("héllo\x00world")},
		{"t.empty", StringValue("")},
		{"t.u64", Uint64Value(math.MaxUint64 - 3)},
		{"t.i64", Int64Value(math.MinInt64 + 5)},
		{"t.f64", Float64Value(math.Pi)},
		{"a.u8", Uint8sValue([]uint8{1, 2, 255})},
		{"a.i8", Int8sValue([]int8{-128, 0, 127})},
		{"a.u16", Uint16sValue([]uint16{0, 65535})},
		{"a.i16", Int16sValue([]int16{-32768, 7})},
		{"a.u32", Uint32sValue([]uint32{1, 1 << 31})},
		{"a.i32", Int32sValue([]int32{-1, 2, -3})},
		{"a.f32", Float32sValue([]float32{0.25, float32(math.Inf(-1))})},
		{"a.bool", BoolsValue([]bool{true, false, true})},
		{"a.str", StringsValue([]string{"!", "\"", "", "Ġthe"})},
		{"a.u64", Uint64sValue([]uint64{math.MaxUint64})},
		{"a.i64", Int64sValue([]int64{math.MinInt64, 9})},
		{"a.f64", Float64sValue([]float64{-0.0, 1e300})},
		{"a.emptystr", StringsValue([]string{})},
		{"a.nested", ArrayValue(ValueArray,
			Int32sValue([]int32{1, -2}),
			StringsValue([]string{"x"}),
			ArrayValue(ValueArray, Uint8sValue([]uint8{9})),
			ArrayValue(ValueFloat64),
		)},
		{"a.packed", ArrayValue(ValueUint16, Uint16Value(3), Uint16Value(4))},
	}
}

func TestRoundTripMetadata(t *testing.T) {
	kvs := allValues()
	for _, version := range []uint32{2, 3} {
		var buf bytes.Buffer
		w := NewWriter(&buf, version)
		for _, kv := range kvs {
			w.SetKV(kv.Key, kv.Value)
		}
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if f.Version != version {
			t.Errorf("version %d, want %d", f.Version, version)
		}
		if len(f.KVs) != len(kvs) {
			t.Fatalf("%d KVs, want %d", len(f.KVs), len(kvs))
		}
		for i, kv := range kvs {
			got := f.KVs[i]
			if got.Key != kv.Key {
				t.Errorf("KV %d key %q, want %q", i, got.Key, kv.Key)
			}
			if !sameValue(got.Value, kv.Value) {
				t.Errorf("key %q: got %s %v, want %s %v", kv.Key, got.Value.TypeName(), got.Value.Format(-1), kv.Value.TypeName(), kv.Value.Format(-1))
			}
		}
	}
}

// sameValue compares values structurally, floats by bits (so -0 and NaN
// payloads count).
func sameValue(a, b Value) bool {
	if a.Type() != b.Type() || a.Valid() != b.Valid() {
		return false
	}
	if a.Type() != ValueArray {
		return a.num == b.num && a.str == b.str
	}
	if a.ElemType() != b.ElemType() || a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !sameValue(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

// TestRoundTripTensors writes one tensor of every valid type with random
// data and checks types, shapes, offsets, alignment and bytes, from memory
// and from an mmap-ed file.
func TestRoundTripTensors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type tdata struct {
		name  string
		typ   Type
		shape []uint64
		data  []byte
	}
	var ts []tdata
	for id := range Type(NumTypes) {
		if !id.Valid() {
			continue
		}
		bs := uint64(id.BlockSize())
		shape := []uint64{bs * uint64(1+r.IntN(3)), uint64(1 + r.IntN(3))}
		if id%3 == 0 {
			shape = append(shape, 2)
		}
		_, nb, err := tensorBytes(id, shape)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tdata{"blk.0." + strings.ToLower(id.String()), id, shape, randBytes(r, int(nb))})
	}
	for _, align := range []uint32{0, 64, 1} {
		img := build(t, func(w *Writer) {
			w.SetKV("general.architecture", StringValue("test"))
			if align != 0 {
				w.SetKV("general.alignment", Uint32Value(align))
			}
			for _, td := range ts {
				w.AddTensorReader(td.name, td.typ, td.shape, bytes.NewReader(td.data))
			}
		})
		path := filepath.Join(t.TempDir(), "m.gguf")
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		fm, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := Parse(img)
		if err != nil {
			t.Fatal(err)
		}
		wantAlign := uint64(DefaultAlignment)
		if align != 0 {
			wantAlign = uint64(align)
		}
		for _, f := range []*File{fm, fp} {
			if f.Alignment != wantAlign || f.DataOffset%int64(wantAlign) != 0 {
				t.Errorf("alignment %d, data offset %d; want alignment %d", f.Alignment, f.DataOffset, wantAlign)
			}
			if len(f.Tensors) != len(ts) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(ts))
			}
			for i, td := range ts {
				ti := f.Tensors[i]
				if ti.Name != td.name || ti.Type != td.typ || !reflect.DeepEqual(ti.Shape, td.shape) {
					t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ti.Name, ti.Type, ti.Shape, td.name, td.typ, td.shape)
				}
				if ti.Offset%wantAlign != 0 {
					t.Errorf("tensor %s offset %d not aligned to %d", ti.Name, ti.Offset, wantAlign)
				}
				got, err := f.TensorData(td.name)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, td.data) {
					t.Errorf("tensor %s (%v): data differs", td.name, td.typ)
				}
			}
		}
		if err := fm.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := fm.TensorData(ts[0].name); err == nil {
			t.Error("TensorData after Close succeeded")
		}
	}
}

func TestWriterDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := randBytes(r, 34*4)
	mk := func() []byte {
		return build(t, func(w *Writer) {
			for _, kv := range allValues() {
				w.SetKV(kv.Key, kv.Value)
			}
			w.AddTensorBytes("a", TypeQ8_0, []uint64{64, 2}, data)
			w.AddTensorBytes("b", TypeF32, []uint64{3}, data[:12])
		})
	}
	a, b := mk(), mk()
	if !bytes.Equal(a, b) {
		t.Fatal("two writes of the same input differ")
	}
	// Replacing a key keeps its position.
	img := build(t, func(w *Writer) {
		w.SetKV("x", Uint8Value(1))
		w.SetKV("y", Uint8Value(2))
		w.SetKV("x", StringValue("again"))
	})
	f, err := Parse(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.KVs) != 2 || f.KVs[0].Key != "x" || f.KVs[0].Value.String() != `"again"` {
		t.Errorf("KVs %v", f.KVs)
	}
}

// TestWriterLayout checks the exact bytes of a tiny file against the GGUF
// layout worked out by hand.
func TestWriterLayout(t *testing.T) {
	img := build(t, func(w *Writer) {
		w.SetKV("k", Uint16Value(0x0102))
		w.AddTensorBytes("t", TypeF32, []uint64{1}, []byte{1, 2, 3, 4})
	})
	want := []byte{
		'G', 'G', 'U', 'F', 3, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0, // tensor count
		1, 0, 0, 0, 0, 0, 0, 0, // kv count
		1, 0, 0, 0, 0, 0, 0, 0, 'k', // key
		2, 0, 0, 0, // uint16
		2, 1, // value
		1, 0, 0, 0, 0, 0, 0, 0, 't', // tensor name
		1, 0, 0, 0, // n_dims
		1, 0, 0, 0, 0, 0, 0, 0, // ne0
		0, 0, 0, 0, // F32
		0, 0, 0, 0, 0, 0, 0, 0, // offset
	}
	// 24 + 15 (kv: 8+1+4+2) + 33 (info: 8+1+4+8+4+8) = 72 bytes of
	// header; the data section starts at 96, the next multiple of 32.
	want = append(want, make([]byte, 24)...)
	want = append(want, 1, 2, 3, 4)
	want = append(want, make([]byte, 28)...) // pad to 32
	if !bytes.Equal(img, want) {
		t.Fatalf("file bytes\n got %v\nwant %v", img, want)
	}
}

func TestWriterErrors(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *Writer)
		want  string
	}{
		{"short callback", func(w *Writer) {
			w.AddTensor("blk.0.w", TypeF32, []uint64{4}, func(o io.Writer) error { _, err := o.Write(make([]byte, 15)); return err })
		}, `tensor "blk.0.w": callback wrote 15 bytes, want 16`},
		{"long callback", func(w *Writer) {
			w.AddTensor("blk.1.w", TypeF32, []uint64{4}, func(o io.Writer) error { _, err := o.Write(make([]byte, 17)); return err })
		}, `more than the 16 bytes of tensor "blk.1.w"`},
		{"bad row", func(w *Writer) { w.AddTensorBytes("q", TypeQ8_0, []uint64{31}, nil) },
			`tensor "q": row length 31 is not a multiple of the Q8_0 block size 32`},
		{"removed type", func(w *Writer) { w.AddTensorBytes("r", TypeQ4_2, []uint64{32}, nil) }, `tensor "r": unsupported tensor type Q4_2`},
		{"dup tensor", func(w *Writer) {
			w.AddTensorBytes("d", TypeI8, []uint64{1}, []byte{1})
			w.AddTensorBytes("d", TypeI8, []uint64{1}, []byte{1})
		}, `duplicate tensor "d"`},
		{"long name", func(w *Writer) {
			w.AddTensorBytes(strings.Repeat("x", MaxTensorName+1), TypeI8, []uint64{1}, []byte{1})
		},
			`name is 64 bytes, at most 63 allowed (llama.cpp refuses longer names)`},
		{"5 dims", func(w *Writer) { w.AddTensorBytes("x", TypeI8, []uint64{1, 1, 1, 1, 1}, []byte{1}) }, `tensor "x" has 5 dims`},
		{"empty key", func(w *Writer) { w.SetKV("", Uint8Value(1)) }, `empty metadata key`},
		{"zero value", func(w *Writer) { w.SetKV("z", Value{}) }, `key "z": zero Value`},
		{"mixed array", func(w *Writer) { w.SetKV("m", ArrayValue(ValueInt32, Int32Value(1), StringValue("a"))) },
			`key "m": array of int32: element 1 is string`},
		{"alignment", func(w *Writer) { w.SetKV("general.alignment", Uint32Value(48)) }, `general.alignment must be a uint32 power of two`},
		{"alignment type", func(w *Writer) { w.SetKV("general.alignment", Uint64Value(64)) }, `general.alignment must be a uint32`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := NewWriter(io.Discard, 3)
			c.setup(w)
			err := w.Write()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if err := NewWriter(io.Discard, 1).Write(); err == nil {
		t.Error("writer accepted version 1")
	}
	// A Writer with nowhere to write is an error from Write, not a nil
	// pointer or nil map panic in the caller: NewWriter given nil, and the
	// zero Writer (its SetKV and AddTensor too).
	noOut := func(name string, f func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic %v", name, r)
			}
		}()
		if err := f(); err == nil || !strings.Contains(err.Error(), "no output") {
			t.Errorf("%s: error %v, want one saying no output", name, err)
		}
	}
	noOut("NewWriter(nil)", func() error {
		w := NewWriter(nil, 3)
		w.SetKV("a", Uint8Value(1))
		return w.Write()
	})
	noOut("zero Writer", func() error {
		var w Writer
		w.SetKV("a", Uint8Value(1))
		w.AddTensorBytes("t", TypeI8, []uint64{1}, []byte{1})
		return w.Write()
	})
	noOut("zero Writer, Write alone", func() error { var w Writer; return w.Write() })
}

func TestGetters(t *testing.T) {
	img := build(t, func(w *Writer) {
		w.SetKV("general.architecture", StringValue("qwen35"))
		w.SetKV("general.name", StringValue("tiny"))
		w.SetKV("qwen35.block_count", Uint32Value(24))
		w.SetKV("qwen35.small", Uint8Value(7))
		w.SetKV("qwen35.neg", Int32Value(-1))
		w.SetKV("qwen35.big", Uint64Value(1<<40))
		w.SetKV("qwen35.name", StringValue("x"))
		w.SetKV("qwen35.eps", Float32Value(1e-6))
		w.SetKV("qwen35.eps64", Float64Value(0.5))
		w.SetKV("qwen35.flag", BoolValue(true))
		w.SetKV("qwen35.layers", Uint8sValue([]uint8{1, 0, 1}))
		w.SetKV("qwen35.negs", Int64sValue([]int64{-1, 5}))
		w.SetKV("tokenizer.ggml.tokens", StringsValue([]string{"a", "b"}))
		w.SetKV("tokenizer.ggml.token_type", Int32sValue([]int32{1, 3}))
		w.SetKV("tokenizer.ggml.scores", Float32sValue([]float32{-1, 2}))
	})
	f, err := Parse(img)
	if err != nil {
		t.Fatal(err)
	}
	if f.Arch() != "qwen35" {
		t.Errorf("Arch %q", f.Arch())
	}
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	u, err := f.Uint32("block_count")
	check("block_count", u, uint32(24), err)
	u, err = f.Uint32("qwen35.block_count") // already prefixed
	check("qwen35.block_count", u, uint32(24), err)
	u, err = f.Uint32("small") // uint8 widens
	check("small", u, uint32(7), err)
	i32, err := f.Int32("neg")
	check("neg", i32, int32(-1), err)
	u64, err := f.Uint64("block_count")
	check("u64", u64, uint64(24), err)
	i64, err := f.Int64("big")
	check("i64", i64, int64(1<<40), err)
	fl, err := f.Float32("eps")
	check("eps", fl, float32(1e-6), err)
	fl, err = f.Float32("eps64")
	check("eps64", fl, float32(0.5), err)
	s, err := f.String("general.name")
	check("general.name", s, "tiny", err)
	b, err := f.Bool("flag")
	check("flag", b, true, err)
	ss, err := f.Strings("tokenizer.ggml.tokens")
	check("tokens", ss, []string{"a", "b"}, err)
	is, err := f.Int32s("tokenizer.ggml.token_type")
	check("token_type", is, []int32{1, 3}, err)
	is, err = f.Int32s("layers")
	check("layers", is, []int32{1, 0, 1}, err)
	us, err := f.Uint32s("layers")
	check("layers u32", us, []uint32{1, 0, 1}, err)
	fs, err := f.Float32s("tokenizer.ggml.scores")
	check("scores", fs, []float32{-1, 2}, err)
	if !f.Has("block_count") || f.Has("nope") {
		t.Error("Has")
	}

	errCases := []struct {
		err  error
		want string
	}{
		{second(f.Uint32("name")), `gguf: key "qwen35.name" is string, want uint32`},
		{second(f.Uint32("missing")), `gguf: key "qwen35.missing" not found`},
		{second(f.Uint32("neg")), `gguf: key "qwen35.neg" is int32 -1, out of range for uint32`},
		{second(f.Uint32("big")), `gguf: key "qwen35.big" is uint64 1099511627776, out of range for uint32`},
		{second(f.Float32("block_count")), `gguf: key "qwen35.block_count" is uint32, want float32`},
		{second(f.String("block_count")), `gguf: key "qwen35.block_count" is uint32, want string`},
		{second(f.Bool("small")), `gguf: key "qwen35.small" is uint8, want bool`},
		{second(f.Strings("layers")), `gguf: key "qwen35.layers" is []uint8, want []string`},
		{second(f.Uint32s("negs")), `gguf: key "qwen35.negs" element 0 is int64 -1, out of range for []uint32`},
		{second(f.Int32s("tokenizer.ggml.tokens")), `gguf: key "tokenizer.ggml.tokens" is []string, want []int32`},
		{second(f.Float32s("general.name")), `gguf: key "general.name" is string, want []float32`},
	}
	for _, c := range errCases {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("error %v, want %q", c.err, c.want)
		}
	}
	if _, err := f.Uint32("missing"); !isNotFound(err) {
		t.Errorf("missing key error %v does not match ErrKeyNotFound", err)
	}
	if _, err := f.Uint32("name"); isNotFound(err) {
		t.Errorf("wrong-type error %v matches ErrKeyNotFound", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestTensorNameLimit: a name of MaxTensorName bytes, the most llama.cpp
// reads, writes and reads back (one byte more fails, TestHostile and
// TestWriterErrors).
func TestTensorNameLimit(t *testing.T) {
	name := strings.Repeat("n", MaxTensorName)
	f, err := Parse(build(t, func(w *Writer) { w.AddTensorBytes(name, TypeI8, []uint64{1}, []byte{7}) }))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := f.TensorData(name); err != nil || len(b) != 1 || b[0] != 7 {
		t.Errorf("tensor data %v, %v; want [7]", b, err)
	}
}

// TestWriterMeetsLlamaCppLayout checks the Writer's output against the
// rules llama.cpp's gguf reader adds to the spec: tensor i's offset is
// exactly the sum of the earlier tensors' sizes, each padded to the
// alignment (not merely aligned); the data section holds the last tensor's
// padding too (gguf.cpp reads that whole padded size); and every padding
// byte is 0x00, as the spec says.
func TestWriterMeetsLlamaCppLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []struct {
		typ   Type
		shape []uint64
	}{{TypeF32, []uint64{3}}, {TypeQ8_0, []uint64{32, 3}}, {TypeI8, []uint64{5}}, {TypeF16, []uint64{0, 4}}, {TypeQ4_K, []uint64{256}}, {TypeBF16, []uint64{7}}}
	for _, align := range []uint32{1, 8, 32, 64} {
		img := build(t, func(w *Writer) {
			w.SetKV("general.alignment", Uint32Value(align))
			w.SetKV("k", StringValue("odd length"))
			for i, s := range shapes {
				_, nb, err := tensorBytes(s.typ, s.shape)
				if err != nil {
					t.Fatal(err)
				}
				w.AddTensorBytes("t"+string(rune('0'+i)), s.typ, s.shape, randBytes(r, int(nb)))
			}
		})
		f, err := Parse(img)
		if err != nil {
			t.Fatal(err)
		}
		a := uint64(align)
		end := uint64(f.DataOffset)
		var want uint64
		for _, ti := range f.Tensors {
			if ti.Offset != want {
				t.Errorf("align %d: tensor %s at offset %d, llama.cpp wants %d", align, ti.Name, ti.Offset, want)
			}
			start := uint64(f.DataOffset) + ti.Offset
			if z := bytes.Trim(img[end:start], "\x00"); len(z) != 0 {
				t.Errorf("align %d: padding before %s holds %v", align, ti.Name, z)
			}
			end = start + ti.Bytes()
			want = alignUp(want+ti.Bytes(), a)
		}
		if uint64(len(img)) != uint64(f.DataOffset)+want {
			t.Errorf("align %d: file is %d bytes, want the data section's %d padded bytes after %d", align, len(img), want, f.DataOffset)
		}
		if z := bytes.Trim(img[end:], "\x00"); len(z) != 0 {
			t.Errorf("align %d: final padding holds %v", align, z)
		}
	}
}

// reserveBuffer is an output that records what Reserve was told, and may
// refuse it.
type reserveBuffer struct {
	bytes.Buffer
	reserved []int64
	refuse   error
}

func (b *reserveBuffer) Reserve(n int64) error {
	b.reserved = append(b.reserved, n)
	return b.refuse
}

// TestWriterReserves: a Reserver output is told the file's exact size once,
// before its first byte (metadata alone, tensors of every type with odd
// sizes, alignments 1, 32 and 64, a header longer than Write's buffer),
// and a refusal ends Write with the Reserver's error and nothing written.
func TestWriterReserves(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	long := strings.Repeat("x", 3<<20)
	for _, c := range []struct {
		name    string
		align   uint32
		tensors int
		meta    string
	}{{"metadata only", 0, 0, "m"}, {"align 32", 0, 9, "m"}, {"align 1", 1, 9, "m"}, {"align 64", 64, 9, "m"}, {"long header", 0, 3, long}} {
		fill := func(w *Writer) {
			w.SetKV("general.architecture", StringValue("test"))
			w.SetKV("test.meta", StringValue(c.meta))
			if c.align != 0 {
				w.SetKV("general.alignment", Uint32Value(c.align))
			}
			for i := range c.tensors {
				n := uint64(1 + r.IntN(100))
				w.AddTensorBytes(fmt.Sprintf("t%d", i), TypeI8, []uint64{n}, randBytes(r, int(n)))
			}
		}
		var out reserveBuffer
		w := NewWriter(&out, 3)
		fill(w)
		if err := w.Write(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(out.reserved) != 1 || out.reserved[0] != int64(out.Len()) {
			t.Errorf("%s: reserved %v for a file of %d bytes", c.name, out.reserved, out.Len())
		}
		refused := &reserveBuffer{refuse: errors.New("no room")}
		w = NewWriter(refused, 3)
		fill(w)
		if err := w.Write(); !errors.Is(err, refused.refuse) || refused.Len() != 0 {
			t.Errorf("%s: a refused reservation gave %v with %d bytes written", c.name, err, refused.Len())
		}
	}
}
