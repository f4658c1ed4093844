package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// iq4TestBound is the worst error of the naive IQ4_NL/IQ4_XS choice for a
// block (IQ4_NL) or sub-block (IQ4_XS) of 32, from the format alone.
//
// Both decode S·v, v one of the 16 codebook entries iq4Values from −127 to
// 113, whose widest gap is 89 to 113, 24. The extreme value ext (the first
// of largest magnitude amax) goes on −127: the naive step is s = ext/−127,
// |s| = a = amax/127, and the decoded step S is within es of it (IQ4_NL:
// the f16 rounding of s, f16Tol(a); IQ4_XS: half a unit |d| of the 6-bit
// scale, or a − 31|d| where its clamp at 31 cuts deeper, possible for a
// sub-block of the other sign than the largest one, or when d is an f16
// subnormal or 0). Then:
//
//   - inside the grid's span a value is within half the widest gap,
//     12·|S| ≤ 12·(a + es);
//   - on the extreme's side the span reaches 127·|S| ≥ 127·(a − es), so a
//     value beyond it (at most amax = 127a) is within 127·es;
//   - on the other side it reaches 113·|S|: a value there, of magnitude at
//     most opp (the largest magnitude of the other sign than ext), is
//     within opp − 113·(a − es), up to 14 steps when opp ≈ amax.
//
// The quantiser may pick another step only within this bound.
func iq4TestBound(a, es, opp float64) float64 {
	return math.Max(math.Max(12*(a+es), 127*es), opp-113*(a-es))
}

// iq4Sub returns a = amax/127, the extreme ext (the first value of largest
// magnitude) and opp, the largest magnitude of the other sign than ext.
func iq4Sub(x []float32) (a, ext, opp float64) {
	var amax float64
	for _, v := range x {
		if m := math.Abs(float64(v)); m > amax {
			amax, ext = m, float64(v)
		}
	}
	for _, v := range x {
		if ext > 0 {
			opp = math.Max(opp, -float64(v))
		} else {
			opp = math.Max(opp, float64(v))
		}
	}
	return amax / 127, ext, opp
}

// iq4XSScale is sub-block j's scale ls − 32 in an IQ4_XS block, read as
// dequant.go does.
func iq4XSScale(blk []byte, j int) int {
	lo := int(blk[4+j/2] >> (4 * (j % 2)) & 0xf)
	hi := int(binary.LittleEndian.Uint16(blk[2:]) >> (2 * j) & 3)
	return (lo | hi<<4) - 32
}

// iq4Step is the decoded step of 32-value block b (IQ4_NL) or sub-block b
// (IQ4_XS, sub-block b%8 of superblock b/8), formed as dequant.go does.
func iq4Step(typ Type, q []byte, b int) float64 {
	if typ == TypeIQ4_NL {
		return float64(f16at(q, 18*b))
	}
	blk := q[136*(b/8):]
	return float64(f16at(blk, 0) * float32(iq4XSScale(blk, b%8)))
}

// TestIQ4Code compares the table-driven nearest-level code with a search
// of all 16 levels (a tie to the lower), at random points, at the levels,
// the midpoints and the integers and one float32 step either side of them
// (where t + 128 rounds), out of range, at ±Inf and NaN (0).
func TestIQ4Code(t *testing.T) {
	nearest := func(v float32) uint8 {
		var k uint8
		for j := range iq4Values {
			if math.Abs(float64(v)-float64(iq4Values[j])) < math.Abs(float64(v)-float64(iq4Values[k])) {
				k = uint8(j)
			}
		}
		return k
	}
	up, down := float32(math.Inf(1)), float32(math.Inf(-1))
	var ts []float32
	for i := -140; i <= 140; i++ {
		for _, v := range []float32{float32(i), float32(i) + 0.5} {
			ts = append(ts, v, math.Nextafter32(v, up), math.Nextafter32(v, down))
		}
	}
	r := rand.New(rand.NewPCG(12, 13))
	for range 100000 {
		ts = append(ts, float32(r.Float64()*300-150), float32(r.NormFloat64()*1e-3))
	}
	ts = append(ts, 1e6, -1e6, 0x1p-140, -0x1p-140)
	for _, v := range ts {
		if got, want := iq4Code(v), nearest(v); got != want {
			t.Fatalf("iq4Code(%v) = %d (%d), want %d (%d)", v, got, iq4Values[got], want, iq4Values[want])
		}
	}
	// Beyond float64's resolution of the distances: the ends.
	for v, want := range map[float32]uint8{1e30: 15, up: 15, -1e30: 0, down: 0, float32(math.NaN()): 0} {
		if got := iq4Code(v); got != want {
			t.Errorf("iq4Code(%v) = %d, want %d", v, got, want)
		}
	}
}

// TestQuantizeIQ4Bound checks IQ4_NL and IQ4_XS against iq4TestBound,
// IQ4_XS's stored d against smax/−32 (smax = ext/−127 of the first
// sub-block of largest magnitude), and that every value decodes to the
// codebook point nearest it for its decoded step (the codes are rounded,
// not just bounded). It logs the RMS error relative to the data's RMS.
func TestQuantizeIQ4Bound(t *testing.T) {
	for _, typ := range []Type{TypeIQ4_NL, TypeIQ4_XS} {
		for di, dist := range moreDists() {
			t.Run(typ.String()+"/"+dist.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(typ), uint64(di)))
				const nsb = 32
				x := dist.sample(r, nsb)
				q, y := kRoundTrip(t, typ, x)
				var worst, wErr, wBound, sse, ssx float64
				var smax float64
				for b := 0; b < len(x)/32; b++ {
					xb, yb := x[32*b:32*b+32], y[32*b:32*b+32]
					a, ext, opp := iq4Sub(xb)
					S := iq4Step(typ, q, b)
					es := f16Tol(float32(a))
					if typ == TypeIQ4_XS {
						if b%8 == 0 {
							smax = 0
							for j := b; j < b+8; j++ {
								if aj, ej, _ := iq4Sub(x[32*j : 32*j+32]); aj > math.Abs(smax) {
									smax = -ej / 127
								}
							}
							want, d := smax/-32, float64(f16at(q, 136*(b/8)))
							if !(math.Abs(d-want) <= f16Tol(float32(math.Abs(want)))) || want != 0 && math.Signbit(d) != math.Signbit(want) {
								t.Fatalf("superblock %d: d %g, want %g (f16-rounded)", b/8, d, want)
							}
						}
						d := math.Abs(float64(f16at(q, 136*(b/8))))
						es = math.Max(d/2, a-31*d)
					}
					bound := iq4TestBound(a, es, opp)
					slack := 1e-6 * 127 * (a + math.Abs(S))
					for i, v := range xb {
						e := math.Abs(float64(yb[i]) - float64(v))
						if e > bound+slack {
							t.Fatalf("block %d element %d: %v -> %v, error %g > bound %g (a %g ext %g opp %g step %g)", b, i, v, yb[i], e, bound, a, ext, opp, S)
						}
						nearest := math.Inf(1)
						for _, l := range iq4Values {
							nearest = math.Min(nearest, math.Abs(S*float64(l)-float64(v)))
						}
						if e > nearest+slack {
							t.Fatalf("block %d element %d: %v -> %v, error %g but a grid point is %g away (step %g)", b, i, v, yb[i], e, nearest, S)
						}
						if bound > 0 && e/bound > worst {
							worst, wErr, wBound = e/bound, e, bound
						}
						sse += e * e
						ssx += float64(v) * float64(v)
					}
				}
				t.Logf("rms error / rms value %.4f; max error/bound %.4f (error %.4g, bound %.4g)", math.Sqrt(sse/ssx), worst, wErr, wBound)
			})
		}
	}
}

// TestQuantizeIQ4Zero: an all-zero block decodes to zeros, not NaN, and
// encodes as the rule says: d = 0/−127 = −0 (f16 0x8000) and every code 8,
// the entry 1 nearest 0 (qs bytes 0x88); IQ4_XS's d = smax/−32 is −0 as
// well (smax stays +0) and each ls is 32 (scales_l nibbles 0, scales_h
// bit pairs 2: 0xAAAA). A zero sub-block among others decodes to zeros too
// (its scale rounds to 0).
func TestQuantizeIQ4Zero(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		typ  Type
		want []byte
	}{
		{TypeIQ4_NL, cat([]byte{0, 0x80}, bytes.Repeat([]byte{0x88}, 16))},
		{TypeIQ4_XS, cat([]byte{0, 0x80, 0xAA, 0xAA, 0, 0, 0, 0}, bytes.Repeat([]byte{0x88}, 128))},
	} {
		n := c.typ.BlockSize()
		q, y := kRoundTrip(t, c.typ, make([]float32, n))
		for i, v := range y {
			if v != 0 {
				t.Fatalf("%v: element %d decodes to %v", c.typ, i, v)
			}
		}
		if !bytes.Equal(q, c.want) {
			t.Errorf("%v zero block\n got % x\nwant % x", c.typ, q, c.want)
		}
		r := rand.New(rand.NewPCG(9, uint64(c.typ)))
		x := make([]float32, 512)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		clear(x[96:128]) // an IQ4_NL block and an IQ4_XS sub-block
		_, y = kRoundTrip(t, c.typ, x)
		for i := 96; i < 128; i++ {
			if y[i] != 0 {
				t.Fatalf("%v: zero element %d amid others decodes to %v", c.typ, i, y[i])
			}
		}
	}
}

// TestQuantizeIQ4Exact: values that are exactly d·iq4Values[k] for an f16
// d (IQ4_NL), or d·sc·iq4Values[k] for an f16 d and sc in −32..31 with one
// sub-block at sc = −32 (IQ4_XS), each block holding −127 (its extreme),
// must decode bit-exactly: the naive step is then d (d·sc) itself, with no
// error, which no other candidate beats. The codes and scales are random,
// so a misplaced nibble or scale bit shows as a wrong value at a known
// index. d is drawn from the f16 normals and subnormals of either sign.
func TestQuantizeIQ4Exact(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 23))
	randF16 := func() float32 {
		for {
			// Exponent fields 0 (subnormal) to 29, so d·127·32 is finite.
			h := uint16(r.IntN(30<<10)) | uint16(r.IntN(2))<<15
			if h&0x7fff != 0 {
				return F16ToF32(h)
			}
		}
	}
	fillExact := func(x []float32, S float32) {
		for i := range x {
			x[i] = S * iq4Levels[r.IntN(16)]
		}
		x[r.IntN(len(x))] = S * -127
	}
	for _, typ := range []Type{TypeIQ4_NL, TypeIQ4_XS} {
		x := make([]float32, 64*qkK)
		for b := 0; b < len(x)/qkK; b++ {
			xb := x[qkK*b : qkK*b+qkK]
			if typ == TypeIQ4_NL {
				for j := 0; j < 8; j++ {
					fillExact(xb[32*j:32*j+32], randF16())
				}
				continue
			}
			d, top := randF16(), r.IntN(8)
			for j := 0; j < 8; j++ {
				sc := r.IntN(64) - 32
				if j == top {
					sc = -32 // fixes d = smax/−32
				}
				if sc == 0 {
					clear(xb[32*j : 32*j+32])
					continue
				}
				fillExact(xb[32*j:32*j+32], d*float32(sc))
			}
		}
		_, y := kRoundTrip(t, typ, x)
		for i := range x {
			if math.Float32bits(y[i]) != math.Float32bits(x[i]) && !(x[i] == 0 && y[i] == 0) {
				t.Fatalf("%v element %d: %v -> %v", typ, i, x[i], y[i])
			}
		}
	}
}

// TestQuantizeIQ4_XSLayout compares a superblock with bytes worked out by
// hand. d = 1/64 (f16 0x2400); sub-block i has scale sc[i] and its value j
// the level k = (i + j) mod 16, value j + 16 the level (k + 8) mod 16, so
// each holds −127 (its extreme, k = 0) and the sc = −32 one fixes
// d = (32·127/64)/127/32. Every value is exact, so the naive choice stays.
//
//   - sc = −32 31 −1 0 5 −17 16 −16, ls = sc + 32 = 0 63 31 32 37 15 48 16
//     (hex 00 3F 1F 20 25 0F 30 10).
//   - scales_l[i] = ls[2i]&15 | (ls[2i+1]&15)<<4: F0 0F F5 00.
//   - scales_h holds ls>>4 = 0 3 1 2 2 0 3 1 at bits 2i: 0x729C, bytes
//     9C 72.
//   - qs[16i + j] = k | ((k + 8) mod 16)<<4: 80 91 … F7 08 … 7F from
//     k = i; sub-block 3 (sc = 0) is all zeros, codes 8: 0x88.
func TestQuantizeIQ4_XSLayout(t *testing.T) {
	sc := [8]int{-32, 31, -1, 0, 5, -17, 16, -16}
	x := make([]float32, qkK)
	for i := range x {
		j, k := i/32, (i/32+i%16)%16
		if i%32 >= 16 {
			k = (k + 8) % 16
		}
		x[i] = float32(sc[j]*int(iq4Values[k])) / 64
	}
	want := []byte{0x00, 0x24, 0x9C, 0x72, 0xF0, 0x0F, 0xF5, 0x00}
	for i := 0; i < 8; i++ {
		for j := 0; j < 16; j++ {
			k := byte((i + j) % 16)
			if sc[i] == 0 {
				want = append(want, 0x88)
			} else {
				want = append(want, k|(k+8)%16<<4)
			}
		}
	}
	q, y := kRoundTrip(t, TypeIQ4_XS, x)
	if !bytes.Equal(q, want) {
		t.Errorf("IQ4_XS block\n got % x\nwant % x", q, want)
	}
	for i := range x {
		if y[i] != x[i] {
			t.Fatalf("element %d: %v -> %v", i, x[i], y[i])
		}
	}
}

// TestQuantizeIQ4NearExhaustive compares each block's squared error with
// the least of every step the format can store whose worst error is within
// the naive choice's bound iq4TestBound, each value at its nearest codebook
// point: for IQ4_XS every sc in −32..31 with the stored d; for IQ4_NL every
// f16 step of either sign with magnitude in [0.85a, 2a], a = amax/127.
// Below 0.85a none is within the bound: the extreme is clipped by more than
// 127·0.15a = 19a on the −127 side (31a on the 113 side), the bound at most
// 14a + 127·f16Tol(a). Above 2a the grid is coarse; searching [0.5a, 4a]
// instead finds the same optimum for every distribution but equal-runs.
//
// The limits are measured, not derived. With these seeds IQ4_NL's squared
// error is 1.000–1.051 times the optimum per distribution and 1.022 in
// geometric mean (the naive step alone: 1.003–1.29, 1.181); IQ4_XS's
// 1.000–1.017 and 1.005 (naive 1.05–1.33, 1.144). equal-runs is left out
// of the mean: 3.55 for IQ4_NL (naive 11.8), 1.19 for IQ4_XS. So a
// distribution may not pass 1.08 (IQ4_NL) or 1.04 (IQ4_XS), equal-runs
// 4.5 or 1.3, and the geometric mean 1.035 or 1.012.
func TestQuantizeIQ4NearExhaustive(t *testing.T) {
	// gridErr is the squared error of x on {S·v}, nearest point each, or
	// +Inf once an error passes bound or the sum passes best.
	gridErr := func(x []float32, S, bound, best float64) float64 {
		var sse float64
		for _, v := range x {
			e := math.Inf(1)
			for _, l := range iq4Values {
				e = math.Min(e, math.Abs(S*float64(l)-float64(v)))
			}
			sse += e * e
			if e > bound || sse >= best {
				return math.Inf(1)
			}
		}
		return sse
	}
	inf := math.Inf(1)
	for _, typ := range []Type{TypeIQ4_NL, TypeIQ4_XS} {
		lim := map[Type]struct{ dist, runs, geo float64 }{TypeIQ4_NL: {1.08, 4.5, 1.035}, TypeIQ4_XS: {1.04, 1.3, 1.012}}[typ]
		var logSum, logNaive float64
		var n int
		for di, dist := range moreDists() {
			if !dist.rms {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(typ)+100, uint64(di)))
			x := dist.sample(r, 5)
			q, y := kRoundTrip(t, typ, x)
			var got, opt, naive float64
			for b := 0; b < len(x)/32; b++ {
				xb := x[32*b : 32*b+32]
				got += sqErr(xb, y[32*b:32*b+32])
				a, ext, opp := iq4Sub(xb)
				best := inf
				if typ == TypeIQ4_NL {
					bound := iq4TestBound(a, f16Tol(float32(a)), opp)
					bound += bound*0x1p-20 + 1e-12
					for h := uint16(0); h < 0x7c00; h++ {
						S := float64(F16ToF32(h))
						if S < 0.85*a || S > 2*a {
							continue
						}
						best = math.Min(best, gridErr(xb, S, bound, best))
						best = math.Min(best, gridErr(xb, -S, bound, best))
					}
					naive += gridErr(xb, float64(F16ToF32(F32ToF16(float32(ext/-127)))), inf, inf)
				} else {
					d := float64(f16at(q, 136*(b/8)))
					bound := iq4TestBound(a, math.Max(math.Abs(d)/2, a-31*math.Abs(d)), opp)
					bound += bound*0x1p-20 + 1e-12
					for c := -32; c <= 31; c++ {
						best = math.Min(best, gridErr(xb, float64(float32(d)*float32(c)), bound, best))
					}
					c0 := 0
					if d != 0 {
						c0 = int(math.Max(-32, math.Min(31, math.Round(ext/-127/d))))
					}
					naive += gridErr(xb, float64(float32(d)*float32(c0)), inf, inf)
				}
				opt += best
			}
			ratio := got / opt
			t.Logf("%v %s: squared error %.6g, exhaustive optimum %.6g, ratio %.4f (naive step %.4f)", typ, dist.name, got, opt, ratio, naive/opt)
			limit := lim.dist
			if dist.name == "equal-runs" {
				// Two constants a block are best served by whichever step
				// lands both nearest a codebook point, which a local
				// search rarely finds; the bound test covers it.
				limit = lim.runs
			}
			if !(ratio >= 1-1e-9 && ratio <= limit) { // below 1: the test's own search is wrong
				t.Errorf("%v %s: squared error %.6g is %.4f times the exhaustive optimum %.6g, want 1 to %g", typ, dist.name, got, ratio, opt, limit)
			}
			if dist.name != "equal-runs" {
				logSum += math.Log(ratio)
				logNaive += math.Log(naive / opt)
				n++
			}
		}
		g := math.Exp(logSum / float64(n))
		t.Logf("%v: geometric mean ratio %.4f (naive %.4f)", typ, g, math.Exp(logNaive/float64(n)))
		if g > lim.geo {
			t.Errorf("%v: geometric mean ratio to the exhaustive optimum %.4f > %g", typ, g, lim.geo)
		}
	}
}

// TestQuantizeIQ4VersusQ4: on Gaussian data the non-uniform codebook, denser
// near 0 where most values are, must beat Q4_0's uniform grid of the same
// 4.5 bits a value (IQ4_NL) and of more bits than IQ4_XS's 4.25. Measured
// RMS error relative to the data's RMS over 64 superblocks: Q4_0 0.0860,
// IQ4_NL 0.0739, IQ4_XS 0.0747, Q4_K (4.5 bits, an offset and 6-bit
// scales) 0.0715. So each IQ4 type must stay under 0.9 times Q4_0's.
func TestQuantizeIQ4VersusQ4(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 45))
	x := make([]float32, 64*qkK)
	var ssx float64
	for i := range x {
		x[i] = float32(r.NormFloat64())
		ssx += float64(x[i]) * float64(x[i])
	}
	rel := map[Type]float64{}
	for _, typ := range []Type{TypeQ4_0, TypeQ4_K, TypeIQ4_NL, TypeIQ4_XS} {
		_, y := kRoundTrip(t, typ, x)
		rel[typ] = math.Sqrt(sqErr(x, y) / ssx)
		t.Logf("%v: rms error / rms value %.4f", typ, rel[typ])
	}
	for _, typ := range []Type{TypeIQ4_NL, TypeIQ4_XS} {
		if rel[typ] > 0.9*rel[TypeQ4_0] {
			t.Errorf("%v: relative rms error %.4f, want under 0.9 × Q4_0's %.4f", typ, rel[typ], rel[TypeQ4_0])
		}
	}
}
