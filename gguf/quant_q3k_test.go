package gguf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// moreDists adds to kDists the cases the Q3_K, Q4_0 and Q5_0 tests also
// want: one large outlier per superblock, sub-blocks of 16 (and blocks of
// 32) that each hold a single repeated value, and large and small scales.
func moreDists() []kDist {
	return append(kDists(),
		kDist{"one-outlier", func(r *rand.Rand, _ int, x []float32) {
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			x[r.IntN(len(x))] = float32(500 * float64(1-2*r.IntN(2)))
		}, true},
		kDist{"equal-runs", func(r *rand.Rand, _ int, x []float32) {
			for i := 0; i < len(x); i += 16 {
				fill(x[i:i+16], float32(r.NormFloat64()))
			}
		}, true},
		kDist{"normal-3e4", func(r *rand.Rand, _ int, x []float32) {
			for i := range x {
				x[i] = float32(r.NormFloat64() * 3e4)
			}
		}, true},
		kDist{"normal-1e-3", func(r *rand.Rand, _ int, x []float32) {
			for i := range x {
				x[i] = float32(r.NormFloat64() * 1e-3)
			}
		}, true},
	)
}

// q3Sub returns, for a Q3_K sub-block, |s| = amax/4 and opp, the largest
// magnitude among the values of the other sign than the extreme ext (the
// first value of largest magnitude).
func q3Sub(x []float32) (s, opp float64) {
	var amax, ext float64
	for _, v := range x {
		if a := math.Abs(float64(v)); a > amax {
			amax, ext = a, float64(v)
		}
	}
	for _, v := range x {
		if ext > 0 {
			opp = math.Max(opp, -float64(v))
		} else {
			opp = math.Max(opp, float64(v))
		}
	}
	return amax / 4, opp
}

// q3TestBound is the worst error of Q3_K's naive choice for a sub-block
// (|s| and opp from q3Sub) under the stored d, from the format alone.
//
// Q3_K decodes d·sc·k with k in −4..3 and sc a 6-bit scale in −32..31; the
// grid has four levels on one side of 0 and three on the other. With the
// extreme value ext put on k = −4, the naive step is s = −ext/4 (|s| =
// amax/4), d ≈ max|s|/31 in f16 (checked to within f16 rounding) and
// sc = round(s/d), so the decoded step S = d·sc is within es = d/2 of s
// (or |s| − 31d when the clamp at 31 cuts deeper, only possible when d is
// an f16 subnormal or 0). Then:
//
//   - inside the grid's span a value is within half a step, |S|/2 ≤
//     (|s| + es)/2;
//   - on the extreme's side the span reaches 4|S| ≥ 4(|s| − es), so a
//     value beyond it (at most amax = 4|s|) is within 4·es;
//   - on the other side it reaches 3|S|: a value there is within
//     opp − 3(|s| − es), up to about one step when opp ≈ amax.
//
// The quantiser may pick another scale only within this bound.
func q3TestBound(s, opp, d float64) float64 {
	es := math.Max(d/2, s-31*d)
	return math.Max(math.Max((s+es)/2, 4*es), opp-3*(s-es))
}

// TestQuantizeQ3_K checks Q3_K against the bound of q3TestBound, the
// stored d against max|s|/31, and that every value decodes to the grid
// point of its sub-block's decoded step nearest to it (the quants are
// rounded, not just bounded).
func TestQuantizeQ3_K(t *testing.T) {
	for di, dist := range moreDists() {
		t.Run(dist.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(di)))
			const nsb = 32
			x := dist.sample(r, nsb)
			q, y := kRoundTrip(t, TypeQ3_K, x)
			var worst, wErr, wBound float64 // largest error/bound, and its error and bound
			for b := 0; b < nsb; b++ {
				blk := q[110*b : 110*(b+1)]
				d := float64(f16at(blk, 108))
				var s, opp [16]float64
				var smax float64
				for j := 0; j < 16; j++ {
					s[j], opp[j] = q3Sub(x[qkK*b+16*j : qkK*b+16*j+16])
					smax = math.Max(smax, s[j])
				}
				if !(math.Abs(d-smax/31) <= f16Tol(float32(smax/31))) { // NaN fails
					t.Fatalf("block %d: d %g, want %g (f16-rounded)", b, d, smax/31)
				}
				for j := 0; j < 16; j++ {
					sc := q3Scale(blk, j)
					S := float64(float32(d) * float32(sc))
					bound := q3TestBound(s[j], opp[j], d)
					slack := 1e-6 * 4 * (s[j] + math.Abs(S))
					for i := qkK*b + 16*j; i < qkK*b+16*j+16; i++ {
						e := math.Abs(float64(y[i]) - float64(x[i]))
						if e > bound+slack {
							t.Fatalf("block %d sub %d element %d: %v -> %v, error %g > bound %g (s %g opp %g d %g sc %d)", b, j, i, x[i], y[i], e, bound, s[j], opp[j], d, sc)
						}
						if bound > 0 && e/bound > worst {
							worst, wErr, wBound = e/bound, e, bound
						}
						nearest := math.Inf(1)
						for k := -4; k <= 3; k++ {
							nearest = math.Min(nearest, math.Abs(S*float64(k)-float64(x[i])))
						}
						if e > nearest+slack {
							t.Fatalf("block %d sub %d element %d: %v -> %v, error %g but a grid point is %g away", b, j, i, x[i], y[i], e, nearest)
						}
					}
				}
			}
			t.Logf("max error/bound %.4f (error %.4g, bound %.4g)", worst, wErr, wBound)
		})
	}
}

// q3Scale is sub-block j's signed scale from a Q3_K block's 12 scale bytes,
// read as dequant.go does.
func q3Scale(blk []byte, j int) int {
	s := blk[96:108]
	lo := s[j%8] >> (4 * (j / 8)) & 0xf
	hi := s[8+j%4] >> (2 * (j / 4)) & 3
	return int(lo|hi<<4) - 32
}

// TestQuantizeQ3_KLayout quantises a superblock whose values lie exactly on
// a grid the quantiser must choose and compares every byte with ones worked
// out by hand.
//
// d = 1/8: sub-block i has scale sc[i] and values (1/8)·sc[i]·k, with
// k = ((l + g) mod 8) − 4 for value 32g + r (l = r mod 16, g = 0..7), so
// every sub-block holds k = −4 (its extreme, |x| = 4·|sc|/8) and the
// largest, |sc| = 31, gives d = (31·4/8)/4/31 = 1/8, f16 0x3000. Every
// value is exact, so the naive choice has no error and stays.
//
//   - hmask[r] bit g is set for k ≥ 0, i.e. (r + g) mod 8 ≥ 4: for r mod 8
//     = c that is 0xF0 rotated right by c: F0 78 3C 1E 0F 87 C3 E1.
//   - qs[32n + r] holds the low two bits of k + 4 = (r + g) mod 8 at bits
//     2j for g = 4n + j, i.e. (r + j) mod 4: for r mod 4 = 0..3 the bytes
//     are 0|1<<2|2<<4|3<<6 = E4, 1|2<<2|3<<4 = 39, 2|3<<2|1<<6 = 4E and
//     3|1<<4|2<<6 = 93.
//   - scales: sc = −31 31 −17 5 1 −1 30 −30 12 −12 7 −8 2 −2 16 −16, stored
//     u = sc + 32 = 1 63 15 37 33 31 62 2 44 20 39 24 34 30 48 16 (hex 01
//     3F 0F 25 21 1F 3E 02 2C 14 27 18 22 1E 30 10). Byte i < 8 is
//     u[i]&15 | (u[i+8]&15)<<4: C1 4F 7F 85 21 EF 0E 02. Byte 8 + m holds
//     u[m]>>4, u[m+4]>>4, u[m+8]>>4, u[m+12]>>4 at bits 0, 2, 4, 6:
//     m=0: 0,2,2,2 → A8; m=1: 3,1,1,1 → 57; m=2: 0,3,2,3 → EC; m=3:
//     2,0,1,1 → 52.
func TestQuantizeQ3_KLayout(t *testing.T) {
	sc := [16]int{-31, 31, -17, 5, 1, -1, 30, -30, 12, -12, 7, -8, 2, -2, 16, -16}
	x := make([]float32, qkK)
	for i := range x {
		g, r := i/32, i%32
		k := (r+g)%8 - 4
		x[i] = float32(sc[i/16]*k) / 8
	}
	want := make([]byte, 0, 110)
	for r := 0; r < 32; r++ {
		want = append(want, []byte{0xF0, 0x78, 0x3C, 0x1E, 0x0F, 0x87, 0xC3, 0xE1}[r%8])
	}
	for i := 0; i < 64; i++ {
		want = append(want, []byte{0xE4, 0x39, 0x4E, 0x93}[i%4])
	}
	want = append(want, 0xC1, 0x4F, 0x7F, 0x85, 0x21, 0xEF, 0x0E, 0x02, 0xA8, 0x57, 0xEC, 0x52)
	want = append(want, 0x00, 0x30)
	q, y := kRoundTrip(t, TypeQ3_K, x)
	if !bytes.Equal(q, want) {
		t.Errorf("Q3_K block\n got % x\nwant % x", q, want)
	}
	for i := range x {
		if y[i] != x[i] {
			t.Fatalf("element %d: %v -> %v", i, x[i], y[i])
		}
	}
}

// TestQuantizeQ3_KPlacement: random exact grids, a different random scale
// and order of levels per sub-block, must decode exactly; a misplaced bit
// shows as a wrong value at a known index.
func TestQuantizeQ3_KPlacement(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	x := make([]float32, 8*qkK)
	for b := 0; b < 8; b++ {
		top := r.IntN(16) // the sub-block with |sc| = 31, fixing d = 1/16
		for j := 0; j < 16; j++ {
			c := 1 + r.IntN(30)
			if j == top {
				c = 31
			}
			if r.IntN(2) == 0 {
				c = -c
			}
			sub := x[qkK*b+16*j : qkK*b+16*j+16]
			for i := range sub {
				sub[i] = float32(c*(r.IntN(8)-4)) / 16
			}
			sub[r.IntN(16)] = float32(-4*c) / 16 // the extreme, on k = −4
		}
	}
	_, y := kRoundTrip(t, TypeQ3_K, x)
	for i := range x {
		if y[i] != x[i] {
			t.Fatalf("element %d: %v -> %v", i, x[i], y[i])
		}
	}
}

// bestQ3 is bestSym for Q3_K's grid {d·sc·k, k = −4..3}, sc in −32..31,
// and q3TestBound.
func bestQ3(x []float32, d float64) float64 {
	s, opp := q3Sub(x)
	return bestSigned(x, d, q3TestBound(s, opp, d), -32, 31, -4, 3)
}
