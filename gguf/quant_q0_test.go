package gguf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// q0Types are the ggml "_0" block types with their zero point z (the q
// that decodes to 0) and block bytes.
var q0Types = []struct {
	typ   Type
	z     int
	bytes int
}{{TypeQ4_0, 8, 18}, {TypeQ5_0, 16, 22}}

// TestQuantizeQ0Bound checks Q4_0 and Q5_0 against a bound from the format.
//
// A block of 32 decodes (q − z)·d', k = q − z in −z..z−1 (z = 8 or 16),
// d' the stored f16 scale. With max the value of largest magnitude (sign
// kept, the first one), the rule sets d = max/−z (d' is d rounded to f16,
// checked here), so t = x/d lies in [−z, z]. For t ≤ z − 1/2 the nearest
// k is within half a step, |x − k·d| ≤ |d|/2; beyond, k clamps to z − 1
// and the error is (t − (z − 1))·|d| ≤ |d|, one step. Decoding with d'
// instead of d adds |k|·|d' − d| ≤ z·(f16 rounding of |d|). So
//
//	|x − y| ≤ |d|·max(1/2, t − z + 1) + z·f16Tol(|d|),
//
// plus float32 slack; an all-zero block must decode to zeros.
func TestQuantizeQ0Bound(t *testing.T) {
	for _, c := range q0Types {
		for di, dist := range moreDists() {
			t.Run(c.typ.String()+"/"+dist.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.z), uint64(di)))
				x := dist.sample(r, 16)
				q, y := kRoundTrip(t, c.typ, x)
				z := float64(c.z)
				var worst, wErr, wBound float64 // largest error/bound, and its error and bound
				var clamped int
				for b := 0; b < len(x)/32; b++ {
					blk, xb, yb := q[c.bytes*b:c.bytes*(b+1)], x[32*b:32*b+32], y[32*b:32*b+32]
					var m float64
					for _, v := range xb {
						if math.Abs(float64(v)) > math.Abs(m) {
							m = float64(v)
						}
					}
					d, dq := m/-z, float64(f16at(blk, 0))
					if !(math.Abs(dq-d) <= f16Tol(float32(math.Abs(d)))) || math.Signbit(dq) != math.Signbit(d) && d != 0 {
						t.Fatalf("block %d: d %g, want %g (f16-rounded)", b, dq, d)
					}
					for i, v := range xb {
						e := math.Abs(float64(yb[i]) - float64(v))
						if d == 0 {
							if yb[i] != 0 {
								t.Fatalf("block %d element %d: zero block decodes to %v", b, i, yb[i])
							}
							continue
						}
						tt := float64(v) / d
						if tt > z-0.5 {
							clamped++
						}
						bound := math.Abs(d)*math.Max(0.5, tt-z+1) + z*f16Tol(float32(math.Abs(d)))
						slack := 1e-6 * math.Abs(m)
						if !(e <= bound+slack) {
							t.Fatalf("block %d element %d: %v -> %v, error %g > bound %g (d %g, x/d %g)", b, i, v, yb[i], e, bound, d, tt)
						}
						if e/bound > worst {
							worst, wErr, wBound = e/bound, e, bound
						}
					}
				}
				t.Logf("max error/bound %.4f (error %.4g, bound %.4g); %d values clamped", worst, wErr, wBound, clamped)
			})
		}
	}
}

// TestQuantizeQ0Layout compares whole blocks with bytes worked out by hand
// from ggml's rule: max = the first value of largest magnitude, d = max/−z
// (a power of two here, exact in f16), q = floor(x/d + z + 1/2) clamped to
// 2z − 1.
func TestQuantizeQ0Layout(t *testing.T) {
	// Q4_0, d = −2/−8 = 0.25 (f16 0x3400). x[0] = −2 is max; x[1] = +2 has
	// the same magnitude but comes later, so it does not replace it, and
	// clamps from q = 16 to 15 (decodes 1.75). Ties round up: 0.125 (x/d =
	// 0.5) → 9, −0.125 → 8; 1.875 (7.5) → 16 → 15; −1.875 → 1; 0.3 (1.2)
	// → 9. x[8..31] = (j mod 16 − 8)/4 → q = j mod 16, except x[31] = +2
	// (q clamps to 15), which would make max positive if a later equal
	// magnitude won.
	x4 := []float32{-2, 2, 0.125, -0.125, 1.875, -1.875, 0, 0.3}
	for j := 8; j < 32; j++ {
		x4 = append(x4, float32(j%16-8)/4)
	}
	x4[31] = 2
	// q = 0 15 9 8 15 1 8 9 | 8..15 | 0..15: byte j is q[j] | q[j+16]<<4.
	want4 := []byte{0x00, 0x34, 0x00, 0x1F, 0x29, 0x38, 0x4F, 0x51, 0x68, 0x79,
		0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF}

	// Q5_0, d = −2/−16 = 0.125 (f16 0x3000). x[0] = −2 (q 0), x[1] = +2
	// (q 32 → 31), 0.0625 (x/d 0.5) → 17, −0.0625 → 16, 1.9375 (15.5) → 32
	// → 31, 1.875 → 31, then x[j] = (5j mod 32 − 16)/8 → q = 5j mod 32.
	x5 := []float32{-2, 2, 0.0625, -0.0625, 1.9375, 1.875}
	for j := 6; j < 32; j++ {
		x5 = append(x5, float32(5*j%32-16)/8)
	}
	// q = 0 31 17 16 31 31 30 3 8 13 18 23 28 1 6 11 | 16 21 26 31 4 9 14
	// 19 24 29 2 7 12 17 22 27. qh bit j = q[j] ≥ 16: bits 1-6; 10-12;
	// 16-19, 23; 24, 25, 29-31 → 7E 1C 8F E3. qs byte j: low nibbles of
	// q[j] and q[j+16].
	want5 := []byte{0x00, 0x30, 0x7E, 0x1C, 0x8F, 0xE3, 0x00, 0x5F, 0xA1, 0xF0,
		0x4F, 0x9F, 0xEE, 0x33, 0x88, 0xDD, 0x22, 0x77, 0xCC, 0x11, 0x66, 0xBB}

	neg := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = -v
		}
		return y
	}
	flip := func(b []byte) []byte { // negated input: d = −0.25 or −0.125, same quants
		c := bytes.Clone(b)
		c[1] |= 0x80
		return c
	}
	// All zeros: max = 0 and d = 0/−z = −0, f16 0x8000 (as ggml writes it),
	// q = z: nibbles 8 for Q4_0; for Q5_0 nibbles 0 and every qh bit set.
	zero4 := append([]byte{0, 0x80}, bytes.Repeat([]byte{0x88}, 16)...)
	zero5 := append([]byte{0, 0x80, 0xFF, 0xFF, 0xFF, 0xFF}, make([]byte, 16)...)
	for _, c := range []struct {
		name string
		typ  Type
		x    []float32
		want []byte
	}{
		{"Q4_0", TypeQ4_0, x4, want4},
		{"Q4_0 negated", TypeQ4_0, neg(x4), flip(want4)},
		{"Q4_0 zero", TypeQ4_0, make([]float32, 32), zero4},
		{"Q5_0", TypeQ5_0, x5, want5},
		{"Q5_0 negated", TypeQ5_0, neg(x5), flip(want5)},
		{"Q5_0 zero", TypeQ5_0, make([]float32, 32), zero5},
	} {
		got, y := kRoundTrip(t, c.typ, c.x)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s block\n got % x\nwant % x", c.name, got, c.want)
		}
		for i, v := range y {
			if c.x[i] == 0 && v != 0 {
				t.Errorf("%s element %d: 0 decodes to %v", c.name, i, v)
			}
		}
	}
}

// TestQuantizeQ0Placement: random blocks whose values lie on their grid
// ((q − z)·d with d a power of two and q = 0 present) must decode exactly;
// a misplaced nibble or high bit shows at a known index.
func TestQuantizeQ0Placement(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 41))
	for _, c := range q0Types {
		x := make([]float32, 64*32)
		for b := 0; b < 64; b++ {
			d := math.Ldexp(1, r.IntN(20)-10)
			if r.IntN(2) == 0 {
				d = -d
			}
			xb := x[32*b : 32*b+32]
			for i := range xb {
				xb[i] = float32(float64(1+r.IntN(2*c.z-1)-c.z) * d) // q in 1..2z−1
			}
			xb[r.IntN(32)] = float32(float64(-c.z) * d) // q = 0: the block's max
		}
		_, y := kRoundTrip(t, c.typ, x)
		for i := range x {
			if y[i] != x[i] {
				t.Fatalf("%v element %d: %v -> %v", c.typ, i, x[i], y[i])
			}
		}
	}
}
