package gguf

import "math"

// F16ToF32 converts an IEEE 754 binary16 value to float32 (exact).
//
// The f16 exponent and mantissa bits are moved into f32 position and the
// result scaled by 2^112 (the exponent bias difference 127−15), which is
// exact and also renormalises f16 subnormals; only Inf/NaN need a branch.
func F16ToF32(h uint16) float32 {
	bits := uint32(h&0x7fff) << 13
	f := math.Float32frombits(bits) * 0x1p112
	if h&0x7c00 == 0x7c00 {
		f = math.Float32frombits(bits | 0x7f800000)
	}
	return math.Float32frombits(math.Float32bits(f) | uint32(h&0x8000)<<16)
}

// F32ToF16 converts float32 to binary16 with round-to-nearest-even.
// Values beyond the f16 range become ±Inf; NaN stays NaN (quiet).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 31 {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal f16 (or zero): unit 2^-24.
		if e < -10 {
			return sign // below half the smallest subnormal
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		q := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++
		}
		return sign | uint16(q)
	}
	q := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && q&1 == 1) {
		q++ // may carry into the exponent, up to Inf: both correct
	}
	return sign | uint16(q)
}

// BF16ToF32 converts a bfloat16 value to float32 (exact: the high half).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts float32 to bfloat16 with round-to-nearest-even; NaN
// stays NaN (quiet bit set), large finite values round to ±Inf as in IEEE.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
