package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func TestF32ToF16Rounding(t *testing.T) {
	cases := []struct {
		x    float32
		want uint16
	}{
		{1, 0x3C00},
		{-2, 0xC000},
		{1 + 0x1p-11, 0x3C00},           // halfway between 0x3C00 and 0x3C01: to even
		{1 + 3*0x1p-11, 0x3C02},         // halfway between 0x3C01 and 0x3C02: to even
		{1 + 0x1p-11 + 0x1p-20, 0x3C01}, // just above halfway: up
		{65504, 0x7BFF},
		{65519, 0x7BFF},  // below the halfway point 65520
		{65520, 0x7C00},  // halfway to 65536: even is Inf
		{1e6, 0x7C00},    // overflow
		{100000, 0x7C00}, // 2^16 ≤ x < 2^17: f16 exponent 31, Inf's own, not a NaN with x's mantissa bits
		{-70000, 0xFC00}, // the same, negative
		{65536, 0x7C00},  // 2^16 exactly
		{-1e6, 0xFC00},
		{0x1p-24, 0x0001}, // smallest subnormal
		{0x1p-25, 0x0000}, // halfway to 2^-24: to even (0)
		{1.5 * 0x1p-25, 0x0001},
		{3 * 0x1p-25, 0x0002}, // 1.5 units: to even (2)
		{5 * 0x1p-25, 0x0002}, // 2.5 units: to even (2)
		{1e-10, 0x0000},
		{-1e-10, 0x8000},
		{0x1p-14, 0x0400},          // smallest normal
		{1023.5 * 0x1p-24, 0x0400}, // largest subnormal + half unit: to even, carries into normal
		{0.1, 0x2E66},              // 0.0999755859375 below, 0.10003662109375 above; nearer below
		{float32(math.Inf(1)), 0x7C00},
	}
	for _, c := range cases {
		if got := F32ToF16(c.x); got != c.want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
	if h := F32ToF16(float32(math.NaN())); h&0x7C00 != 0x7C00 || h&0x3FF == 0 {
		t.Errorf("NaN -> %#04x", h)
	}
}

func TestF32ToBF16Rounding(t *testing.T) {
	cases := []struct {
		x    float32
		want uint16
	}{
		{1, 0x3F80},
		{1 + 0x1p-8, 0x3F80},           // halfway: to even
		{1 + 3*0x1p-8, 0x3F82},         // halfway: to even
		{1 + 0x1p-8 + 0x1p-20, 0x3F81}, // above halfway: up
		{-5, 0xC0A0},
		{math.MaxFloat32, 0x7F80}, // rounds up to Inf
		{float32(math.Inf(-1)), 0xFF80},
	}
	for _, c := range cases {
		if got := F32ToBF16(c.x); got != c.want {
			t.Errorf("F32ToBF16(%g) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
	if h := F32ToBF16(math.Float32frombits(0x7F800001)); h&0x7F80 != 0x7F80 || h&0x7F == 0 {
		t.Errorf("signalling NaN -> %#04x, want a NaN", h)
	}
}

func TestQuantizeQ8_0(t *testing.T) {
	// amax = 31.75 so d = 31.75/127 = 0.25 exactly (f16 0x3400), 1/d = 4.
	x := make([]float32, 32)
	copy(x, []float32{-31.75, 0.125, -0.125, 0.375, 0.1, 10, -3.3, 7.9})
	for j := 8; j < 32; j++ {
		x[j] = float32(j) * 0.25
	}
	got := make([]byte, 34)
	if err := Quantize(TypeQ8_0, x, got); err != nil {
		t.Fatal(err)
	}
	// q = round(4x), halves away from zero: 0.5 -> 1, -0.5 -> -1, 1.5 -> 2,
	// 0.4 -> 0, 40, -13.2 -> -13, 31.6 -> 32; then j for j >= 8.
	want := []byte{0x00, 0x34, byte(0x81), 1, 0xFF, 2, 0, 40, byte(256 - 13), 32}
	for j := 8; j < 32; j++ {
		want = append(want, byte(j))
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Q8_0 block\n got % x\nwant % x", got, want)
	}
	// An all-zero block stores d = 0 and q = 0.
	zero := make([]byte, 34)
	for i := range zero {
		zero[i] = 0xEE
	}
	if err := Quantize(TypeQ8_0, make([]float32, 32), zero); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(zero, make([]byte, 34)) {
		t.Errorf("zero block % x", zero)
	}
}

// TestQuantizeRoundTrip checks random rows stay within the rounding bound
// of each target after dequantisation.
func TestQuantizeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, 256)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	for _, typ := range []Type{TypeF32, TypeF16, TypeBF16, TypeQ8_0} {
		n, _ := RowBytes(typ, int64(len(x)))
		q := make([]byte, n)
		if err := Quantize(typ, x, q); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(x))
		if err := Dequantize(typ, q, y); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			var tol float64
			switch typ {
			case TypeF16:
				tol = math.Abs(float64(x[i])) * 0x1p-11 // half an ulp, 10-bit mantissa
			case TypeBF16:
				tol = math.Abs(float64(x[i])) * 0x1p-8 // half an ulp, 7-bit mantissa
			case TypeQ8_0:
				// half a step d/2, plus d's own f16 rounding (2^-11
				// relative) times |q| ≤ 127.
				b := i / 32
				d := float64(F16ToF32(binary.LittleEndian.Uint16(q[34*b:])))
				tol = d/2 + 127*d*0x1p-11
			}
			if diff := math.Abs(float64(y[i] - x[i])); !(diff <= tol) { // NaN fails
				t.Errorf("%v element %d: %v -> %v, error %g > %g", typ, i, x[i], y[i], diff, tol)
			}
		}
	}
	if err := Quantize(TypeQ2_K, x, make([]byte, 84)); err == nil {
		t.Error("Q2_K quantisation accepted")
	}
	if err := Quantize(TypeF16, x, make([]byte, 3)); err == nil {
		t.Error("short dst accepted")
	}
}
