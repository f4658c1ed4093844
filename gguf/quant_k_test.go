package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// kDist is one input distribution for the K-quant tests, filled one
// superblock of 256 at a time (b is the superblock index).
type kDist struct {
	name string
	gen  func(r *rand.Rand, b int, x []float32)
	// rms: check the statistical RMS bound. Off where the super-scale d
	// underflows f16 (then the error is the values themselves, bounded only
	// by the max-error check).
	rms bool
}

func kDists() []kDist {
	normal := func(sd float64) func(*rand.Rand, int, []float32) {
		return func(r *rand.Rand, _ int, x []float32) {
			for i := range x {
				x[i] = float32(r.NormFloat64() * sd)
			}
		}
	}
	uniform := func(lo, hi float64) func(*rand.Rand, int, []float32) {
		return func(r *rand.Rand, _ int, x []float32) {
			for i := range x {
				x[i] = float32(lo + (hi-lo)*r.Float64())
			}
		}
	}
	return []kDist{
		{"normal", normal(1), true},
		{"normal-0.02", normal(0.02), true}, // LLM-like weights; Q6_K's d is an f16 subnormal here
		{"uniform-asym", uniform(-1, 3), true},
		{"positive", uniform(0.5, 1.5), true},
		{"negative", uniform(-2, -1), true},
		{"outliers", func(r *rand.Rand, _ int, x []float32) {
			for i := range x {
				x[i] = float32(r.NormFloat64())
				if r.IntN(64) == 0 {
					x[i] = float32((6 + 4*r.Float64()) * float64(1-2*r.IntN(2)))
				}
			}
		}, true},
		{"subblock-scales", func(r *rand.Rand, _ int, x []float32) {
			// Every 16 values a new spread from 0.01 to 1, so many
			// sub-blocks get small 6-bit (or int8) scales.
			for i := 0; i < len(x); i += 16 {
				sd := math.Pow(10, -2*r.Float64())
				for k := i; k < i+16; k++ {
					x[k] = float32(r.NormFloat64() * sd)
				}
			}
		}, true},
		{"constant-zero", func(r *rand.Rand, b int, x []float32) {
			switch b % 5 {
			case 0:
				fill(x, 0.7) // constant positive superblock
			case 1:
				fill(x, -0.3) // constant negative superblock
			case 2:
				fill(x, 0) // all-zero superblock
			case 3:
				normal(1)(r, b, x) // zero and constant sub-blocks in normal data
				fill(x[32:64], 0)
				fill(x[128:160], 2.5)
			default:
				normal(1)(r, b, x)
			}
		}, true},
		{"tiny", normal(1e-5), false}, // d underflows f16 or is a subnormal
	}
}

// sample returns nsb superblocks of the distribution, drawn from r.
func (d kDist) sample(r *rand.Rand, nsb int) []float32 {
	x := make([]float32, nsb*qkK)
	for b := 0; b < nsb; b++ {
		d.gen(r, b, x[qkK*b:qkK*b+qkK])
	}
	return x
}

func fill(x []float32, v float32) {
	for i := range x {
		x[i] = v
	}
}

// f16Tol is the largest distance from v ≥ 0 to its f16 rounding: half an
// ulp, 2⁻¹¹ relative for normals, 2⁻²⁵ absolute for subnormals.
func f16Tol(v float32) float64 { return float64(v)*0x1p-11 + 0x1p-25 }

// kRoundTrip quantises x to typ with Quantize and decodes it with the
// existing Dequantize.
func kRoundTrip(t *testing.T, typ Type, x []float32) ([]byte, []float32) {
	t.Helper()
	n, err := RowBytes(typ, int64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	q := make([]byte, n)
	if err := Quantize(typ, x, q); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := Dequantize(typ, q, y); err != nil {
		t.Fatal(err)
	}
	for i, v := range y {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%v: element %d decodes to %v", typ, i, v)
		}
	}
	return q, y
}

// TestQuantizeKAffine checks Q4_K and Q5_K against bounds derived from the
// data and the format alone.
//
// Per sub-block of 32 with min a and max b, let m = max(0, −a) and
// s = (b + m)/nmax (nmax 15 or 31): the grid {s·q − m} covers the values.
// The format stores d ≈ max s/63 and dmin ≈ max m/63 as f16 (checked to
// within f16 rounding), and 6-bit integers sc, mn; the decoded step is
// S = d·sc and offset M = dmin·mn. Choosing sc = round(s/d), mn =
// round(m/dmin) gives |s − S| ≤ es = d/2 and |m − M| ≤ em = dmin/2 (unless
// the clamp at 63 cuts deeper, possible only for a subnormal d: then es =
// s − 63d). A value inside the grid's span is within S/2 of a point; below
// it within m − M, above it within nmax·(s − S) + (M − m). So
//
//	max error ≤ (s + es)/2 + nmax·es + em,
//
// about s/2 + (nmax/2)·d: the 6-bit scale costs up to nmax half-units of d
// at the top of the range. The quantiser may pick another (sc, mn) only if
// its worst error stays within this bound, so the bound holds for it.
//
// RMS: one candidate is the covering grid, mn = ceil(m/dmin) and then the
// smallest sc whose top point reaches max x: step S ≤ s + d + dmin/nmax
// and nothing clipped (except where sc is clamped at 63 in the largest
// sub-block, whose top then falls short by less than dmin). For data
// spread over many steps its errors are close to uniform on ±S/2, mean
// square S²/12. The quantiser keeps the least squared error, so
// mean-square error ≤ 1.1 × mean((s + d + dmin/nmax)²)/12, the 1.1 for the
// ≈1% sampling spread over 8192 values and the clamped case.
//
// Each decoded value must also be the grid point nearest to its input (the
// quants are rounded, not just bounded).
func TestQuantizeKAffine(t *testing.T) {
	for _, c := range []struct {
		typ   Type
		nmax  int
		bytes int
	}{{TypeQ4_K, 15, 144}, {TypeQ5_K, 31, 176}} {
		for di, dist := range kDists() {
			t.Run(c.typ.String()+"/"+dist.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.nmax), uint64(di)))
				const nsb = 32
				x := dist.sample(r, nsb)
				q, y := kRoundTrip(t, c.typ, x)
				nmax := float64(c.nmax)
				var sse, ref float64
				var worst float64 // largest error / bound ratio
				for b := 0; b < nsb; b++ {
					blk := q[c.bytes*b : c.bytes*(b+1)]
					d, dmin := float64(f16at(blk, 0)), float64(f16at(blk, 2))
					var s, m [8]float64
					var smax, mmax float64
					for j := 0; j < 8; j++ {
						lo, hi := minMax(x[qkK*b+32*j : qkK*b+32*j+32])
						m[j] = math.Max(0, -float64(lo))
						s[j] = (float64(hi) + m[j]) / nmax
						smax, mmax = math.Max(smax, s[j]), math.Max(mmax, m[j])
					}
					if !(math.Abs(d-smax/63) <= f16Tol(float32(smax/63))) || !(math.Abs(dmin-mmax/63) <= f16Tol(float32(mmax/63))) { // NaN fails
						t.Fatalf("block %d: d %g dmin %g, want %g %g (f16-rounded)", b, d, dmin, smax/63, mmax/63)
					}
					scs, mns := unpackScaleMinK4((*[12]byte)(blk[4:16]))
					for j := 0; j < 8; j++ {
						sc, mn := uint8(scs>>(8*j)), uint8(mns>>(8*j))
						S, M := float64(float32(d)*float32(sc)), float64(float32(dmin)*float32(mn))
						es := math.Max(d/2, s[j]-63*d)
						em := math.Max(dmin/2, m[j]-63*dmin)
						bound := (s[j]+es)/2 + nmax*es + em
						var amax float64
						for i := qkK*b + 32*j; i < qkK*b+32*j+32; i++ {
							amax = math.Max(amax, math.Abs(float64(x[i])))
						}
						slack := 1e-6 * (amax + M + nmax*S)
						for i := qkK*b + 32*j; i < qkK*b+32*j+32; i++ {
							e := math.Abs(float64(y[i]) - float64(x[i]))
							if e > bound+slack {
								t.Fatalf("block %d sub %d element %d: %v -> %v, error %g > bound %g (s %g m %g d %g dmin %g sc %d mn %d)",
									b, j, i, x[i], y[i], e, bound, s[j], m[j], d, dmin, sc, mn)
							}
							if bound > 0 {
								worst = math.Max(worst, e/bound)
							}
							nearest := math.Inf(1)
							for k := 0; k <= c.nmax; k++ {
								nearest = math.Min(nearest, math.Abs(S*float64(k)-M-float64(x[i])))
							}
							if e > nearest+slack {
								t.Fatalf("block %d sub %d element %d: %v -> %v, error %g but a grid point is %g away", b, j, i, x[i], y[i], e, nearest)
							}
							sse += e * e
						}
						S0 := s[j] + d + dmin/nmax
						ref += 32 * S0 * S0 / 12
					}
				}
				rms, refRMS := math.Sqrt(sse/float64(len(x))), math.Sqrt(ref/float64(len(x)))
				t.Logf("rms %.4g, bound %.4g (rms/sqrt(mean S0²/12) %.3f); worst error/max-bound %.3f", rms, math.Sqrt(1.1)*refRMS, rms/refRMS, worst)
				if dist.rms && sse > 1.1*ref {
					t.Errorf("rms error %g > bound %g", rms, math.Sqrt(1.1)*refRMS)
				}
			})
		}
	}
}

// TestQuantizeQ6_K checks Q6_K against bounds derived from the data and the
// format alone.
//
// Per sub-block of 16 with largest magnitude amax, let s = amax/31: the
// symmetric grid {s·k, k = −31..31} covers the values. The format stores
// d ≈ max s/127 as f16 (checked to within f16 rounding) and an int8 sc per
// sub-block; the decoded step is S = d·sc. sc = round(s/d) gives |s − S| ≤
// es = d/2 (or s − 127d if the clamp at 127 cuts deeper, possible only for
// a subnormal d). Inside ±31·S a value is within S/2 of a point; beyond it
// within 31·(s − S). So
//
//	max error ≤ (s + es)/2 + 31·es.
//
// The quantiser may pick another scale (e.g. the opposite sign mapping the
// extreme value to −32) only within this bound.
//
// RMS: sc = ceil(s/d) (one of the candidates) covers the values with step
// ≤ s + d, mean-square error ≈ (s + d)²/12 for data spread over many steps;
// the quantiser keeps the least squared error, so mean-square error ≤
// mean((s + d)²)/12 × 1.1 (sampling spread of ≈1% over 8192 values).
func TestQuantizeQ6_K(t *testing.T) {
	for di, dist := range kDists() {
		t.Run("Q6_K/"+dist.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(6, uint64(di)))
			const nsb = 32
			x := dist.sample(r, nsb)
			q, y := kRoundTrip(t, TypeQ6_K, x)
			var sse, ref, worst float64
			for b := 0; b < nsb; b++ {
				blk := q[210*b : 210*(b+1)]
				d := float64(f16at(blk, 208))
				var s [16]float64
				var smax float64
				for j := 0; j < 16; j++ {
					for _, v := range x[qkK*b+16*j : qkK*b+16*j+16] {
						s[j] = math.Max(s[j], math.Abs(float64(v))/31)
					}
					smax = math.Max(smax, s[j])
				}
				if !(math.Abs(d-smax/127) <= f16Tol(float32(smax/127))) { // NaN fails
					t.Fatalf("block %d: d %g, want %g (f16-rounded)", b, d, smax/127)
				}
				for j := 0; j < 16; j++ {
					sc := int8(blk[192+j])
					S := float64(float32(d) * float32(sc))
					es := math.Max(d/2, s[j]-127*d)
					bound := (s[j]+es)/2 + 31*es
					slack := 1e-6 * 32 * (s[j] + math.Abs(S))
					for i := qkK*b + 16*j; i < qkK*b+16*j+16; i++ {
						e := math.Abs(float64(y[i]) - float64(x[i]))
						if e > bound+slack {
							t.Fatalf("block %d sub %d element %d: %v -> %v, error %g > bound %g (s %g d %g sc %d)", b, j, i, x[i], y[i], e, bound, s[j], d, sc)
						}
						if bound > 0 {
							worst = math.Max(worst, e/bound)
						}
						nearest := math.Inf(1)
						for k := -32; k <= 31; k++ {
							nearest = math.Min(nearest, math.Abs(S*float64(k)-float64(x[i])))
						}
						if e > nearest+slack {
							t.Fatalf("block %d sub %d element %d: %v -> %v, error %g but a grid point is %g away", b, j, i, x[i], y[i], e, nearest)
						}
						sse += e * e
					}
					S0 := s[j] + d // the covering step bound
					ref += 16 * S0 * S0 / 12
				}
			}
			rms, refRMS := math.Sqrt(sse/float64(len(x))), math.Sqrt(ref/float64(len(x)))
			t.Logf("rms %.4g, bound %.4g (rms/sqrt(mean S0²/12) %.3f); worst error/max-bound %.3f", rms, math.Sqrt(1.1)*refRMS, rms/refRMS, worst)
			if dist.rms && sse > 1.1*ref {
				t.Errorf("rms error %g > bound %g", rms, math.Sqrt(1.1)*refRMS)
			}
		})
	}
}

// TestQuantizeKZero: an all-zero superblock decodes to zeros and encodes as
// d = dmin = 0, scales 0 and the code of k = 0: all-zero bytes for Q4_K and
// Q5_K; Q6_K's code 32 has high bits 2 in each qh pair (0xAA); Q3_K's code
// 4 has its hmask bits set and its scales are stored as 32 (low nibbles 0,
// top bits 2: 0xAA).
func TestQuantizeKZero(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		typ  Type
		want []byte
	}{
		{TypeQ4_K, make([]byte, 144)},
		{TypeQ5_K, make([]byte, 176)},
		{TypeQ6_K, cat(make([]byte, 128), bytes.Repeat([]byte{0xAA}, 64), make([]byte, 18))},
		{TypeQ3_K, cat(bytes.Repeat([]byte{0xFF}, 32), make([]byte, 72), bytes.Repeat([]byte{0xAA}, 4), make([]byte, 2))},
	} {
		q, y := kRoundTrip(t, c.typ, make([]float32, qkK))
		for i, v := range y {
			if v != 0 {
				t.Fatalf("%v: element %d decodes to %v", c.typ, i, v)
			}
		}
		if !bytes.Equal(q, c.want) {
			t.Errorf("%v zero block\n got % x\nwant % x", c.typ, q, c.want)
		}
	}
}

// TestPackScaleMinK4 checks the 6-bit scale/min packing against the
// decoder's unpackScaleMinK4 for random values, including the extremes.
func TestPackScaleMinK4(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 1000; it++ {
		var sc, mn [8]uint8
		for j := range sc {
			sc[j], mn[j] = uint8(r.IntN(64)), uint8(r.IntN(64))
			if it == 0 {
				sc[j], mn[j] = 63, 63
			}
		}
		var s [12]byte
		packScaleMinK4(&sc, &mn, s[:])
		a, b := unpackScaleMinK4(&s)
		for j := 0; j < 8; j++ {
			if x, y := uint8(a>>(8*j)), uint8(b>>(8*j)); x != sc[j] || y != mn[j] {
				t.Fatalf("sub-block %d: packed %d/%d, unpacked %d/%d", j, sc[j], mn[j], x, y)
			}
		}
	}
}

// TestQuantizeKPlacement quantises a ramp whose every value is a grid point
// and checks the exact decode: a misplaced nibble or high bit shows as a
// wrong value at a known index.
func TestQuantizeKPlacement(t *testing.T) {
	for _, c := range []struct {
		typ  Type
		levs int // distinct quant levels
		off  int // value = (level − off)·unit
	}{{TypeQ4_K, 16, 0}, {TypeQ5_K, 32, 0}, {TypeQ6_K, 63, 31}} {
		// Every sub-block holds the levels in a different order, so the
		// index of each value is visible in the decode. Each sub-block spans
		// the full range, so all sub-scales equal the top one and decode
		// with the same step.
		x := make([]float32, qkK)
		r := rand.New(rand.NewPCG(3, uint64(c.levs)))
		sub := 32
		if c.typ == TypeQ6_K {
			sub = 16
		}
		for j := 0; j < qkK/sub; j++ {
			perm := r.Perm(c.levs)
			for i := 0; i < sub; i++ {
				lev := perm[i%c.levs]
				if i == 0 {
					lev = c.levs - 1 // the top level in every sub-block
				}
				if i == 1 {
					lev = 0 // and the bottom one
				}
				x[sub*j+i] = float32(lev - c.off)
			}
		}
		_, y := kRoundTrip(t, c.typ, x)
		// The decoded step is within f16 rounding of 1 (d = 1/63 or
		// 31/(31·127)), so the values are within 64·2⁻¹¹ of their input.
		for i := range x {
			if math.Abs(float64(y[i]-x[i])) > 64*0x1p-11 {
				t.Fatalf("%v element %d: %v -> %v", c.typ, i, x[i], y[i])
			}
		}
	}
}

// TestQuantizeBlockErrors: for each block type Quantize writes, a length
// that is not whole blocks (300 is neither 32s nor 256s) and a dst of the
// wrong size are refused, and CanQuantize says yes.
func TestQuantizeBlockErrors(t *testing.T) {
	for _, typ := range []Type{TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_NL, TypeIQ4_XS} {
		err := Quantize(typ, make([]float32, 300), make([]byte, 300))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprint("not a multiple of its block size ", typ.BlockSize())) {
			t.Errorf("%v, 300 elements: %v", typ, err)
		}
		err = Quantize(typ, make([]float32, 512), make([]byte, 300))
		if err == nil || !strings.Contains(err.Error(), "dst is 300 bytes") {
			t.Errorf("%v, short dst: %v", typ, err)
		}
		if !CanQuantize(typ) {
			t.Errorf("CanQuantize(%v) = false", typ)
		}
	}
}

// TestQuantizeAllocs: Quantize does not allocate for the block types.
func TestQuantizeAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, 4*qkK)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, typ := range []Type{TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_NL, TypeIQ4_XS} {
		n, _ := RowBytes(typ, int64(len(x)))
		dst := make([]byte, n)
		if a := testing.AllocsPerRun(10, func() { Quantize(typ, x, dst) }); a != 0 {
			t.Errorf("%v: %v allocations", typ, a)
		}
	}
}

// TestQuantizeRange: values beyond what the f16 scales hold, or not finite,
// are refused with a *RangeError naming the element, instead of blocks that
// decode to NaN (Q4_K with one value of −4.2·10⁶ did: dmin = 4.2e6/63
// overflows f16). At the limit itself the block decodes finitely and close;
// the next float32 out is refused.
func TestQuantizeRange(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, typ := range []Type{TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_NL, TypeIQ4_XS} {
		lim := QuantLimit(typ)
		n, _ := RowBytes(typ, qkK)
		for _, v := range []float32{-lim, lim} {
			x := make([]float32, qkK)
			for i := range x {
				x[i] = float32(i%7) * 0.1
			}
			x[3] = v
			_, y := kRoundTrip(t, typ, x) // fails on a non-finite decode
			// v is its block's extreme and sets the super-scale, so its
			// error is within the type's max-error bound (the tests above,
			// TestQuantizeQ3_K, TestQuantizeQ0Bound, TestQuantizeRoundTrip)
			// for that scale: Q4_K/Q5_K one step of the grid, at most 2·|v|/nmax
			// (nmax ≥ 15), 13.3%; Q3_K (s + d/2)/2 with s = |v|/4 and
			// d = s/31, 63/496 = 12.7%; Q6_K (s + d/2)/2 + 31·d/2 with
			// s = |v|/31 and d = s/127, 2.0%; Q8_0 half a step, 0.4%;
			// Q4_0 and Q5_0 put v on the grid's end, off by d's f16
			// rounding only; IQ4_NL and IQ4_XS half the codebook's widest
			// gap, 12 steps of |v|/127 (IQ4_XS's step up to half a unit
			// |v|/(127·32) over), 9.6%. So within 14% of v.
			if math.Abs(float64(y[3]-v)) > 0.14*math.Abs(float64(v)) {
				t.Errorf("%v: %g decodes to %g", typ, v, y[3])
			}
		}
		for _, v := range []float32{math.Nextafter32(-lim, -inf), math.Nextafter32(lim, inf), float32(math.NaN()), inf, -inf} {
			x := make([]float32, qkK)
			x[200] = v
			err := Quantize(typ, x, make([]byte, n))
			var re *RangeError
			if !errors.As(err, &re) || re.Index != 200 || !strings.Contains(err.Error(), "element 200") {
				t.Errorf("%v, %g at element 200: error %v", typ, v, err)
			}
		}
	}
	// The float types take anything, as llama.cpp's converter does.
	for _, typ := range []Type{TypeF32, TypeF16, TypeBF16} {
		n, _ := RowBytes(typ, 2)
		if err := Quantize(typ, []float32{1e30, float32(math.NaN())}, make([]byte, n)); err != nil {
			t.Errorf("%v: %v", typ, err)
		}
	}
}
