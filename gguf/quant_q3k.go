package gguf

import (
	"encoding/binary"
	"math"
)

// quantQ3_KBlock encodes 256 values as one 110-byte Q3_K block:
// hmask[32] | qs[64] | scales[12] | d f16. Sixteen sub-blocks of 16 with
// x ≈ d·sc·k, k in −4..3, sc a 6-bit signed scale in −32..31 (stored as
// sc + 32).
//
// The grid k = −4..3 has one more level on its negative side, so the naive
// step s = −ext/4 maps each sub-block's extreme value ext to k = −4: a step
// of amax/4 rather than the amax/3 that mapping it to +3 would need (only
// values of the other sign beyond 3.5 steps clamp, at most one step off).
// d = max|s|/31 in f16, so the largest sub-block's scale is ±31.
// Each sub-block then takes, as Q6_K does, the scale with the least squared
// error among round(s/d)±1, the scales 2 to 5 units finer, the coarser
// ext-to-+3 scale round(ext/(3d))±1 and two least-squares refits, provided
// its worst error stays within the naive choice's bound q3Bound; k is the
// nearest grid point for the decoded step d·sc.
func quantQ3_KBlock(x []float32, out []byte) {
	var s, opp [16]float32
	var smax float32
	for j := 0; j < 16; j++ {
		sub := x[16*j : 16*j+16]
		amax, ext := extreme(sub)
		opp[j] = opposite(sub, ext)
		s[j] = -ext / 4
		smax = max(smax, amax/4)
	}
	dh := F32ToF16(smax / 31)
	d := F16ToF32(dh)
	var q [qkK]uint8 // k + 4
	var sc [16]int
	for j := 0; j < 16; j++ {
		sub := x[16*j : 16*j+16]
		sc[j] = searchScale(q3Grid, sub, s[j], -4*s[j]/3, d, q3Bound(s[j], opp[j], d), 5)
		q3Grid.codes(sub, d*float32(sc[j]), q[16*j:16*j+16])
	}
	hm, qs, scales := out[0:32], out[32:96], out[96:108]
	clear(out[:108])
	for i, u := range q {
		// Value i = 32g + r: its low two bits (of k + 4) go to bits 2(g%4)
		// of qs[32(g/4) + r], its third bit (set for k ≥ 0) to bit g of
		// hmask[r].
		g, r := i/32, i%32
		qs[32*(g/4)+r] |= (u & 3) << (2 * (g % 4))
		hm[r] |= (u >> 2) << g
	}
	for i, c := range sc {
		// Low nibble of sub-block i < 8 in byte i, of i ≥ 8 in the high
		// nibble of byte i−8; the top two bits at bits 2(i/4) of byte
		// 8 + i%4.
		u := uint8(c + 32)
		if i < 8 {
			scales[i] |= u & 0xf
		} else {
			scales[i-8] |= (u & 0xf) << 4
		}
		scales[8+i%4] |= (u >> 4) << (2 * (i / 4))
	}
	binary.LittleEndian.PutUint16(out[108:], dh)
}

// q3Bound is the worst error of the naive Q3_K choice sc = round(s/d)
// (clamped to −32..31), step S = d·sc, for a sub-block whose extreme value
// is −4s and whose largest magnitude of the other sign is opp: extBound
// for the levels −4..3 (half a step apart) with es ≥ |s − S|: d/2, or
// |s| − 31d where the clamp cuts deeper (only possible for a subnormal or
// zero d).
func q3Bound(s, opp, d float32) float32 {
	a := float32(math.Abs(float64(s)))
	return extBound(a, max(d/2, a-31*d), opp, 0.5, 4, 3)
}

// extBound is the worst error of a grid {S·k} whose levels k run from −lo
// (at the extreme value's side) to hi, with no gap wider than 2·half, for
// values whose extreme is lo·a in magnitude and whose largest magnitude of
// the other sign is opp, when the step |S| is within es of a. The grid
// reaches lo·|S| ≥ lo·(a − es) on the extreme's side and hi·(a − es) on
// the other, so a value is at most half·(a + es) from a point inside it,
// at most lo·es beyond it on the extreme's side and at most
// opp − hi·(a − es) on the other. The products are rounded before the
// subtraction so that no platform fuses them (Go does on arm64).
func extBound(a, es, opp, half, lo, hi float32) float32 {
	return max(float32(half*(a+es)), float32(lo*es), opp-float32(hi*(a-es)))
}

// opposite returns the largest magnitude among the values of x of the
// other sign than ext (0 if none).
func opposite(x []float32, ext float32) (opp float32) {
	for _, v := range x {
		if ext > 0 {
			opp = max(opp, -v)
		} else {
			opp = max(opp, v)
		}
	}
	return opp
}
