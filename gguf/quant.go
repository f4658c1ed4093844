package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Quantize converts src to type t into dst, which must be exactly
// RowBytes(t, len(src)) long. It does not allocate. Supported targets:
//
//   - F32: the bits as is.
//   - F16: round-to-nearest-even; beyond ±65504 (after rounding) gives ±Inf.
//   - BF16: round-to-nearest-even on the high 16 bits; NaN stays NaN.
//   - Q8_0: per block of 32, d = amax/127 stored as f16, q = round(x/d)
//     (half away from zero, as llama.cpp's roundf), clamped to [-127, 127];
//     an all-zero block stores d = 0, q = 0. x/d uses the f32 d before f16
//     rounding, as llama.cpp's reference quantiser does.
//   - Q4_0: per block of 32, ggml's rule: max is the value of largest
//     magnitude with its sign, d = max/−8 stored as f16, q = x/d + 8
//     rounded half up and clamped to 0..15 (x/d with the f32 d). That puts
//     max on q = 0, the end of the grid's longer side (q − 8 in −8..7), so
//     only values of the other sign beyond 7.5 steps clamp, at most one
//     step off. An all-zero block stores d = −0 (as ggml), q = 8.
//   - Q5_0: as Q4_0 with d = max/−16, q = x/d + 16 in 0..31, the fifth bit
//     in qh; an all-zero block stores q = 16.
//   - Q3_K: per superblock, sixteen sub-blocks of 16 with x ≈ d·sc·k,
//     k in −4..3, 6-bit sc in −32..31. Naive step s = −ext/4 maps each
//     sub-block's extreme value ext to −4 (the finer of the two signs),
//     d = max|s|/31 (f16); each sub-block takes the scale with the least
//     squared error among round(s/d)±1, the scales 2 to 5 units finer, the
//     ext-to-+3 scale ±1 and two least-squares refits, within the naive
//     choice's worst-error bound; k = round(x/(d·sc)), clamped.
//   - Q4_K: per superblock of 256, eight sub-blocks of 32 with
//     x ≈ d·sc·q − dmin·mn, q in 0..15, 6-bit sc and mn. A sub-block's naive
//     step s = (max + m)/15 and min m = max(0, −min) cover its range;
//     d = max s/63 and dmin = max m/63 (f16). Each sub-block then takes the
//     (sc, mn) with the least squared error among round(s/d)±1 ×
//     round(m/dmin)±1, the covering grid (both rounded up) and two
//     least-squares refits, provided its worst error stays within the naive
//     choice's bound; q is the nearest grid point for the decoded f16·6-bit
//     step and offset.
//   - Q5_K: as Q4_K with q in 0..31 (s = range/31) and the fifth bit in qh.
//   - Q6_K: per superblock, sixteen sub-blocks of 16 with
//     x ≈ d·sc·(q − 32), q in 0..63, int8 sc within ±127. Naive symmetric
//     step s = amax/31, d = max s/127 (f16); each sub-block takes the scale
//     with the least squared error among round(s/d)±1, the opposite-sign
//     scale mapping its extreme value to −32 (±1), and two least-squares
//     refits, within the naive choice's worst-error bound; q = 32 +
//     round(x/(d·sc)), clamped.
//   - IQ4_NL: per block of 32, x ≈ d·v with v = iq4Values[q], a codebook
//     of 16 levels from −127 to 113, denser near 0 (gaps 11 to 24). The
//     naive d = ext/−127, ext the first value of largest magnitude with its
//     sign, puts ext on −127, the codebook's longer end, so only values of
//     the other sign beyond 113 steps clamp (at most 14 off). The stored
//     f16 d is the one with the least squared error among that, the steps
//     putting ext on −127 + t (t = ±1..±7) or on +113, and two
//     least-squares refits (Σv·x/Σv² over the current codes), within the
//     naive choice's worst-error bound; q is the level nearest x·(1/d) for
//     the f16 d (a tie to the lower). An all-zero block stores d = −0 and
//     q = 8 (the level 1).
//   - IQ4_XS: per superblock, eight sub-blocks of 32 with
//     x ≈ d·(ls − 32)·v, v as IQ4_NL's, 6-bit ls. Each sub-block's naive
//     step is s = ext/−127 as IQ4_NL's; d = smax/−32 (f16), smax the s of
//     largest magnitude with its sign, so that sub-block's ls − 32 is −32.
//     Each sub-block takes the scale with the least squared error among
//     round(s/d)±1, the scales 2 and 3 units finer, the ext-to-+113 scale
//     round(ext/(113d))±1 and two least-squares refits, within the naive
//     choice's worst-error bound; q is the level nearest x/(d·(ls − 32)).
//     An all-zero superblock stores d = −0, ls = 32 and q = 8.
//
// Q8_0, Q4_0, Q5_0 and IQ4_NL need whole blocks (len(src) a multiple of
// 32), the K types and IQ4_XS whole superblocks (a multiple of 256). For
// the quantised types every value must be finite and within
// ±QuantLimit(t), the range the f16 scales hold; otherwise Quantize returns
// a *RangeError (beyond it a block would decode to Inf or NaN). F32, F16
// and BF16 take any value, as llama.cpp's converter does.
func Quantize(t Type, src []float32, dst []byte) error {
	if bs := t.BlockSize(); t.Valid() && len(src)%bs != 0 {
		return fmt.Errorf("gguf: quantize %v: %d elements is not a multiple of its block size %d", t, len(src), bs)
	}
	want, err := RowBytes(t, int64(len(src)))
	if err != nil {
		return fmt.Errorf("gguf: quantize: %w", err)
	}
	if int64(len(dst)) != want {
		return fmt.Errorf("gguf: quantize %v: dst is %d bytes for %d elements, want %d", t, len(dst), len(src), want)
	}
	if lim := QuantLimit(t); lim > 0 {
		for i, x := range src {
			if !(x <= lim && x >= -lim) { // NaN fails
				return &RangeError{Type: t, Index: i, Value: x, Limit: lim}
			}
		}
	}
	switch t {
	case TypeF32:
		for i, x := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
		}
	case TypeF16:
		for i, x := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(x))
		}
	case TypeBF16:
		for i, x := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(x))
		}
	case TypeQ8_0:
		for b := 0; b < len(src)/32; b++ {
			quantQ8_0(src[32*b:32*b+32], dst[34*b:34*b+34])
		}
	case TypeQ4_0:
		for b := 0; b < len(src)/32; b++ {
			quantQ0Block(src[32*b:32*b+32], dst[18*b:18*b+18], false)
		}
	case TypeQ5_0:
		for b := 0; b < len(src)/32; b++ {
			quantQ0Block(src[32*b:32*b+32], dst[22*b:22*b+22], true)
		}
	case TypeQ3_K:
		for b := 0; b < len(src)/qkK; b++ {
			quantQ3_KBlock(src[qkK*b:qkK*b+qkK], dst[110*b:110*b+110])
		}
	case TypeQ4_K:
		for b := 0; b < len(src)/qkK; b++ {
			quantQ45KBlock(src[qkK*b:qkK*b+qkK], dst[144*b:144*b+144], false)
		}
	case TypeQ5_K:
		for b := 0; b < len(src)/qkK; b++ {
			quantQ45KBlock(src[qkK*b:qkK*b+qkK], dst[176*b:176*b+176], true)
		}
	case TypeQ6_K:
		for b := 0; b < len(src)/qkK; b++ {
			quantQ6_KBlock(src[qkK*b:qkK*b+qkK], dst[210*b:210*b+210])
		}
	case TypeIQ4_NL:
		for b := 0; b < len(src)/32; b++ {
			quantIQ4_NLBlock(src[32*b:32*b+32], dst[18*b:18*b+18])
		}
	case TypeIQ4_XS:
		for b := 0; b < len(src)/qkK; b++ {
			quantIQ4_XSBlock(src[qkK*b:qkK*b+qkK], dst[136*b:136*b+136])
		}
	default:
		return fmt.Errorf("gguf: quantize: type %v is not supported (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS are)", t)
	}
	return nil
}

// QuantLimit is the largest |x| Quantize accepts for t, or 0 for F32, F16
// and BF16 (no limit). The f16 scales top out at 65504: Q8_0 stores
// d = amax/127; Q4_0 and Q5_0 store |d| = amax/8 and amax/16; Q3_K
// stores d = (amax/4)/31; Q4_K and Q5_K store dmin = max(−min)/63 (the
// step d is smaller); Q6_K stores d = amax/(31·127). IQ4_NL's naive d is
// amax/127, and the search skips any step whose f16 is infinite, so the
// stored d is finite while that one is; IQ4_XS stores |d| = amax/(127·32)
// (its sub-block steps d·(ls − 32) are float32).
func QuantLimit(t Type) float32 {
	switch t {
	case TypeQ8_0:
		return 65504 * 127
	case TypeQ4_0:
		return 65504 * 8
	case TypeQ5_0:
		return 65504 * 16
	case TypeQ3_K:
		return 65504 * 4 * 31
	case TypeQ4_K, TypeQ5_K:
		return 65504 * 63
	case TypeQ6_K:
		return 65504 * 127 * 31
	case TypeIQ4_NL:
		return 65504 * 127
	case TypeIQ4_XS:
		return 65504 * 127 * 32
	}
	return 0
}

// RangeError is Quantize's error for a value outside ±QuantLimit(Type):
// src[Index] is Value.
type RangeError struct {
	Type  Type
	Index int
	Value float32
	Limit float32
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("gguf: quantize %v: element %d is %g, outside the ±%g that %v's f16 scales hold", e.Type, e.Index, e.Value, e.Limit, e.Type)
}

// CanQuantize reports whether Quantize supports t.
func CanQuantize(t Type) bool {
	switch t {
	case TypeF32, TypeF16, TypeBF16, TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_NL, TypeIQ4_XS:
		return true
	}
	return false
}

func quantQ8_0(x []float32, out []byte) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(out, F32ToF16(d))
	for j, v := range x {
		q := math.Round(float64(v * id))
		q = max(-127, min(127, q))
		out[2+j] = byte(int8(q))
	}
}
