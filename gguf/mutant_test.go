package gguf

import (
	"bytes"
	"encoding/binary"
	"io"
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

// TestWriterNestingMatchesReader: the writer takes exactly what the reader
// reads. maxArrayDepth (8) levels of arrays are written, byte for byte as
// the hand-built image nested(8) that TestNestingLimit reads, and read
// back; 9 levels, which the reader refuses (TestHostile's "nesting"), are
// refused by the writer too, not written into a file nothing can open.
func TestWriterNestingMatchesReader(t *testing.T) {
	deep := func(levels int) Value {
		v := Uint8sValue([]uint8{5})
		for range levels - 1 {
			v = ArrayValue(ValueArray, v)
		}
		return v
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, 3)
	w.SetKV("deep", deep(maxArrayDepth))
	if err := w.Write(); err != nil {
		t.Fatalf("%d levels: %v", maxArrayDepth, err)
	}
	if want := nested(maxArrayDepth); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("%d levels:\n got %v\nwant %v", maxArrayDepth, buf.Bytes(), want)
	}
	if _, err := Parse(buf.Bytes()); err != nil {
		t.Fatalf("%d levels written, not read: %v", maxArrayDepth, err)
	}
	for _, levels := range []int{maxArrayDepth + 1, maxArrayDepth + 2, 3 * maxArrayDepth} {
		buf.Reset()
		w = NewWriter(&buf, 3)
		w.SetKV("deep", deep(levels))
		if err := w.Write(); err == nil || !strings.Contains(err.Error(), "arrays nested deeper than 8") {
			t.Errorf("%d levels: err %v, want arrays nested deeper than 8", levels, err)
		}
	}
}

// TestMetadataOnlyFileEndsAtLastValue: a file without tensors ends right
// after its last KV, with no padding to an alignment no data follows (the
// header's comment; llama.cpp's reader seeks past the end harmlessly and
// memra's reads it too). Its last value here is a string array ending in
// an empty string, so that string's 8-byte length is the file's last 8
// bytes: the reader must take it. The expected bytes are built by hand
// from the format: 24-byte header, key, type 9 (array), element type 8
// (string), count 2, then "a" and "".
func TestMetadataOnlyFileEndsAtLastValue(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 3)
	w.SetKV("k", StringsValue([]string{"a", ""}))
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	want := header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(2).str("a").str("")
	if len(want)%DefaultAlignment == 0 {
		t.Fatalf("test image is %d bytes, already aligned: it would not see padding", len(want))
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("file bytes\n got %v\nwant %v", buf.Bytes(), want)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := f.Lookup("k")
	if got, ok := v.Any().([]string); !ok || !slices.Equal(got, []string{"a", ""}) {
		t.Errorf("read back %v", v)
	}
}

// TestCallbackOverflowWritesNothing: a tensor callback whose second Write
// would pass the declared size has that Write refused whole (0 bytes
// taken, an error), so nothing of it reaches the file where the next
// tensor's data goes, and Write reports the overflow, not a byte count.
func TestCallbackOverflowWritesNothing(t *testing.T) {
	var n2 int
	var err2 error
	w := NewWriter(io.Discard, 3)
	w.AddTensor("w", TypeF32, []uint64{4}, func(o io.Writer) error {
		if _, err := o.Write(make([]byte, 10)); err != nil {
			t.Errorf("first 10 of 16 bytes refused: %v", err)
		}
		n2, err2 = o.Write(make([]byte, 10))
		return nil
	})
	err := w.Write()
	if n2 != 0 || err2 == nil {
		t.Errorf("bytes 10..20 of a 16-byte tensor: wrote %d, err %v; want 0 and an error", n2, err2)
	}
	if err == nil {
		t.Fatal("an overflowing callback was written")
	}
}

// TestArrayValuePacksScalars: ArrayValue of scalars gives the typed slice
// that Any documents ([]int32 for int32 elements), as the typed
// constructors do; an element that is not of the declared type (or a zero
// Value, whose type number happens to be uint8's) is not packed, and the
// writer refuses it.
func TestArrayValuePacksScalars(t *testing.T) {
	if got, ok := ArrayValue(ValueInt32, Int32Value(1), Int32Value(-2)).Any().([]int32); !ok || !slices.Equal(got, []int32{1, -2}) {
		t.Errorf("ArrayValue(int32 1, -2).Any() = %#v", ArrayValue(ValueInt32, Int32Value(1), Int32Value(-2)).Any())
	}
	if got, ok := ArrayValue(ValueString, StringValue("x")).Any().([]string); !ok || !slices.Equal(got, []string{"x"}) {
		t.Errorf("ArrayValue(string x).Any() = %#v", ArrayValue(ValueString, StringValue("x")).Any())
	}
	for _, v := range []Value{ArrayValue(ValueUint8, Uint8Value(1), Value{}), ArrayValue(ValueUint8, Uint8Value(1), Int8Value(1))} {
		w := NewWriter(io.Discard, 3)
		w.SetKV("a", v)
		if err := w.Write(); err == nil || !strings.Contains(err.Error(), "element 1") {
			t.Errorf("%#v: err %v, want one naming element 1", v.Any(), err)
		}
	}
}

// TestQuantLimitValues: the limits are the largest |x| whose block
// super-scale still fits f16's largest finite 65504, worked out by hand:
// Q8_0 d = amax/127, so 65504·127; Q4_0 |d| = amax/8 and Q5_0 amax/16, so
// 65504·8 and 65504·16; Q3_K d = (amax/4)/31, so 65504·124; Q4_K and Q5_K
// dmin = max(−min)/63, so 65504·63; Q6_K d = amax/31/127, so
// 65504·31·127; IQ4_NL's naive d = amax/127, so 65504·127 (its search skips
// steps whose f16 is infinite); IQ4_XS |d| = amax/127/32, so 65504·4064. TestQuantizeRange round-trips ±QuantLimit, so a limit set
// too low would pass it unseen, refusing values that quantise fine.
func TestQuantLimitValues(t *testing.T) {
	for typ, want := range map[Type]float32{
		TypeQ8_0: 8319008, TypeQ4_0: 524032, TypeQ5_0: 1048064, TypeQ3_K: 8122496, TypeQ4_K: 4126752, TypeQ5_K: 4126752, TypeQ6_K: 257889248,
		TypeIQ4_NL: 8319008, TypeIQ4_XS: 266208256, TypeF32: 0, TypeF16: 0, TypeBF16: 0,
	} {
		if got := QuantLimit(typ); got != want {
			t.Errorf("QuantLimit(%v) = %g, want %g", typ, got, want)
		}
	}
}

// TestQuantizeIgnoresDstContents: Quantize writes every byte of dst, so a
// reused buffer full of old data gives the same block as a fresh one (the
// Q5_K and Q5_0 high bits are ORed into qh, Q3_K's codes and scales into
// hmask, qs and scales, and IQ4_XS's scales into scales_l, which must start
// clear).
func TestQuantizeIgnoresDstContents(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	x := make([]float32, 2*qkK)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, typ := range []Type{TypeF32, TypeF16, TypeBF16, TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_NL, TypeIQ4_XS} {
		n, _ := RowBytes(typ, int64(len(x)))
		clean, dirty := make([]byte, n), make([]byte, n)
		for i := range dirty {
			dirty[i] = 0xff
		}
		if err := Quantize(typ, x, clean); err != nil {
			t.Fatal(err)
		}
		if err := Quantize(typ, x, dirty); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(clean, dirty) {
			t.Errorf("%v: quantising into a buffer of 0xff gives other bytes than into zeros", typ)
		}
	}
}

// TestQuantizeKPicksBestNeighbour checks the search Quantize's doc
// promises for the K types, against a brute-force reference: each
// sub-block's decoded squared error is no more than that of any candidate
// in the documented set whose worst error stays within the naive choice's
// bound (TestQuantizeKAffine's and TestQuantizeQ6_K's formula, in float64).
// The set checked here: Q4_K/Q5_K, round(s/d)±1 × round(m/dmin)±1 and the
// covering grid; Q6_K, round(s/d)±1 and round(−ext/(32d))±1. A candidate's
// error is that of the nearest grid point for every value, worked out here
// by search over the grid, not with the quantiser's rounding. The bound
// tests alone pass a search that tries nothing but the naive choice.
func TestQuantizeKPicksBestNeighbour(t *testing.T) {
	// sse of x on the grid {S·k − M, k = lo..hi} (nearest point each) and
	// the worst error.
	gridErr := func(x []float32, S, M float64, lo, hi int) (sse, worst float64) {
		for _, v := range x {
			best := math.Inf(1)
			// The nearest k is round((v+M)/S) clamped; check its
			// neighbours too so float rounding cannot mislead.
			k0 := lo
			if S > 0 {
				k0 = int(math.Round((float64(v) + M) / S))
			}
			for k := k0 - 1; k <= k0+1; k++ {
				kk := max(lo, min(hi, k))
				best = math.Min(best, math.Abs(S*float64(kk)-M-float64(v)))
			}
			sse += best * best
			worst = math.Max(worst, best)
		}
		return sse, worst
	}
	// Plus a wide asymmetric one: dmin ≥ 8 there, so a bound that used
	// 63/dmin for 63·dmin would exceed the true one.
	dists := append(kDists(), kDist{"uniform-asym-1000", func(r *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = float32(-1000 + 4000*r.Float64())
		}
	}, true})
	for _, c := range []struct {
		typ   Type
		nmax  int
		bytes int
	}{{TypeQ4_K, 15, 144}, {TypeQ5_K, 31, 176}, {TypeQ6_K, 0, 210}} {
		for di, dist := range dists {
			r := rand.New(rand.NewPCG(uint64(77+c.nmax), uint64(di)))
			const nsb = 16
			x := dist.sample(r, nsb)
			q, y := kRoundTrip(t, c.typ, x)
			checked, better := 0, 0
			for b := 0; b < nsb; b++ {
				blk := q[c.bytes*b : c.bytes*(b+1)]
				if c.typ == TypeQ6_K {
					d := float64(F16ToF32(binary.LittleEndian.Uint16(blk[208:])))
					if d == 0 {
						continue
					}
					for j := 0; j < 16; j++ {
						sub := x[qkK*b+16*j : qkK*b+16*j+16]
						dec := y[qkK*b+16*j : qkK*b+16*j+16]
						var amax, ext float64
						for _, v := range sub {
							if a := math.Abs(float64(v)); a > amax {
								amax, ext = a, float64(v)
							}
						}
						s := amax / 31
						es := math.Max(d/2, s-127*d)
						bound := (s+es)/2 + 31*es
						bound *= 1 - 0x1p-16 // clearly within: the quantiser compares in float32
						var got float64
						for i, v := range sub {
							e := float64(dec[i]) - float64(v)
							got += e * e
						}
						c0 := int(max(0, min(127, math.Round(s/d))))
						ce := int(max(-127, min(127, math.Round(-ext/32/d))))
						for _, cand := range []int{c0 - 1, c0 + 1, ce - 1, ce, ce + 1} {
							if cand < -127 || cand > 127 {
								continue
							}
							S := float64(float32(d) * float32(cand))
							lo, hi := -32, 31
							if S < 0 { // k·S with k in −32..31 is (−k)·|S|
								S, lo, hi = -S, -31, 32
							}
							sse, worst := gridErr(sub, S, 0, lo, hi)
							if worst > bound {
								continue
							}
							checked++
							if got > sse*(1+1e-4)+1e-30 {
								better++
								t.Errorf("%v/%s block %d sub %d: squared error %g, but scale %d gives %g within the bound", c.typ, dist.name, b, j, got, cand, sse)
							}
						}
					}
					continue
				}
				d := float64(F16ToF32(binary.LittleEndian.Uint16(blk[0:])))
				dmin := float64(F16ToF32(binary.LittleEndian.Uint16(blk[2:])))
				nmax := float64(c.nmax)
				for j := 0; j < 8; j++ {
					sub := x[qkK*b+32*j : qkK*b+32*j+32]
					dec := y[qkK*b+32*j : qkK*b+32*j+32]
					lo, hi := minMax(sub)
					m := math.Max(0, -float64(lo))
					s := (float64(hi) + m) / nmax
					es := math.Max(d/2, s-63*d)
					em := math.Max(dmin/2, m-63*dmin)
					bound := (s+es)/2 + nmax*es + em
					bound *= 1 - 0x1p-16 // clearly within: the quantiser compares in float32
					var got float64
					for i, v := range sub {
						e := float64(dec[i]) - float64(v)
						got += e * e
						if math.Abs(e) > bound*(1+0x1p-15) {
							t.Errorf("%v/%s block %d sub %d: error %g beyond the bound %g", c.typ, dist.name, b, j, e, bound)
						}
					}
					round6 := func(v, unit float64) int {
						if unit == 0 {
							return 0
						}
						return int(max(0, min(63, math.Round(v/unit))))
					}
					c0, n0 := round6(s, d), round6(m, dmin)
					type cn struct{ c, n int }
					cands := []cn{}
					for dc := -1; dc <= 1; dc++ {
						for dn := -1; dn <= 1; dn++ {
							cands = append(cands, cn{c0 + dc, n0 + dn})
						}
					}
					if d > 0 || dmin > 0 {
						n := 0
						if dmin > 0 {
							n = int(min(63, math.Ceil(m/dmin)))
						}
						cc := 0
						if d > 0 {
							cc = int(max(0, min(63, math.Ceil((s+(dmin*float64(n)-m)/nmax)/d))))
						}
						cands = append(cands, cn{cc, n})
					}
					for _, k := range cands {
						if k.c < 0 || k.c > 63 || k.n < 0 || k.n > 63 {
							continue
						}
						S, M := float64(float32(d)*float32(k.c)), float64(float32(dmin)*float32(k.n))
						sse, worst := gridErr(sub, S, M, 0, c.nmax)
						if worst > bound {
							continue
						}
						checked++
						if got > sse*(1+1e-4)+1e-30 {
							better++
							t.Errorf("%v/%s block %d sub %d: squared error %g, but sc %d mn %d give %g within the bound", c.typ, dist.name, b, j, got, k.c, k.n, sse)
						}
					}
				}
			}
			if better > 0 {
				t.Logf("%v/%s: %d of %d candidates beat the choice", c.typ, dist.name, better, checked)
			}
		}
	}
}

// TestDequantQ5_0Scale: TestDequantQ5_0's d is 1, where ·d and /d agree;
// with d = 0.5 the values are its (q − 16) halved, worked out by hand.
func TestDequantQ5_0Scale(t *testing.T) {
	y := deq(t, TypeQ5_0, cat(le16(h0_5), qh5, nibbles16()))
	expectAll(t, TypeQ5_0, y, []float32{
		-8, 0.5, -7, 1.5, -6, 2.5, -5, 3.5, -4, 4.5, -3, 5.5, -2, 6.5, -1, 7.5,
		7.5, -1, 6.5, -2, 5.5, -3, 4.5, -4, 3.5, -5, 2.5, -6, 1.5, -7, 0.5, -8,
	})
}

// TestCanDequantizeBlockTypes: CanDequantize is true for every block type
// Dequantize decodes and false for the ones it refuses.
func TestCanDequantizeBlockTypes(t *testing.T) {
	for _, typ := range []Type{TypeQ4_0, TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ8_0, TypeQ8_1, TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeQ8_K, TypeF32, TypeI32} {
		if !CanDequantize(typ) {
			t.Errorf("CanDequantize(%v) = false", typ)
		}
	}
	for _, typ := range []Type{TypeIQ2_XXS, TypeQ4_2, Type(9999)} {
		if CanDequantize(typ) {
			t.Errorf("CanDequantize(%v) = true", typ)
		}
	}
}

// TestDequantizeErrorSaysSize: a wrong src length is reported with the
// length wanted, 2 Q8_0 blocks of 34 bytes for 64 elements: 68.
func TestDequantizeErrorSaysSize(t *testing.T) {
	err := Dequantize(TypeQ8_0, make([]byte, 33), make([]float32, 64))
	if err == nil || !strings.Contains(err.Error(), "want 68") {
		t.Errorf("error %v, want one saying want 68", err)
	}
}
