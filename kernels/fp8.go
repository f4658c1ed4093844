package kernels

import "math"

// E4M3ToFloat32 decodes one fp8 e4m3 (OCP E4M3FN: bias 7, no infinities,
// NaN = S.1111.111, max 448) byte. It mirrors memra_e4m3_to_f32 in
// common.cuh bit for bit, so the CPU backend can reproduce the GPU's fp8 KV
// cache exactly.
func E4M3ToFloat32(b uint8) float32 {
	s := uint32(b&0x80) << 24
	e := uint32(b>>3) & 0xf
	m := uint32(b) & 0x7
	switch {
	case e == 0:
		v := float32(m) * 0.001953125 // m * 2^-9, exact
		return math.Float32frombits(math.Float32bits(v) | s)
	case e == 15 && m == 7:
		return math.Float32frombits(0x7fc00000 | s)
	}
	return math.Float32frombits(s | (e+120)<<23 | m<<20)
}

// E4M3FromFloat32 encodes x as e4m3, rounding to nearest even and saturating
// to +-448 (infinities too); NaN gives 0x7f with the sign kept. It mirrors
// memra_f32_to_e4m3 in common.cuh bit for bit.
func E4M3FromFloat32(x float32) uint8 {
	bits := math.Float32bits(x)
	s := uint8(bits>>24) & 0x80
	a := bits & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return s | 0x7f
	case a >= 0x43e00000: // 448
		return s | 0x7e
	case a < 0x3c800000: // 2^-6: subnormal; |x|*2^9 is exact
		q := math.RoundToEven(float64(math.Float32frombits(a) * 512))
		return s | uint8(q)
	}
	base := a >> 20
	rest := a & 0xfffff
	if rest > 0x80000 || (rest == 0x80000 && base&1 == 1) {
		base++
	}
	code := base - 120<<3
	if code > 0x7e {
		code = 0x7e
	}
	return s | uint8(code)
}

// KVScaleFP8 returns the per-vector scale kv_store_fp8 stores (amax/448) and
// the factor it multiplies by before encoding (448/amax; 0 when amax is 0),
// both as the kernel computes them in f32.
func KVScaleFP8(amax float32) (scale, inv float32) {
	if amax > 0 {
		inv = 448 / amax
	}
	return amax / 448, inv
}
