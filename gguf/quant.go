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
func Quantize(t Type, src []float32, dst []byte) error {
	want, err := RowBytes(t, int64(len(src)))
	if err != nil {
		return fmt.Errorf("gguf: quantize: %w", err)
	}
	if int64(len(dst)) != want {
		return fmt.Errorf("gguf: quantize %v: dst is %d bytes for %d elements, want %d", t, len(dst), len(src), want)
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
	default:
		return fmt.Errorf("gguf: quantize: type %v is not supported (F32, F16, BF16, Q8_0 are)", t)
	}
	return nil
}

// CanQuantize reports whether Quantize supports t.
func CanQuantize(t Type) bool {
	switch t {
	case TypeF32, TypeF16, TypeBF16, TypeQ8_0:
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
