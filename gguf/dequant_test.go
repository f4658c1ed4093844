package gguf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// Every block below is built byte by byte from the layouts in ggml-common.h
// and the expected floats are worked out by hand (written as literals or,
// for 256-element blocks, as the per-element formula read off the layout,
// anchored by literal spot values). All scales are exact in f16 and every
// product is exact in f32, so comparisons are exact.

// f16 constants used as scales.
const (
	h0_25 = 0x3400 // 0.25
	h0_5  = 0x3800 // 0.5
	h1    = 0x3C00 // 1.0
	h2    = 0x4000 // 2.0
	hm1   = 0xBC00 // -1.0
)

func le16(x uint16) []byte { return binary.LittleEndian.AppendUint16(nil, x) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func deq(t *testing.T, typ Type, block []byte) []float32 {
	t.Helper()
	if len(block) != typ.BlockBytes() {
		t.Fatalf("%v block is %d bytes, want %d", typ, len(block), typ.BlockBytes())
	}
	y := make([]float32, typ.BlockSize())
	for i := range y {
		y[i] = float32(math.NaN()) // every element must be written
	}
	if err := Dequantize(typ, block, y); err != nil {
		t.Fatal(err)
	}
	return y
}

func expectAll(t *testing.T, typ Type, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%v element %d = %v, want %v", typ, i, got[i], want[i])
		}
	}
}

// nibbles16 is qs[j] = j | (15-j)<<4 for j = 0..15.
func nibbles16() []byte {
	b := make([]byte, 16)
	for j := range b {
		b[j] = byte(j) | byte(15-j)<<4
	}
	return b
}

func TestDequantQ4_0(t *testing.T) {
	// d = 0.5; element j = (lo_j - 8)/2, element j+16 = (hi_j - 8)/2.
	y := deq(t, TypeQ4_0, cat(le16(h0_5), nibbles16()))
	expectAll(t, TypeQ4_0, y, []float32{
		-4, -3.5, -3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5,
		3.5, 3, 2.5, 2, 1.5, 1, 0.5, 0, -0.5, -1, -1.5, -2, -2.5, -3, -3.5, -4,
	})
}

func TestDequantIQ4_NL(t *testing.T) {
	// d = 0.5; element j = kvalues[lo_j]/2, element j+16 = kvalues[hi_j]/2,
	// with lo_j = j and hi_j = 15 − j (nibbles16) and ggml's codebook
	// −127, −104, −83, −65, −49, −35, −22, −10, 1, 13, 25, 38, 53, 69, 89, 113.
	y := deq(t, TypeIQ4_NL, cat(le16(h0_5), nibbles16()))
	expectAll(t, TypeIQ4_NL, y, []float32{
		-63.5, -52, -41.5, -32.5, -24.5, -17.5, -11, -5, 0.5, 6.5, 12.5, 19, 26.5, 34.5, 44.5, 56.5,
		56.5, 44.5, 34.5, 26.5, 19, 12.5, 6.5, 0.5, -5, -11, -17.5, -24.5, -32.5, -41.5, -52, -63.5,
	})
}

func TestDequantIQ4_XS(t *testing.T) {
	// d = 1; sub-block i's 6-bit scale ls = 28 + i, so ls − 32 = i − 4:
	// low nibbles 12, 13, 14, 15, 0, 1, 2, 3 in scales_l (two a byte, even
	// i low), high bits 1, 1, 1, 1, 2, 2, 2, 2 in scales_h (bits 2i, 2i+1);
	// sub-block i's code byte j is (j+i)%16 | ((15−j+i)%16)<<4, so each
	// sub-block reads codes of its own.
	kv := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	var qs []byte
	for i := range 8 {
		for j := range 16 {
			qs = append(qs, byte((j+i)%16|(15-j+i)%16<<4))
		}
	}
	y := deq(t, TypeIQ4_XS, cat(le16(h1), le16(0xAA55), []byte{0xDC, 0xFE, 0x10, 0x32}, qs))
	want := make([]float32, 256)
	for i := range 8 {
		for j := range 16 {
			want[32*i+j] = float32(i-4) * kv[(j+i)%16]
			want[32*i+16+j] = float32(i-4) * kv[(15-j+i)%16]
		}
	}
	expectAll(t, TypeIQ4_XS, y, want)
	// Spot values worked out by hand: sub-block 0 scales by −4, 7 by 3, 4
	// by 0.
	for i, v := range map[int]float32{0: 508, 16: -452, 47: 381, 128: 0, 224: -30, 255: -30, 240: -66} {
		if y[i] != v {
			t.Errorf("IQ4_XS element %d = %v, want %v", i, y[i], v)
		}
	}
}

func TestDequantQ4_1(t *testing.T) {
	// d = 0.25, m = -1; value q/4 - 1.
	y := deq(t, TypeQ4_1, cat(le16(h0_25), le16(hm1), nibbles16()))
	expectAll(t, TypeQ4_1, y, []float32{
		-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75,
		2.75, 2.5, 2.25, 2, 1.75, 1.5, 1.25, 1, 0.75, 0.5, 0.25, 0, -0.25, -0.5, -0.75, -1,
	})
}

// qh5 = 0x5555AAAA little-endian: bit j (j<16) set for odd j, bit j+16 set
// for even j.
var qh5 = []byte{0xAA, 0xAA, 0x55, 0x55}

func TestDequantQ5_0(t *testing.T) {
	// d = 1; element j: lo_j + 16·(j odd) - 16; element j+16: hi_j + 16·(j even) - 16.
	y := deq(t, TypeQ5_0, cat(le16(h1), qh5, nibbles16()))
	expectAll(t, TypeQ5_0, y, []float32{
		-16, 1, -14, 3, -12, 5, -10, 7, -8, 9, -6, 11, -4, 13, -2, 15,
		15, -2, 13, -4, 11, -6, 9, -8, 7, -10, 5, -12, 3, -14, 1, -16,
	})
}

func TestDequantQ5_1(t *testing.T) {
	// d = 0.5, m = 2; value q/2 + 2 with the same q as Q5_0 before the -16.
	y := deq(t, TypeQ5_1, cat(le16(h0_5), le16(h2), qh5, nibbles16()))
	expectAll(t, TypeQ5_1, y, []float32{
		2, 10.5, 3, 11.5, 4, 12.5, 5, 13.5, 6, 14.5, 7, 15.5, 8, 16.5, 9, 17.5,
		17.5, 9, 16.5, 8, 15.5, 7, 14.5, 6, 13.5, 5, 12.5, 4, 11.5, 3, 10.5, 2,
	})
}

func TestDequantQ8_0(t *testing.T) {
	// d = 0.25, qs[j] = 8j - 128 as int8; value 2j - 32.
	qs := make([]byte, 32)
	for j := range qs {
		qs[j] = byte(8*j - 128)
	}
	y := deq(t, TypeQ8_0, cat(le16(h0_25), qs))
	expectAll(t, TypeQ8_0, y, []float32{
		-32, -30, -28, -26, -24, -22, -20, -18, -16, -14, -12, -10, -8, -6, -4, -2,
		0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30,
	})
}

// TestDequantQ8_1: d f16 | s f16 | qs[32] int8, value q·d; s (d·Σq, for
// the dot products of other backends) is not used, so an Inf there changes
// nothing. Two blocks: the second starts at byte 36.
func TestDequantQ8_1(t *testing.T) {
	// Block 0: d = 0.25, qs[j] = 8j - 128 as int8; value 2j - 32.
	// Block 1: d = -1, s = 0, qs[j] = j; value -j.
	qs0, qs1 := make([]byte, 32), make([]byte, 32)
	for j := range qs0 {
		qs0[j] = byte(8*j - 128)
		qs1[j] = byte(j)
	}
	src := cat(le16(h0_25), le16(0x7C00), qs0, le16(hm1), le16(0), qs1)
	y := make([]float32, 64)
	if err := Dequantize(TypeQ8_1, src, y); err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 64)
	for j := range 32 {
		want[j] = float32(2*j - 32)
		want[32+j] = -float32(j)
	}
	expectAll(t, TypeQ8_1, y, want)
}

func TestDequantQ8_K(t *testing.T) {
	// d = 0.125 (f32 0x3E000000), qs[j] = j - 128; value (j-128)/8. bsums
	// are garbage on purpose: dequantisation must ignore them.
	b := binary.LittleEndian.AppendUint32(nil, 0x3E000000)
	for j := range 256 {
		b = append(b, byte(j-128))
	}
	for j := range 32 {
		b = append(b, byte(0x5A+j))
	}
	y := deq(t, TypeQ8_K, b)
	for j := range 256 {
		if want := float32(j-128) / 8; y[j] != want {
			t.Errorf("element %d = %v, want %v", j, y[j], want)
		}
	}
	expectAll(t, TypeQ8_K, []float32{y[0], y[129], y[255]}, []float32{-16, 0.125, 15.875})
}

func TestDequantQ2_K(t *testing.T) {
	// scales[i] = i | (15-i)<<4: sub-block i has scale i and min 15-i.
	// qs byte (any of the 64) holds (l+j)&3 at bits 2j, where l is the
	// byte's index within its 16-byte group. d = 0.5, dmin = 0.25.
	// Element 128n + 32j + 16h + l uses sub-block 8n+2j+h, byte 32n+16h+l:
	// value 0.5·is·((l+j)&3) − 0.25·(15−is).
	scales := make([]byte, 16)
	for i := range scales {
		scales[i] = byte(i) | byte(15-i)<<4
	}
	qs := make([]byte, 64)
	for i := range qs {
		l := i % 16
		for j := range 4 {
			qs[i] |= byte((l+j)&3) << (2 * j)
		}
	}
	y := deq(t, TypeQ2_K, cat(scales, qs, le16(h0_5), le16(h0_25)))
	for n := range 2 {
		for j := range 4 {
			for h := range 2 {
				for l := range 16 {
					is := 8*n + 2*j + h
					want := 0.5*float32(is)*float32((l+j)&3) - 0.25*float32(15-is)
					if got := y[128*n+32*j+16*h+l]; got != want {
						t.Errorf("element %d = %v, want %v", 128*n+32*j+16*h+l, got, want)
					}
				}
			}
		}
	}
	// Spot values worked out by hand.
	expectAll(t, TypeQ2_K, []float32{y[0], y[17], y[255]}, []float32{-3.75, -3, 15})
}

// q3Scales are sixteen 6-bit scales S and their 12-byte packing, worked out
// by hand: bytes 0-7 hold low nibbles (S[k] | S[k+8]<<4), bytes 8-11 hold
// the top two bits of S[k], S[k+4], S[k+8], S[k+12] at bits 0, 2, 4, 6.
var (
	q3S      = [16]int{0, 5, 17, 31, 32, 33, 40, 63, 1, 16, 47, 48, 30, 34, 50, 20}
	q3Packed = []byte{0x10, 0x05, 0xF1, 0x0F, 0xE0, 0x21, 0x28, 0x4F, 0x48, 0x98, 0xE9, 0x7D}
)

func TestDequantQ3_K(t *testing.T) {
	// qs byte 32n+16h+l holds (l+j+n)&3 at bits 2j; hmask byte 16h+l bit
	// b = 4n+j is (l+b)&1 (0xAA for even l, 0x55 for odd). d = 0.5.
	// value = 0.5·(S[is]−32)·(low2 − 4·(1−hbit)).
	hmask := make([]byte, 32)
	for i := range hmask {
		if i%2 == 0 {
			hmask[i] = 0xAA
		} else {
			hmask[i] = 0x55
		}
	}
	qs := make([]byte, 64)
	for i := range qs {
		n, l := i/32, i%16
		for j := range 4 {
			qs[i] |= byte((l+j+n)&3) << (2 * j)
		}
	}
	y := deq(t, TypeQ3_K, cat(hmask, qs, q3Packed, le16(h0_5)))
	for n := range 2 {
		for j := range 4 {
			for h := range 2 {
				for l := range 16 {
					is := 8*n + 2*j + h
					q := (l + j + n) & 3
					if (l+4*n+j)&1 == 0 {
						q -= 4
					}
					want := 0.5 * float32(q3S[is]-32) * float32(q)
					if got := y[128*n+32*j+16*h+l]; got != want {
						t.Errorf("element %d = %v, want %v", 128*n+32*j+16*h+l, got, want)
					}
				}
			}
		}
	}
	expectAll(t, TypeQ3_K, []float32{y[0], y[1], y[16], y[37], y[195], y[255]}, []float32{64, -16, 54, 15, -2, 6})
}

// kScales packs eight 6-bit scales and mins for Q4_K/Q5_K, worked out by
// hand: sc = {1,2,63,10,20,33,47,5}, m = {0,7,12,63,3,40,16,50}.
var (
	kSc     = [8]int{1, 2, 63, 10, 20, 33, 47, 5}
	kMin    = [8]int{0, 7, 12, 63, 3, 40, 16, 50}
	kPacked = []byte{0x41, 0x82, 0xBF, 0x0A, 0x00, 0x87, 0x4C, 0xFF, 0x34, 0x81, 0x0F, 0x25}
)

// kQs is qs for Q4_K/Q5_K: byte 32k+l has low nibble (l+k)&15 and high
// nibble (3l+k)&15.
func kQs() []byte {
	qs := make([]byte, 128)
	for i := range qs {
		k, l := i/32, i%32
		qs[i] = byte((l+k)&15) | byte((3*l+k)&15)<<4
	}
	return qs
}

func TestDequantQ4_K(t *testing.T) {
	// d = 0.5, dmin = 0.25. Element 64k+l = 0.5·sc[2k]·lo − 0.25·m[2k];
	// element 64k+32+l = 0.5·sc[2k+1]·hi − 0.25·m[2k+1].
	y := deq(t, TypeQ4_K, cat(le16(h0_5), le16(h0_25), kPacked, kQs()))
	for k := range 4 {
		for l := range 32 {
			lo, hi := (l+k)&15, (3*l+k)&15
			w0 := 0.5*float32(kSc[2*k])*float32(lo) - 0.25*float32(kMin[2*k])
			w1 := 0.5*float32(kSc[2*k+1])*float32(hi) - 0.25*float32(kMin[2*k+1])
			if y[64*k+l] != w0 || y[64*k+32+l] != w1 {
				t.Errorf("k=%d l=%d: got %v %v, want %v %v", k, l, y[64*k+l], y[64*k+32+l], w0, w1)
			}
		}
	}
	expectAll(t, TypeQ4_K, []float32{y[5], y[34], y[74], y[191], y[231], y[192]}, []float32{2.5, 4.25, 343.5, 237.5, 7.5, 66.5})
}

func TestDequantQ5_K(t *testing.T) {
	// As Q4_K with qh[l] = 7l: bit 2k adds 16 to the low-nibble value,
	// bit 2k+1 to the high-nibble one.
	qh := make([]byte, 32)
	for l := range qh {
		qh[l] = byte(7 * l)
	}
	y := deq(t, TypeQ5_K, cat(le16(h0_5), le16(h0_25), kPacked, qh, kQs()))
	for k := range 4 {
		for l := range 32 {
			lo := (l+k)&15 + 16*int(qh[l]>>(2*k)&1)
			hi := (3*l+k)&15 + 16*int(qh[l]>>(2*k+1)&1)
			w0 := 0.5*float32(kSc[2*k])*float32(lo) - 0.25*float32(kMin[2*k])
			w1 := 0.5*float32(kSc[2*k+1])*float32(hi) - 0.25*float32(kMin[2*k+1])
			if y[64*k+l] != w0 || y[64*k+32+l] != w1 {
				t.Errorf("k=%d l=%d: got %v %v, want %v %v", k, l, y[64*k+l], y[64*k+32+l], w0, w1)
			}
		}
	}
	expectAll(t, TypeQ5_K, []float32{y[5], y[34], y[74], y[191], y[231], y[243], y[202]},
		[]float32{10.5, 20.25, 847.5, 237.5, 7.5, 57.5, 677.5})
}

func TestDequantQ6_K(t *testing.T) {
	// ql[i] = 13i+7, qh[i] = 29i+3, scales {1,-2,3,-4,5,-6,7,-8,10,-20,30,
	// -40,50,-60,70,-128}, d = 0.25. In half n, for l in 0..31 and group
	// g in 0..3: low 4 bits from ql[64n + l + 32·(g&1)] (low nibble for
	// g<2, high for g≥2), high 2 bits from qh[32n+l] at bit 2g, scale index
	// 8n + l/16 + 2g; value 0.25·scale·(q−32).
	ql := make([]byte, 128)
	for i := range ql {
		ql[i] = byte(13*i + 7)
	}
	qh := make([]byte, 64)
	for i := range qh {
		qh[i] = byte(29*i + 3)
	}
	sc := []int8{1, -2, 3, -4, 5, -6, 7, -8, 10, -20, 30, -40, 50, -60, 70, -128}
	scb := make([]byte, 16)
	for i, s := range sc {
		scb[i] = byte(s)
	}
	y := deq(t, TypeQ6_K, cat(ql, qh, scb, le16(h0_25)))
	for n := range 2 {
		for g := range 4 {
			for l := range 32 {
				b := ql[64*n+l+32*(g&1)]
				lo := b & 15
				if g >= 2 {
					lo = b >> 4
				}
				q := int(lo) | int(qh[32*n+l]>>(2*g)&3)<<4
				want := 0.25 * float32(sc[8*n+l/16+2*g]) * float32(q-32)
				if got := y[128*n+32*g+l]; got != want {
					t.Errorf("element %d = %v, want %v", 128*n+32*g+l, got, want)
				}
			}
		}
	}
	expectAll(t, TypeQ6_K, []float32{y[0], y[49], y[69], y[127], y[244], y[131]}, []float32{5.75, 28, -15, -6, -960, 35})
}

func TestDequantPlain(t *testing.T) {
	f32 := binary.LittleEndian.AppendUint32(nil, math.Float32bits(-2.5))
	f32 = binary.LittleEndian.AppendUint32(f32, math.Float32bits(1e-30))
	expectAll(t, TypeF32, deqN(t, TypeF32, f32, 2), []float32{-2.5, 1e-30})
	// f16: 1, -2, 65504, 2^-24 (smallest subnormal), 1023·2^-24 (largest
	// subnormal), 2^-14 (smallest normal), 0.333251953125 (0x3555).
	f16 := cat(le16(0x3C00), le16(0xC000), le16(0x7BFF), le16(0x0001), le16(0x03FF), le16(0x0400), le16(0x3555))
	expectAll(t, TypeF16, deqN(t, TypeF16, f16, 7), []float32{1, -2, 65504, 0x1p-24, 1023 * 0x1p-24, 0x1p-14, 0.333251953125})
	// bf16: 0x3F80 = 1, 0xC0A0 = -5, 0x3E20 = 0.15625.
	bf := cat(le16(0x3F80), le16(0xC0A0), le16(0x3E20))
	expectAll(t, TypeBF16, deqN(t, TypeBF16, bf, 3), []float32{1, -5, 0.15625})
	expectAll(t, TypeI8, deqN(t, TypeI8, []byte{0xFF, 0x7F}, 2), []float32{-1, 127})
	expectAll(t, TypeI16, deqN(t, TypeI16, le16(0x8000), 1), []float32{-32768})
	i32 := binary.LittleEndian.AppendUint32(nil, uint32(0xFFFFFFFE))
	expectAll(t, TypeI32, deqN(t, TypeI32, i32, 1), []float32{-2})
	f64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.75))
	expectAll(t, TypeF64, deqN(t, TypeF64, f64, 1), []float32{0.75})
}

func deqN(t *testing.T, typ Type, src []byte, n int) []float32 {
	t.Helper()
	y := make([]float32, n)
	if err := Dequantize(typ, src, y); err != nil {
		t.Fatal(err)
	}
	return y
}

func TestF16Specials(t *testing.T) {
	if v := F16ToF32(0x7C00); !math.IsInf(float64(v), 1) {
		t.Errorf("0x7C00 -> %v", v)
	}
	if v := F16ToF32(0xFC00); !math.IsInf(float64(v), -1) {
		t.Errorf("0xFC00 -> %v", v)
	}
	if v := F16ToF32(0x7E00); !math.IsNaN(float64(v)) {
		t.Errorf("0x7E00 -> %v", v)
	}
	if v := F16ToF32(0x8000); v != 0 || !math.Signbit(float64(v)) {
		t.Errorf("0x8000 -> %v", v)
	}
	// Every f16 survives f16 -> f32 -> f16 (NaNs stay NaN).
	for h := range 1 << 16 {
		f := F16ToF32(uint16(h))
		back := F32ToF16(f)
		if math.IsNaN(float64(f)) {
			if back&0x7C00 != 0x7C00 || back&0x3FF == 0 {
				t.Fatalf("NaN %#04x -> %#04x", h, back)
			}
			continue
		}
		if back != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
}

func TestDequantizeErrors(t *testing.T) {
	y := make([]float32, 32)
	if err := Dequantize(TypeQ8_0, make([]byte, 33), y); err == nil {
		t.Error("short src accepted")
	}
	if err := Dequantize(TypeQ8_0, make([]byte, 34), y[:31]); err == nil {
		t.Error("partial block accepted")
	}
	if err := Dequantize(TypeIQ2_XXS, make([]byte, 66), make([]float32, 256)); err == nil {
		t.Error("IQ2_XXS accepted")
	}
	if err := Dequantize(TypeQ4_2, nil, nil); err == nil {
		t.Error("removed type accepted")
	}
	// Multi-block rows dequantise block by block.
	r := rand.New(rand.NewPCG(5, 6))
	src := randBytes(r, 3*210)
	all := make([]float32, 768)
	if err := Dequantize(TypeQ6_K, src, all); err != nil {
		t.Fatal(err)
	}
	one := make([]float32, 256)
	if err := Dequantize(TypeQ6_K, src[210:420], one); err != nil {
		t.Fatal(err)
	}
	for i := range one {
		if one[i] != all[256+i] && !(math.IsNaN(float64(one[i])) && math.IsNaN(float64(all[256+i]))) {
			t.Fatalf("block 1 element %d: %v vs %v", i, one[i], all[256+i])
		}
	}
}
