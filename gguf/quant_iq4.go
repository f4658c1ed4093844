package gguf

import (
	"encoding/binary"
	"math"
)

// IQ4_NL and IQ4_XS quantisers. Both code a value as a scale times the
// nearest entry of the codebook iq4Values, 16 levels from −127 to 113,
// denser near 0: IQ4_NL a block of 32 with its own f16 scale d, IQ4_XS
// sub-blocks of 32 with the step d·(ls − 32), d an f16 per superblock of
// 256 and ls a 6-bit integer per sub-block, as dequant.go reads them.
//
// The naive step s = ext/−127 puts a block's extreme value ext (the first
// of largest magnitude, sign kept) on −127, the codebook's longer end (the
// other is 113), as the steps ggml's reference quantiser tries do: only
// values of the other sign beyond 113 steps clamp, at most 14 steps off,
// against a largest gap of 24 inside the grid (89 to 113). The search then scores a
// few other steps on the decoded values, keeping the least squared error
// within the naive choice's worst-error bound (iq4Bound), as the K types
// do. ggml weights the squared error by x² instead; the plain one is what
// the other quantisers here minimise.

// iq4Levels are iq4Values as float32; iq4Mid the midpoints between
// neighbouring levels, the nearest-level code's decision boundaries, then
// +Inf; iq4Below[i] counts the midpoints below the integer i − 128.
var iq4Levels, iq4Mid, iq4Below = func() (l [16]float32, m [16]float32, b [256]uint8) {
	for k, v := range iq4Values {
		l[k] = float32(v)
	}
	for k := range 15 {
		m[k] = (l[k] + l[k+1]) / 2
	}
	m[15] = float32(math.Inf(1))
	for i := range b {
		for k := range 15 {
			if m[k] < float32(i-128) {
				b[i]++
			}
		}
	}
	return l, m, b
}()

// iq4Code is the index of the level nearest t (a tie goes to the lower
// one). The midpoints are whole or half integers at least 11 apart, so
// the integer part of t leaves one to compare: iq4Below of floor(t), then
// the next midpoint. t + 128 may round up to the next integer, but no
// midpoint lies within that rounding below an integer. NaN gives 0. The
// conversion rounds t first, so that no platform fuses a caller's product
// into the addition (Go does on arm64).
func iq4Code(t float32) uint8 {
	u := float32(t) + 128
	if !(u > 0) {
		u = 0
	}
	c := iq4Below[int32(min(u, 255))]
	if t > iq4Mid[c] {
		c++
	}
	return c
}

// iq4Grid is the codebook grid {S·iq4Levels[k]}, S = d·sc with IQ4_XS's
// sc = ls − 32 in −32..31; IQ4_NL scores its f16 d with err and fit as S.
// S·level is exact in float32 (S = d·sc has at most 11 + 6 significant
// bits, a level 7), so it is the value the decoder forms.
type iq4Grid struct{}

func (iq4Grid) scRange() (lo, hi int) { return -32, 31 }

func (iq4Grid) err(x []float32, S, limit, best float32) (sse float32, ok bool) {
	inv := recip(S)
	for _, v := range x {
		// Rounded before each addition so that no platform fuses them (Go
		// does on arm64) and picks another scale.
		e := float32(S*iq4Levels[iq4Code(v*inv)]) - v
		sse += float32(e * e)
		if e > limit || -e > limit || sse >= best {
			return sse, false
		}
	}
	return sse, true
}

func (iq4Grid) fit(x []float32, S float32) (skk, skx float64) {
	inv := recip(S)
	for _, v := range x {
		k := float64(iq4Levels[iq4Code(v*inv)])
		skk += k * k
		skx += k * float64(v)
	}
	return skk, skx
}

// iq4Pack writes the codes of 32 values for step S as dequant.go reads
// them: value j in the low nibble of qs[j], value j+16 in its high nibble.
func iq4Pack(x []float32, S float32, qs []byte) {
	inv := recip(S)
	for j := 0; j < 16; j++ {
		qs[j] = iq4Code(x[j]*inv) | iq4Code(x[j+16]*inv)<<4
	}
}

// iq4Bound is the worst error of a codebook grid whose step is within es
// of the naive a = amax/127, for values whose largest magnitude of the
// other sign than the extreme is opp: extBound with levels −127..113 and
// half the largest gap, 12.
func iq4Bound(a, es, opp float32) float32 {
	return extBound(a, es, opp, 12, 127, 113)
}

// quantIQ4_NLBlock encodes 32 values as one 18-byte IQ4_NL block:
// d f16 | qs[16].
func quantIQ4_NLBlock(x []float32, out []byte) {
	x = x[:32]
	amax, ext := extreme(x)
	s := ext / -127
	es := float32(math.Abs(float64(F16ToF32(F32ToF16(s)) - s)))
	dh := iq4NLScale(x, ext, iq4Bound(amax/127, es, opposite(x, ext)))
	binary.LittleEndian.PutUint16(out, dh)
	iq4Pack(x, F16ToF32(dh), out[2:18])
}

// iq4NLTries is how far IQ4_NL's search moves the extreme value's level
// from −127: the steps ext/(t − 127) for t = ±1..±iq4NLTries.
const iq4NLTries = 7

// iq4NLScale returns the f16 bits of an IQ4_NL block's d: the naive
// ext/−127 rounded to f16, or the candidate with the least squared error
// among the steps mapping ext to −127 + t (t = ±1..±iq4NLTries; t < 0
// clips it), the coarser one mapping it to +113 and two least-squares
// refits, whose worst error stays within bound. A step that rounds to an
// infinite f16 is skipped.
func iq4NLScale(x []float32, ext, bound float32) uint16 {
	var g iq4Grid
	best := F32ToF16(ext / -127)
	if ext == 0 {
		return best
	}
	inf := float32(math.Inf(1))
	sse, _ := g.err(x, F16ToF32(best), inf, inf)
	limit := bound + float32(bound*0x1p-20) // float32 slack so ties with the bound pass
	try := func(S float32) {
		h := F32ToF16(S)
		if h == best || h&0x7fff >= 0x7c00 {
			return
		}
		if e, ok := g.err(x, F16ToF32(h), limit, sse); ok {
			best, sse = h, e
		}
	}
	for t := -iq4NLTries; t <= iq4NLTries; t++ {
		if t != 0 {
			try(ext / float32(t-127))
		}
	}
	try(ext / 113)
	for it := 0; it < 2; it++ {
		skk, skx := g.fit(x, F16ToF32(best))
		if skk == 0 {
			break
		}
		S := float32(skx / skk)
		if F32ToF16(S) == best {
			break
		}
		try(S)
	}
	return best
}

// iq4XSFiner is how many units finer than the naive scale IQ4_XS's search
// tries (searchScale's finer).
const iq4XSFiner = 3

// quantIQ4_XSBlock encodes 256 values as one 136-byte IQ4_XS block:
// d f16 | scales_h u16 | scales_l[4] | qs[128].
//
// Each sub-block's naive step s = ext/−127 (as IQ4_NL's); d = smax/−32 in
// f16, smax the s of largest magnitude, so that sub-block's scale is −32,
// the 6-bit range's longer end (as ggml's). Each sub-block then takes its
// scale from searchScale (Q3_K's candidates, up to iq4XSFiner units finer,
// the alternative being the coarser ext-to-+113 step) within iq4Bound,
// with es ≥ |s − d·sc|: |d|/2, or |s| − 31|d| where the clamp at 31 cuts
// deeper (a sub-block of the other sign than smax's as large as it) or d
// is subnormal or 0.
func quantIQ4_XSBlock(x []float32, out []byte) {
	var s, ext [8]float32
	var smax float32
	for j := 0; j < 8; j++ {
		_, ext[j] = extreme(x[32*j : 32*j+32])
		s[j] = ext[j] / -127
		if math.Abs(float64(s[j])) > math.Abs(float64(smax)) {
			smax = s[j]
		}
	}
	dh := F32ToF16(smax / -32)
	d := F16ToF32(dh)
	ad := float32(math.Abs(float64(d)))
	var sh uint16
	sl := out[4:8]
	clear(sl)
	for j := 0; j < 8; j++ {
		sub := x[32*j : 32*j+32]
		a := float32(math.Abs(float64(s[j])))
		bound := iq4Bound(a, max(ad/2, a-31*ad), opposite(sub, ext[j]))
		sc := searchScale(iq4Grid{}, sub, s[j], ext[j]/113, d, bound, iq4XSFiner)
		// ls = sc + 32: low nibble to nibble j%2 of scales_l[j/2], top two
		// bits to bits 2j, 2j+1 of scales_h.
		ls := uint8(sc + 32)
		sl[j/2] |= (ls & 0xf) << (4 * (j % 2))
		sh |= uint16(ls>>4) << (2 * j)
		iq4Pack(sub, d*float32(sc), out[8+16*j:8+16*j+16])
	}
	binary.LittleEndian.PutUint16(out[0:], dh)
	binary.LittleEndian.PutUint16(out[2:], sh)
}
