package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Dequantize converts len(dst) elements stored as type t in src to float32.
// len(dst) must be a multiple of t's block size and len(src) must be exactly
// RowBytes(t, len(dst)). It does not allocate, so the CPU backend can call
// it per row or per block on its hot path.
//
// Supported: F32, F16, BF16, F64, I8, I16, I32, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL, IQ4_XS.
func Dequantize(t Type, src []byte, dst []float32) error {
	if !t.Valid() {
		return fmt.Errorf("gguf: dequantize: unsupported type %v", t)
	}
	bs, bb := t.BlockSize(), t.BlockBytes()
	if len(dst)%bs != 0 {
		return fmt.Errorf("gguf: dequantize %v: %d elements is not a multiple of the block size %d", t, len(dst), bs)
	}
	nb := len(dst) / bs
	if len(src) != nb*bb {
		return fmt.Errorf("gguf: dequantize %v: %d bytes for %d elements, want %d", t, len(src), len(dst), nb*bb)
	}
	switch t {
	case TypeF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case TypeF16:
		for i := range dst {
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case TypeBF16:
		for i := range dst {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case TypeF64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
		}
	case TypeI8:
		for i := range dst {
			dst[i] = float32(int8(src[i]))
		}
	case TypeI16:
		for i := range dst {
			dst[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:])))
		}
	case TypeI32:
		for i := range dst {
			dst[i] = float32(int32(binary.LittleEndian.Uint32(src[4*i:])))
		}
	default:
		f := blockDequantizer(t)
		if f == nil {
			return fmt.Errorf("gguf: dequantize: type %v is not supported", t)
		}
		for b := range nb {
			f(src[b*bb:(b+1)*bb], dst[b*bs:(b+1)*bs])
		}
	}
	return nil
}

// CanDequantize reports whether Dequantize supports t.
func CanDequantize(t Type) bool {
	switch t {
	case TypeF32, TypeF16, TypeBF16, TypeF64, TypeI8, TypeI16, TypeI32:
		return true
	}
	return blockDequantizer(t) != nil
}

func blockDequantizer(t Type) func(b []byte, y []float32) {
	switch t {
	case TypeQ4_0:
		return dequantQ4_0
	case TypeQ4_1:
		return dequantQ4_1
	case TypeQ5_0:
		return dequantQ5_0
	case TypeQ5_1:
		return dequantQ5_1
	case TypeQ8_0:
		return dequantQ8_0
	case TypeQ8_1:
		return dequantQ8_1
	case TypeQ2_K:
		return dequantQ2_K
	case TypeQ3_K:
		return dequantQ3_K
	case TypeQ4_K:
		return dequantQ4_K
	case TypeQ5_K:
		return dequantQ5_K
	case TypeQ6_K:
		return dequantQ6_K
	case TypeIQ4_NL:
		return dequantIQ4_NL
	case TypeIQ4_XS:
		return dequantIQ4_XS
	case TypeQ8_K:
		return dequantQ8_K
	}
	return nil
}

func f16at(b []byte, i int) float32 { return F16ToF32(binary.LittleEndian.Uint16(b[i:])) }

// Q4_0: d f16 | qs[16]. Element j (0..15) is the low nibble of qs[j],
// element j+16 the high nibble; value (q-8)·d.
func dequantQ4_0(b []byte, y []float32) {
	d := f16at(b, 0)
	qs := b[2:18]
	y = y[:32]
	for j, q := range qs {
		y[j] = float32(int(q&0xf)-8) * d
		y[j+16] = float32(int(q>>4)-8) * d
	}
}

// Q4_1: d f16 | m f16 | qs[16]; value q·d + m.
func dequantQ4_1(b []byte, y []float32) {
	d, m := f16at(b, 0), f16at(b, 2)
	qs := b[4:20]
	y = y[:32]
	for j, q := range qs {
		y[j] = float32(q&0xf)*d + m
		y[j+16] = float32(q>>4)*d + m
	}
}

// Q5_0: d f16 | qh u32 | qs[16]. Bit j of qh is bit 4 of element j;
// value (q-16)·d.
func dequantQ5_0(b []byte, y []float32) {
	d := f16at(b, 0)
	qh := binary.LittleEndian.Uint32(b[2:])
	qs := b[6:22]
	y = y[:32]
	for j, q := range qs {
		h0 := byte(qh>>j) & 1 << 4
		h1 := byte(qh>>(j+16)) & 1 << 4
		y[j] = float32(int(q&0xf|h0)-16) * d
		y[j+16] = float32(int(q>>4|h1)-16) * d
	}
}

// Q5_1: d f16 | m f16 | qh u32 | qs[16]; value q·d + m.
func dequantQ5_1(b []byte, y []float32) {
	d, m := f16at(b, 0), f16at(b, 2)
	qh := binary.LittleEndian.Uint32(b[4:])
	qs := b[8:24]
	y = y[:32]
	for j, q := range qs {
		h0 := byte(qh>>j) & 1 << 4
		h1 := byte(qh>>(j+16)) & 1 << 4
		y[j] = float32(q&0xf|h0)*d + m
		y[j+16] = float32(q>>4|h1)*d + m
	}
}

// Q8_0: d f16 | qs[32] int8; value q·d.
func dequantQ8_0(b []byte, y []float32) {
	d := f16at(b, 0)
	qs := (*[32]byte)(b[2:34])
	out := (*[32]float32)(y)
	for j, q := range qs {
		out[j] = float32(int8(q)) * d
	}
}

// Q8_1: d f16 | s f16 (d·Σq, unused here) | qs[32] int8; value q·d.
func dequantQ8_1(b []byte, y []float32) {
	d := f16at(b, 0)
	qs := b[4:36]
	y = y[:32]
	for j, q := range qs {
		y[j] = float32(int8(q)) * d
	}
}

// Q2_K (256 elements): scales[16] | qs[64] | d f16 | dmin f16. Sixteen
// sub-blocks of 16; scales[i] low nibble scales d, high nibble scales dmin.
// qs byte l of each 32-byte half holds 2-bit values for four sub-blocks at
// shifts 0, 2, 4, 6; value d·sc·q − dmin·m.
func dequantQ2_K(b []byte, y []float32) {
	scales := b[0:16]
	qs := b[16:80]
	d, dmin := f16at(b, 80), f16at(b, 82)
	y = y[:256]
	is := 0
	for n := 0; n < 2; n++ {
		q := qs[32*n : 32*n+32]
		for j := 0; j < 4; j++ {
			shift := uint(2 * j)
			for h := 0; h < 2; h++ {
				sc := scales[is]
				is++
				dl := d * float32(sc&0xf)
				ml := dmin * float32(sc>>4)
				out := y[128*n+32*j+16*h : 128*n+32*j+16*h+16]
				qq := q[16*h : 16*h+16]
				for l := range out {
					out[l] = dl*float32(qq[l]>>shift&3) - ml
				}
			}
		}
	}
}

// Q3_K (256 elements): hmask[32] | qs[64] | scales[12] | d f16. Sixteen
// 6-bit signed scales (offset 32; scalesQ3_K). Each value is 2 low bits from qs plus a high bit
// from hmask; a clear high bit subtracts 4. value d·(sc−32)·q.
func dequantQ3_K(b []byte, y []float32) {
	hm := b[0:32]
	qs := b[32:96]
	var ds [16]float32
	ScalesQ3K(b, &ds)
	y = y[:256]
	is := 0
	m := byte(1)
	for n := 0; n < 2; n++ {
		q := qs[32*n : 32*n+32]
		for j := 0; j < 4; j++ {
			shift := uint(2 * j)
			for h := 0; h < 2; h++ {
				dl := ds[is]
				is++
				out := y[128*n+32*j+16*h : 128*n+32*j+16*h+16]
				qq := q[16*h : 16*h+16]
				hh := hm[16*h : 16*h+16]
				for l := range out {
					v := int8(qq[l] >> shift & 3)
					if hh[l]&m == 0 {
						v -= 4
					}
					out[l] = dl * float32(v)
				}
			}
			m <<= 1
		}
	}
}

// ScalesQ3K writes a Q3_K block's sixteen sub-block scales d·(sc−32) into
// ds, formed as the dequantiser forms them, for it and the CPU's vector dot
// product.
func ScalesQ3K(b []byte, ds *[16]float32) {
	d := f16at(b, 108)
	for i, s := range scalesQ3_K(b[96:108]) {
		ds[i] = d * float32(s)
	}
}

// scalesQ3_K unpacks Q3_K's sixteen 6-bit scales, less their offset 32,
// from its 12-byte scales field s: scale i takes its low 4 bits from byte i
// (i<8, low nibble) or byte i-8 (high nibble), its high 2 bits from byte
// 8+i%4 at bit 2·(i/4).
func scalesQ3_K(s []byte) [16]int8 {
	var sc [16]int8
	for i := range sc {
		var lo byte
		if i < 8 {
			lo = s[i] & 0xf
		} else {
			lo = s[i-8] >> 4
		}
		hi := s[8+i%4] >> (2 * (i / 4)) & 3
		sc[i] = int8(lo|hi<<4) - 32
	}
	return sc
}

// unpackScaleMinK4 unpacks the eight 6-bit scales and mins of the 12-byte
// Q4_K/Q5_K scales field q, the inverse of packScaleMinK4: sub-blocks 0..3
// from the low 6 bits of bytes j and j+4; 4..7 low 4 bits from byte j+4
// (nibbles) and high 2 bits from the top of bytes j-4 and j. Sub-block j's
// are byte j of sc and m: eight bytes in a register, where arrays of bytes
// went through memory and stalled the loads that read them back (ScalesK4
// ran 25 ns a block so).
func unpackScaleMinK4(q *[12]byte) (sc, m uint64) {
	lo := uint64(q[0]) | uint64(q[1])<<8 | uint64(q[2])<<16 | uint64(q[3])<<24
	mid := uint64(q[4]) | uint64(q[5])<<8 | uint64(q[6])<<16 | uint64(q[7])<<24
	hi := uint64(q[8]) | uint64(q[9])<<8 | uint64(q[10])<<16 | uint64(q[11])<<24
	const low6, low4, top2 = 0x3f3f3f3f, 0x0f0f0f0f, 0xc0c0c0c0
	sc = lo&low6 | (hi&low4|(lo&top2)>>2)<<32
	m = mid&low6 | (hi>>4&low4|(mid&top2)>>2)<<32
	return sc, m
}

// u8f maps a byte to its value as float32: a table load is cheaper than
// the int-to-float conversion, which waits on its register's old value.
var u8f = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i)
	}
	return t
}()

// ScalesK4 writes a Q4_K or Q5_K block's eight sub-block scales d·sc into
// scale and offsets dmin·m into offset (value = scale·q − offset), each
// product rounded to f32 on its own: the values the dequantisers and the
// CPU's vector dot products use, so both give the same weights.
func ScalesK4(b []byte, scale, offset *[8]float32) {
	d, dmin := f16at(b, 0), f16at(b, 2)
	sc, m := unpackScaleMinK4((*[12]byte)(b[4:16]))
	for j := range scale {
		// The explicit float32 conversions round each product, so no
		// platform fuses them into an FMA (Go does on arm64): the GPU's
		// embedding (kquant.cuh) reproduces these values bit for bit.
		scale[j] = float32(d * u8f[uint8(sc>>(8*j))])
		offset[j] = float32(dmin * u8f[uint8(m>>(8*j))])
	}
}

// Q4_K (256 elements): d f16 | dmin f16 | scales[12] | qs[128]. Eight
// sub-blocks of 32: each 32-byte chunk of qs holds sub-block 2k in low
// nibbles and 2k+1 in high nibbles; value d·sc·q − dmin·m (ScalesK4).
func dequantQ4_K(b []byte, y []float32) {
	var sc, off [8]float32
	ScalesK4(b, &sc, &off)
	qs := b[16:144]
	y = y[:256]
	for k := 0; k < 4; k++ {
		d1, o1 := sc[2*k], off[2*k]
		d2, o2 := sc[2*k+1], off[2*k+1]
		q := qs[32*k : 32*k+32]
		lo := y[64*k : 64*k+32]
		hi := y[64*k+32 : 64*k+64]
		for l, x := range q {
			lo[l] = float32(d1*float32(x&0xf)) - o1
			hi[l] = float32(d2*float32(x>>4)) - o2
		}
	}
}

// Q5_K (256 elements): d f16 | dmin f16 | scales[12] | qh[32] | qs[128].
// As Q4_K plus a fifth bit: bit 2k of qh[l] for the low-nibble sub-block
// 2k, bit 2k+1 for the high-nibble one.
func dequantQ5_K(b []byte, y []float32) {
	var sc, off [8]float32
	ScalesK4(b, &sc, &off)
	qh := b[16:48]
	qs := b[48:176]
	y = y[:256]
	for k := 0; k < 4; k++ {
		d1, o1 := sc[2*k], off[2*k]
		d2, o2 := sc[2*k+1], off[2*k+1]
		q := qs[32*k : 32*k+32]
		lo := y[64*k : 64*k+32]
		hi := y[64*k+32 : 64*k+64]
		s1, s2 := uint(2*k), uint(2*k+1)
		for l, x := range q {
			h := qh[l]
			lo[l] = float32(d1*float32(x&0xf|(h>>s1&1)<<4)) - o1
			hi[l] = float32(d2*float32(x>>4|(h>>s2&1)<<4)) - o2
		}
	}
}

// Q6_K (256 elements): ql[128] | qh[64] | scales[16] int8 | d f16. Two
// halves of 128; in each, element l+32·i (i=0..3, l=0..31) takes 4 low bits
// from ql (byte l or l+32, low or high nibble) and 2 high bits from qh[l]
// at bit 2i; value d·scale·(q−32) with scale index l/16 + 2i.
func dequantQ6_K(b []byte, y []float32) {
	var ds [16]float32
	ScalesQ6K(b, &ds)
	y = y[:256]
	for n := 0; n < 2; n++ {
		ql := (*[64]byte)(b[64*n : 64*n+64])
		qh := (*[32]byte)(b[128+32*n : 128+32*n+32])
		out := (*[128]float32)(y[128*n : 128*n+128])
		for half := 0; half < 2; half++ {
			s := ds[8*n+half:]
			d0, d2, d4, d6 := s[0], s[2], s[4], s[6]
			for l := 16 * half; l < 16*half+16; l++ {
				h := qh[l]
				a, c := ql[l], ql[l+32]
				out[l] = d0 * float32(int(a&0xf|(h&3)<<4)-32)
				out[l+32] = d2 * float32(int(c&0xf|(h>>2&3)<<4)-32)
				out[l+64] = d4 * float32(int(a>>4|(h>>4&3)<<4)-32)
				out[l+96] = d6 * float32(int(c>>4|(h>>6&3)<<4)-32)
			}
		}
	}
}

// ScalesQ6K writes a Q6_K block's sixteen sub-block scales d·scale[i]
// (value = scale·(q−32)) into ds: the same product llama.cpp forms first,
// shared by the dequantiser and the CPU's vector dot product.
func ScalesQ6K(b []byte, ds *[16]float32) {
	d := f16at(b, 208)
	for i, s := range (*[16]byte)(b[192:208]) {
		ds[i] = d * float32(int8(s))
	}
}

// Q8_K (256 elements): d f32 | qs[256] int8 | bsums[16] int16 (sums of
// groups of 16, unused here); value q·d.
func dequantQ8_K(b []byte, y []float32) {
	d := math.Float32frombits(binary.LittleEndian.Uint32(b))
	qs := b[4:260]
	y = y[:256]
	for j, q := range qs {
		y[j] = float32(int8(q)) * d
	}
}

// ScalesIQ4XS writes an IQ4_XS block's eight sub-block scales d·(ls−32)
// into ds, formed as the dequantiser forms them, for it and the CPU's
// vector dot product.
func ScalesIQ4XS(b []byte, ds *[8]float32) {
	d := f16at(b, 0)
	sh := binary.LittleEndian.Uint16(b[2:])
	sl := b[4:8]
	for i := range ds {
		ls := int(sl[i/2]>>(4*(i%2))&0xf) | int(sh>>(2*i)&3)<<4
		ds[i] = d * float32(ls-32)
	}
}

// IQ4Codebook is the IQ4_NL and IQ4_XS codebook (iq4Values), for the CPU's
// vector dot product.
func IQ4Codebook() [16]int8 { return iq4Values }

// iq4Values are the IQ4_NL and IQ4_XS codebook: a 4-bit code n stands for
// iq4Values[n], a non-uniform grid denser near zero (ggml's kvalues_iq4nl).
var iq4Values = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// IQ4_NL: d f16 | qs[16]. Element j (0..15) is the low nibble of qs[j],
// element j+16 the high nibble; value d·iq4Values[n].
func dequantIQ4_NL(b []byte, y []float32) {
	d := f16at(b, 0)
	y = y[:32]
	for j, q := range b[2:18] {
		y[j] = d * float32(iq4Values[q&0xf])
		y[j+16] = d * float32(iq4Values[q>>4])
	}
}

// IQ4_XS (256 elements): d f16 | scales_h u16 | scales_l[4] | qs[128].
// Eight sub-blocks of 32, sub-block i's 6-bit scale ls from the nibble i%2
// of scales_l[i/2] (low 4 bits) and bits 2i, 2i+1 of scales_h (high 2);
// its 32 values as IQ4_NL's block from qs[16i:], times d·(ls−32), formed
// first.
func dequantIQ4_XS(b []byte, y []float32) {
	var ds [8]float32
	ScalesIQ4XS(b, &ds)
	qs := b[8:136]
	y = y[:256]
	for i := range 8 {
		dl := ds[i]
		out := y[32*i : 32*i+32]
		for j, q := range qs[16*i : 16*i+16] {
			out[j] = dl * float32(iq4Values[q&0xf])
			out[j+16] = dl * float32(iq4Values[q>>4])
		}
	}
}
