package gguf

import (
	"encoding/binary"
	"fmt"
)

// Recode writes src, blocks of type from, into dst as blocks of type to
// whose decoded values are the same bit for bit: Dequantize(to, dst) ==
// Dequantize(from, src). It supports the pairs CanRecode reports, where the
// wider format holds every value of the narrower one on the same f16
// scale:
//
//   - Q3_K as Q6_K: the same sixteen sub-blocks of 16 and f16 d; the
//     signed 6-bit scale sc−32 becomes Q6_K's int8 scale, the code q
//     (−4..3) becomes q+32. 210 bytes a superblock instead of 110.
//   - Q4_0 and Q5_0 as Q8_0: the same f16 d a block of 32; the code q−8
//     (q−16) becomes Q8_0's int8. 34 bytes a block instead of 18 (22).
//   - IQ4_NL as Q8_0: the same f16 d a block of 32; the code's codebook
//     value (−127..113) becomes Q8_0's int8. 34 bytes a block instead of 18.
//
// Both decoders form d·scale, then times the code, in f32 (dequant.go), so
// the values agree exactly, not just to rounding. It does not allocate.
// len(src) must be a whole number of from's blocks and len(dst) the same
// number of to's.
func Recode(to Type, dst []byte, from Type, src []byte) error {
	if !CanRecode(from, to) {
		return fmt.Errorf("gguf: recode %v as %v: not supported (Q3_K as Q6_K, Q4_0, Q5_0 and IQ4_NL as Q8_0 are)", from, to)
	}
	fb, tb := from.BlockBytes(), to.BlockBytes()
	if len(src)%fb != 0 || len(dst) != len(src)/fb*tb {
		return fmt.Errorf("gguf: recode %v as %v: %d bytes in, %d out; want whole %d-byte blocks in and %d bytes a block out",
			from, to, len(src), len(dst), fb, tb)
	}
	for b := range len(src) / fb {
		in, out := src[b*fb:(b+1)*fb], dst[b*tb:(b+1)*tb]
		switch from {
		case TypeQ3_K:
			recodeQ3_K(in, out)
		case TypeQ4_0:
			recodeQ4_0(in, out)
		case TypeQ5_0:
			recodeQ5_0(in, out)
		case TypeIQ4_NL:
			recodeIQ4_NL(in, out)
		}
	}
	return nil
}

// CanRecode reports whether Recode writes type from's blocks as type to's.
func CanRecode(from, to Type) bool {
	switch from {
	case TypeQ3_K:
		return to == TypeQ6_K
	case TypeQ4_0, TypeQ5_0, TypeIQ4_NL:
		return to == TypeQ8_0
	}
	return false
}

// recodeQ3_K writes a Q3_K superblock (dequantQ3_K's layout) as Q6_K. Value
// l + 32j of half n (l < 32, j < 4) has its 2 low bits q at bit 2j of qs[32n
// + l] and its high bit h at bit 4n + j of hmask[l]; as Q6_K its code is
// q + 4h − 4 + 32: low nibble q | 12 when h is clear (28..31), q when set
// (32..35), and high bits 1 + h. Both go where packQ6_K puts values l,
// l+32, l+64, l+96 (j = 0..3), eight bytes (l..l+7) at a time.
func recodeQ3_K(b, out []byte) {
	const ones = 0x0101010101010101
	hm, qs := b[0:32], b[32:96]
	for n := range 2 {
		ql, qh := out[64*n:64*n+64], out[128+32*n:128+32*n+32]
		for l := 0; l < 32; l += 8 {
			q := binary.LittleEndian.Uint64(qs[32*n+l:])
			h := binary.LittleEndian.Uint64(hm[l:]) >> (4 * n)
			var nib, hi [4]uint64
			for j := range 4 {
				hj := h >> j & ones
				nib[j] = q>>(2*j)&(3*ones) | (hj^ones)*12
				hi[j] = hj + ones
			}
			binary.LittleEndian.PutUint64(ql[l:], nib[0]|nib[2]<<4)
			binary.LittleEndian.PutUint64(ql[l+32:], nib[1]|nib[3]<<4)
			binary.LittleEndian.PutUint64(qh[l:], hi[0]|hi[1]<<2|hi[2]<<4|hi[3]<<6)
		}
	}
	sc := scalesQ3_K(b[96:108])
	for i, s := range sc {
		out[192+i] = byte(s)
	}
	copy(out[208:210], b[108:110]) // d
}

// recodeQ4_0 writes a Q4_0 block as Q8_0: d, then the codes q−8, low
// nibbles (values 0..15) first.
func recodeQ4_0(b, out []byte) {
	copy(out[0:2], b[0:2])
	for j, q := range b[2:18] {
		out[2+j] = byte(int8(q&0xf) - 8)
		out[18+j] = byte(int8(q>>4) - 8)
	}
}

// recodeQ5_0 writes a Q5_0 block as Q8_0: d, then the codes q−16 (the
// fifth bit of value j from bit j of qh).
func recodeQ5_0(b, out []byte) {
	copy(out[0:2], b[0:2])
	qh := binary.LittleEndian.Uint32(b[2:])
	for j, q := range b[6:22] {
		h0 := byte(qh>>j) & 1 << 4
		h1 := byte(qh>>(j+16)) & 1 << 4
		out[2+j] = byte(int8(q&0xf|h0) - 16)
		out[18+j] = byte(int8(q>>4|h1) - 16)
	}
}

// recodeIQ4_NL writes an IQ4_NL block as Q8_0: d, then the codes' values,
// low nibbles first.
func recodeIQ4_NL(b, out []byte) {
	copy(out[0:2], b[0:2])
	for j, q := range b[2:18] {
		out[2+j] = byte(iq4Values[q&0xf])
		out[18+j] = byte(iq4Values[q>>4])
	}
}
