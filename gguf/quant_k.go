package gguf

import (
	"encoding/binary"
	"math"
)

// K-quant quantisers (Q4_K, Q5_K, Q6_K here; Q3_K in quant_q3k.go, whose
// scale search is Q6_K's, searchScale, as is IQ4_XS's in quant_iq4.go).
// The block layouts are the ones dequant.go decodes; every choice below is
// checked against that decoder.
//
// All of them work in two stages per 256-value superblock:
//
//  1. A naive, range-covering scale per sub-block (and min for Q4_K/Q5_K)
//     fixes the superblock's f16 super-scales d (and dmin) as the largest
//     sub-block scale over 63 (6-bit) or 127 (int8).
//  2. Each sub-block then picks its integer scale (and min) from a few
//     candidates near the naive one plus least-squares refits, keeping the
//     one with the least squared error. A candidate is only accepted when its
//     worst error stays within the analytic bound of the naive choice, so the
//     max-error guarantee of the naive quantiser is kept while the typical
//     error drops (the candidates may clip a sub-block's extremes a little).
//
// Every candidate is scored on the values the decoder will produce: the
// step and offset are the f32 products of the stored f16 super-scale and the
// integer sub-scale, exactly as dequant.go forms them, and the quants are the
// nearest grid points for that step and offset.

// qkK is the number of values in a K-quant superblock.
const qkK = 256

// quantQ45KBlock encodes 256 values as one Q4_K block (144 bytes: d f16 |
// dmin f16 | scales[12] | qs[128]) or, with five, one Q5_K block (176 bytes:
// the same with qh[32] before qs).
func quantQ45KBlock(x []float32, out []byte, five bool) {
	var q [qkK]uint8
	var sc, mn [8]uint8
	nmax, qsOff := 15, 16
	if five {
		nmax, qsOff = 31, 48
	}
	dh, mh := quantKAffine(x, nmax, &q, &sc, &mn)
	binary.LittleEndian.PutUint16(out[0:], dh)
	binary.LittleEndian.PutUint16(out[2:], mh)
	packScaleMinK4(&sc, &mn, out[4:16])
	qs := out[qsOff : qsOff+128]
	qh := out[16:48]
	if five {
		clear(qh)
	}
	for k := 0; k < 4; k++ {
		// Chunk k: sub-block 2k in the low nibbles, 2k+1 in the high ones;
		// Q5_K's fifth bit of sub-block 2k goes to bit 2k of qh[l], that of
		// 2k+1 to bit 2k+1.
		for l := 0; l < 32; l++ {
			lo, hi := q[64*k+l], q[64*k+32+l]
			qs[32*k+l] = lo&0xf | (hi&0xf)<<4
			if five {
				qh[l] |= (lo>>4)<<(2*k) | (hi>>4)<<(2*k+1)
			}
		}
	}
}

// quantKAffine computes the Q4_K (nmax 15) or Q5_K (nmax 31) parameters of
// one superblock: eight sub-blocks of 32 with x ≈ d·sc·q − dmin·mn,
// q in 0..nmax, sc and mn 6-bit. It returns the f16 bits of d and dmin and
// fills q, sc, mn.
//
// Naive stage, per sub-block: m = max(0, −min x) and s = (max x + m)/nmax,
// so the grid {s·q − m} spans [min(min x, 0), max x] (the format's min is
// subtracted, hence m ≥ 0; an all-positive sub-block keeps 0 as its lowest
// point). d = max s/63 and dmin = max m/63, rounded to f16.
func quantKAffine(x []float32, nmax int, q *[qkK]uint8, sc, mn *[8]uint8) (dh, mh uint16) {
	var s, m [8]float32
	var smax, mmax float32
	for j := 0; j < 8; j++ {
		lo, hi := minMax(x[32*j : 32*j+32])
		m[j] = max(0, -lo)
		s[j] = (hi + m[j]) / float32(nmax)
		smax, mmax = max(smax, s[j]), max(mmax, m[j])
	}
	dh, mh = F32ToF16(smax/63), F32ToF16(mmax/63)
	d, dmin := F16ToF32(dh), F16ToF32(mh)
	for j := 0; j < 8; j++ {
		sub := x[32*j : 32*j+32]
		c, n := searchAffine(sub, s[j], m[j], d, dmin, nmax)
		sc[j], mn[j] = uint8(c), uint8(n)
		affineQuants(sub, d*float32(c), dmin*float32(n), nmax, q[32*j:32*j+32])
	}
	return dh, mh
}

// affineBound is the worst error of the naive sub-block choice
// sc = round(s/d), mn = round(m/dmin) (clamped to 63), decoded with step
// S = d·sc and offset M = dmin·mn. The data lie in [−m, nmax·s − m]; the
// grid spans [−M, nmax·S − M]. Inside the grid a value is at most S/2 from
// a point; below it at most m − M; above it at most nmax·(s − S) + (M − m).
// With es ≥ |s − S| and em ≥ |m − M| (half a unit of d or dmin, unless the
// clamp at 63 cuts deeper, which only happens when d is an f16 subnormal)
// that is at most (s + es)/2 + nmax·es + em.
func affineBound(s, m, d, dmin float32, nmax int) float32 {
	es := max(d/2, s-63*d)
	em := max(dmin/2, m-63*dmin)
	return (s+es)/2 + float32(nmax)*es + em
}

// searchAffine returns a sub-block's 6-bit scale and min: the naive
// round(s/d), round(m/dmin), or the candidate with the least squared error
// among its neighbours ±1 in sc and mn, the covering grid (both rounded
// up) and two least-squares refits, whose worst error stays within
// affineBound.
func searchAffine(x []float32, s, m, d, dmin float32, nmax int) (sc, mn int) {
	sc, mn = roundScale(s, d, 0, 63), roundScale(m, dmin, 0, 63)
	inf := float32(math.Inf(1))
	best, _ := affineErr(x, d*float32(sc), dmin*float32(mn), nmax, inf, inf)
	limit := affineBound(s, m, d, dmin, nmax)
	limit += limit * 0x1p-20 // float32 slack so ties with the bound pass
	try := func(c, n int) {
		if c < 0 || c > 63 || n < 0 || n > 63 || (c == sc && n == mn) {
			return
		}
		if (d == 0 && c != 0) || (dmin == 0 && n != 0) {
			return // the same grid as c or n = 0
		}
		if e, ok := affineErr(x, d*float32(c), dmin*float32(n), nmax, limit, best); ok {
			best, sc, mn = e, c, n
		}
	}
	c0, n0 := sc, mn
	for c := c0 - 1; c <= c0+1; c++ {
		for n := n0 - 1; n <= n0+1; n++ {
			try(c, n)
		}
	}
	// The covering grid: mn rounded up so −M ≤ min, then sc rounded up so
	// the top point reaches max x as well (unless clamped at 63).
	if dmin > 0 || d > 0 {
		n := ceilScale(m, dmin)
		c := ceilScale(s+(dmin*float32(n)-m)/float32(nmax), d)
		try(c, n)
	}
	// Least squares: for the current best quants, the S and M minimising
	// Σ(S·q − M − x)² (M ≥ 0), rounded to the 6-bit grid.
	var qb [32]uint8
	for it := 0; it < 2; it++ {
		affineQuants(x, d*float32(sc), dmin*float32(mn), nmax, qb[:])
		var sq, sqq, sx, sqx float64
		for i, v := range x {
			k := float64(qb[i])
			sq += k
			sqq += k * k
			sx += float64(v)
			sqx += k * float64(v)
		}
		n := float64(len(x))
		den := n*sqq - sq*sq
		if den <= 0 {
			break // all quants equal: the step is not determined
		}
		S := (n*sqx - sq*sx) / den
		M := (S*sq - sx) / n
		if M < 0 {
			M, S = 0, sqx/sqq
		}
		c, k := roundScale(float32(S), d, 0, 63), roundScale(float32(M), dmin, 0, 63)
		if c == sc && k == mn {
			break
		}
		try(c, k)
	}
	return sc, mn
}

// affineQuant is the index of the point of the grid {S·k − M, k = 0..nmax}
// nearest to v (inv = 1/S, or 0 when S is 0: every point is −M). The
// clamp comes first so the conversion is always in range (NaN gives 0).
func affineQuant(v, M, inv, fmax float32) float32 {
	t := (v + M) * inv
	if !(t > 0) {
		t = 0
	}
	return float32(int32(min(t, fmax) + 0.5))
}

// affineQuants sets q to the nearest grid indices for step S and offset M.
func affineQuants(x []float32, S, M float32, nmax int, q []uint8) {
	inv, fmax := recip(S), float32(nmax)
	for i, v := range x {
		q[i] = uint8(affineQuant(v, M, inv, fmax))
	}
}

// affineErr returns the squared error of x rounded to the grid for step S
// and offset M, decoded as the decoder does (S·k − M), and whether it is
// below best with no error above limit; it stops early once it is not.
func affineErr(x []float32, S, M float32, nmax int, limit, best float32) (sse float32, ok bool) {
	inv, fmax := recip(S), float32(nmax)
	for _, v := range x {
		e := S*affineQuant(v, M, inv, fmax) - M - v
		sse += float32(e * e) // rounded: arm64 would fuse it into an FMA and pick other scales
		if e > limit || -e > limit || sse >= best {
			return sse, false
		}
	}
	return sse, true
}

func recip(S float32) float32 {
	if S == 0 {
		return 0
	}
	return 1 / S
}

// packScaleMinK4 stores eight 6-bit scales and mins in the 12-byte Q4_K/Q5_K
// field, the inverse of unpackScaleMinK4: sub-blocks 0..3 in the low 6 bits of
// bytes j (scale) and j+4 (min); 4..7 as nibbles in byte j+4 (scale low,
// min high) with their top 2 bits in bits 6-7 of bytes j−4 (scale) and j
// (min).
func packScaleMinK4(sc, mn *[8]uint8, s []byte) {
	s = s[:12]
	for j := 0; j < 4; j++ {
		s[j] = sc[j] & 63
		s[j+4] = mn[j] & 63
	}
	for j := 4; j < 8; j++ {
		s[j+4] = sc[j]&0xf | (mn[j]&0xf)<<4
		s[j-4] |= (sc[j] >> 4) << 6
		s[j] |= (mn[j] >> 4) << 6
	}
}

// quantQ6_KBlock encodes 256 values as one 210-byte Q6_K block:
// ql[128] | qh[64] | scales[16] int8 | d f16. Sixteen sub-blocks of 16 with
// x ≈ d·sc·(q − 32), q in 0..63, sc int8.
//
// Naive stage: a symmetric step s = amax/31 per sub-block (q − 32 within
// ±31 covers ±amax; −32 is left as spare room), d = max s/127 in f16, and
// sc = round(s/d). The search then also tries the opposite-sign scale that
// maps the sub-block's extreme value to −32 (one level finer, as ggml's
// reference does), neighbours of both and a least-squares refit; scales
// are kept within ±127.
func quantQ6_KBlock(x []float32, out []byte) {
	var s, ext [16]float32
	var smax float32
	for j := 0; j < 16; j++ {
		var amax float32
		amax, ext[j] = extreme(x[16*j : 16*j+16])
		s[j] = amax / 31
		smax = max(smax, s[j])
	}
	dh := F32ToF16(smax / 127)
	d := F16ToF32(dh)
	var q [qkK]uint8
	for j := 0; j < 16; j++ {
		sub := x[16*j : 16*j+16]
		c := searchScale(q6Grid, sub, s[j], -ext[j]/32, d, symBound(s[j], d), 0)
		out[192+j] = byte(int8(c))
		q6Grid.codes(sub, d*float32(c), q[16*j:16*j+16])
	}
	binary.LittleEndian.PutUint16(out[208:], dh)
	packQ6_K(&q, out)
}

// packQ6_K writes a superblock's 6-bit codes q (0..63, column order) into
// the ql and qh fields of the Q6_K block out.
func packQ6_K(q *[qkK]uint8, out []byte) {
	for n := 0; n < 2; n++ {
		// Half n: values l, l+32, l+64, l+96 of its 128 share qh[l]'s bit
		// pairs 0-1, 2-3, 4-5, 6-7; their low nibbles go to ql[l] (l, l+64)
		// and ql[l+32] (l+32, l+96), low then high.
		ql := out[64*n : 64*n+64]
		qh := out[128+32*n : 128+32*n+32]
		v := q[128*n : 128*n+128]
		for l := 0; l < 32; l++ {
			a, b, c, e := v[l], v[l+32], v[l+64], v[l+96]
			ql[l] = a&0xf | (c&0xf)<<4
			ql[l+32] = b&0xf | (e&0xf)<<4
			qh[l] = a>>4 | (b>>4)<<2 | (c>>4)<<4 | (e>>4)<<6
		}
	}
}

// symBound is the worst error of the naive Q6_K choice sc = round(s/d)
// (clamped to 127), step S = d·sc: the data lie in [−31s, 31s], the grid
// reaches ±31·S, so a value is at most S/2 from a point inside it and at
// most 31·(s − S) beyond it. With es ≥ |s − S| (half a unit of d unless the
// clamp cuts deeper, only for a subnormal d): (s + es)/2 + 31·es.
func symBound(s, d float32) float32 {
	es := max(d/2, s-127*d)
	return (s+es)/2 + 31*es
}

// signedGrid is a K-quant sub-block grid without offset, {S·k,
// k = kLo..kHi} with step S = d·sc, d the f16 super-scale and sc a signed
// integer scale in scLo..scHi. The block stores the code k − kLo.
type signedGrid struct {
	kLo, kHi   float32
	scLo, scHi int
}

var (
	q6Grid = signedGrid{kLo: -32, kHi: 31, scLo: -127, scHi: 127} // int8 scale
	q3Grid = signedGrid{kLo: -4, kHi: 3, scLo: -32, scHi: 31}     // 6-bit scale
)

// scaleGrid is a sub-block grid without offset, {S·k} for levels k, with
// step S = d·sc, d the f16 super-scale and sc an integer scale in scRange:
// signedGrid's uniform levels (Q3_K, Q6_K) or IQ4_XS's codebook (iq4Grid).
type scaleGrid interface {
	scRange() (lo, hi int)
	// err is the squared error of x on the grid for step S, each value at
	// its nearest level, and whether it is below best with no error above
	// limit (it stops early once it is not).
	err(x []float32, S, limit, best float32) (sse float32, ok bool)
	// fit returns Σk² and Σk·x over the levels k nearest x for step S.
	fit(x []float32, S float32) (skk, skx float64)
}

// searchScale returns a sub-block's scale on grid g: the naive round(s/d),
// or the least-squared-error candidate among its neighbours ±1, round(alt/d)
// and its neighbours, the scales 2 to finer units smaller in magnitude than
// the naive one, and two least-squares refits, whose worst error stays
// within bound (the naive choice's).
func searchScale[G scaleGrid](g G, x []float32, s, alt, d, bound float32, finer int) int {
	scLo, scHi := g.scRange()
	sc := roundScale(s, d, scLo, scHi)
	if d == 0 {
		return sc
	}
	inf := float32(math.Inf(1))
	best, _ := g.err(x, d*float32(sc), inf, inf)
	limit := bound + bound*0x1p-20 // float32 slack so ties with the bound pass
	try := func(c int) {
		if c < scLo || c > scHi || c == sc {
			return
		}
		if e, ok := g.err(x, d*float32(c), limit, best); ok {
			best, sc = e, c
		}
	}
	c0 := sc
	ce := roundScale(alt, d, scLo, scHi)
	for k := -1; k <= 1; k++ {
		try(c0 + k)
		try(ce + k)
	}
	// Finer steps: they clip the extreme a little but fit the bulk
	// better, which the squared error favours when values crowd away from
	// the extreme.
	step := 1
	if c0 > 0 {
		step = -1
	}
	for k := 2; k <= finer && k < c0*-step; k++ {
		try(c0 + step*k)
	}
	for it := 0; it < 2; it++ {
		// S minimising Σ(S·k − x)² for the current levels k.
		skk, skx := g.fit(x, d*float32(sc))
		if skk == 0 {
			break
		}
		c := roundScale(float32(skx/skk), d, scLo, scHi)
		if c == sc {
			break
		}
		try(c)
	}
	return sc
}

func (g signedGrid) scRange() (lo, hi int) { return g.scLo, g.scHi }

func (g signedGrid) fit(x []float32, S float32) (skk, skx float64) {
	inv := recip(S)
	for _, v := range x {
		k := float64(g.code(v, inv) + g.kLo)
		skk += k * k
		skx += k * float64(v)
	}
	return skk, skx
}

// code is the code k − kLo of the k in kLo..kHi with S·k nearest to v
// (inv = 1/S, or 0 when S is 0, giving −kLo). The clamp comes first so
// the conversion is in range and truncation is floor (NaN gives 0).
func (g signedGrid) code(v, inv float32) float32 {
	t := v * inv
	if !(t > g.kLo) {
		t = g.kLo
	}
	return float32(int32(min(t, g.kHi) + (0.5 - g.kLo)))
}

// codes sets q to the codes of x for step S.
func (g signedGrid) codes(x []float32, S float32, q []uint8) {
	inv := recip(S)
	for i, v := range x {
		q[i] = uint8(g.code(v, inv))
	}
}

// err is affineErr for the grid {S·k}. S·k is exact in float32 (S = d·sc
// has at most 11 + 7 significant bits, k at most 6), so it is the value the
// decoder forms.
func (g signedGrid) err(x []float32, S, limit, best float32) (sse float32, ok bool) {
	inv := recip(S)
	for _, v := range x {
		e := float32(S*(g.code(v, inv)+g.kLo)) - v
		sse += float32(e * e) // rounded: arm64 would fuse it into an FMA and pick other scales
		if e > limit || -e > limit || sse >= best {
			return sse, false
		}
	}
	return sse, true
}

// roundScale returns round(v/unit) clamped to [lo, hi]; 0 (or lo) when unit
// is 0, where every integer scale decodes the same.
func roundScale(v, unit float32, lo, hi int) int {
	if unit == 0 {
		return max(lo, 0)
	}
	r := math.Round(float64(v) / float64(unit))
	if !(r >= float64(lo)) { // also NaN
		return lo
	}
	return int(min(r, float64(hi)))
}

// ceilScale returns ceil(v/unit) clamped to [0, 63] (0 when unit is 0).
func ceilScale(v, unit float32) int {
	if unit == 0 {
		return 0
	}
	r := math.Ceil(float64(v) / float64(unit))
	if !(r >= 0) {
		return 0
	}
	return int(min(r, 63))
}

// extreme returns the largest magnitude in x and the first value of x with
// it, sign kept (0, 0 when x is all zeros).
func extreme(x []float32) (amax, ext float32) {
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, ext = a, v
		}
	}
	return amax, ext
}

func minMax(x []float32) (lo, hi float32) {
	lo, hi = x[0], x[0]
	for _, v := range x[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}
