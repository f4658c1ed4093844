// Package ktile holds the tiled layouts of K-quant matrices for matvecs on
// the tensor cores: Q4K for Q4_K and Q5K for Q5_K (kernels/matvec_q4k.cu,
// embed_q4_k, embed_q5_k), Q6K for Q6_K, Q3K for Q3_K, IQ4XS for IQ4_XS,
// Q40 for Q4_0 and IQ4NL for IQ4_NL (kernels/matvec_q6k.cu, embed_q6_k,
// embed_q3_k, embed_iq4_xs, embed_q4_0, embed_iq4_nl). All are
// tiles of 16 rows × one 256-column superblock, stored tile row by tile row
// (tile (t, s) at (t·cols/256 + s)·Bytes), the
// last tile row padded with zero rows. Inside a tile, g = row%8 and
// h = row/8 of its 16 rows, and lane L = 4g+c of a warp owns rows g and
// g+8: its bytes are the A fragments of mma.m16n8k16 once each code is
// placed under an f16 exponent (the kernels' headers say how).
//
// Q4K (2,368 bytes; 148 per row and superblock against ggml's 144):
//   - 0..2047: the 4-bit codes, 512 bytes per pair p of 32-column runs
//     (runs 2p, 2p+1); lane L's 16 bytes at 512p + 16L are run 2p then
//     2p+1, each 4 bytes of row g then 4 of row g+8, columns 8c..8c+7 of the
//     run as nibbles c0|c2<<4, c4|c6<<4, c1|c3<<4, c5|c7<<4;
//   - 2048..2303: per row 16 bytes, the eight 6-bit run scales then the
//     eight mins, unpacked from ggml's 12 bytes;
//   - 2304..2367: per g 8 bytes: d and dmin (f16) of row g, then of g+8.
//
// Q5K (2,880 bytes; 180 per row and superblock against ggml's 176): Q4K's
// 2,368 bytes of the low 4 bits, then
//   - 2368..2879: the fifth bits, lane L's 16 bytes at 2368 + 16L: word p
//     for run pair p, the value at nibble n (0..7) of Q4K's code word m
//     (m = 0..3: run 2p row g, row g+8, run 2p+1 row g, row g+8) at bit
//     4n + m, so one shift puts a code word's bits under its nibbles.
//
// Q6K (3,360 bytes; 210 per row and superblock, as ggml's):
//   - 0..2047: the low 4 bits of the codes, 512 bytes per quad p of
//     16-column sub-blocks (4p..4p+3); lane L's 16 bytes at 512p + 16L are
//     one word per sub-block j: columns 4c..4c+3 of rows g and g+8 as the
//     bytes n(g,4c)|n(g,4c+2)<<4, n(g+8,4c)|n(g+8,4c+2)<<4,
//     n(g,4c+1)|n(g,4c+3)<<4, n(g+8,4c+1)|n(g+8,4c+3)<<4;
//   - 2048..3071: the high 2 bits, 512 bytes per 8 sub-blocks (8q..8q+7);
//     lane L's 16 bytes at 2048 + 512q + 16L are one word per sub-block
//     pair (j even, j+1): pair k of sub-block j — (g, 4c|4c+1),
//     (g+8, 4c|4c+1), (g, 4c+2|4c+3), (g+8, 4c+2|4c+3) for k = 0..3 — has
//     its first value's bits at 2k + 8(j%2), its second's 16 bits higher;
//   - 3072..3327: per row the 16 int8 sub-block scales, as ggml's;
//   - 3328..3359: per g 4 bytes: d (f16) of row g, then of row g+8.
//
// Q3K (2,336 bytes; 146 per row and superblock against ggml's 110): a
// Q3_K value d·(sc−32)·q, q in −4..3, over the same sixteen sub-blocks of
// 16 as Q6_K's, so Q6K's shape without its high bits:
//   - 0..2047: the codes q+8 (4..11) as Q6K's low nibbles;
//   - 2048..2303: per row the 16 sub-block scales sc−32 as int8;
//   - 2304..2335: per g 4 bytes: d (f16) of row g, then of row g+8.
//
// IQ4XS (2,336 bytes; 146 per row and superblock against ggml's 136): an
// IQ4_XS value d·(ls−32)·v[n], n a 4-bit index into IQ4_NL's codebook v,
// over eight 32-column sub-blocks, so Q3K's shape with each scale twice
// and the codes ordered for a lookup (kernels/kquant.cuh memra_iq4_lut):
//   - 0..2047: the codes iq4Code[n], 512 bytes per quad p of 16-column
//     sub-blocks (4p..4p+3); lane L's 16 bytes at 512p + 16L are one word
//     per sub-block j, nibbles 0..7 columns 4c, 4c+1 of row g, of row g+8,
//     then 4c+2, 4c+3 of row g, of row g+8;
//   - 2048..2303: per row 16 int8 scales, sub-block j's ls−32 of ggml's
//     sub-block j/2;
//   - 2304..2335: per g 4 bytes: d (f16) of row g, then of row g+8.
//
// Q40 and IQ4NL (2,304 bytes; 144 per row and superblock, as ggml's 8
// blocks of 18): Q4_0's d·(q−8) and IQ4_NL's d·v[n] over 32-column blocks,
// each with its own f16 d, so Q3K's and IQ4XS's code planes with the d in
// place of the scales and the row's d:
//   - 0..2047: Q40 the codes q (0..15) as Q3K's, IQ4NL the codes of the
//     indices n as IQ4XS's;
//   - 2048..2303: per row the eight blocks' d (f16).
package ktile

import (
	"encoding/binary"

	"github.com/memra-ai/memra/gguf"
)

const (
	Rows = 16  // rows per tile
	Cols = 256 // columns per tile: one superblock
)

// Layout is one type's tiled layout.
type Layout struct {
	Bytes      int // bytes per tile
	BlockBytes int // bytes of ggml's block (one row of a tile)
	// putBlock writes row rr of one tile from a ggml block.
	putBlock func(tile []byte, rr int, blk []byte)
}

var (
	// Q4K is Q4_K's layout (kernels/matvec_q4k.cu).
	Q4K = Layout{Bytes: 2368, BlockBytes: 144, putBlock: putQ4K}
	// Q5K is Q5_K's layout (kernels/matvec_q4k.cu).
	Q5K = Layout{Bytes: 2880, BlockBytes: 176, putBlock: putQ5K}
	// Q6K is Q6_K's layout (kernels/matvec_q6k.cu).
	Q6K = Layout{Bytes: 3360, BlockBytes: 210, putBlock: putQ6K}
	// Q3K is Q3_K's layout (kernels/matvec_q6k.cu's Q3 forms).
	Q3K = Layout{Bytes: 2336, BlockBytes: 110, putBlock: putQ3K}
	// IQ4XS is IQ4_XS's layout (kernels/matvec_q6k.cu's IQ4 forms).
	IQ4XS = Layout{Bytes: 2336, BlockBytes: 136, putBlock: putIQ4XS}
	// Q40 is Q4_0's layout, its BlockBytes a superblock's 8 blocks
	// (kernels/matvec_q6k.cu's Q4_0 forms).
	Q40 = Layout{Bytes: 2304, BlockBytes: 144, putBlock: func(o []byte, rr int, b []byte) { putB32(o, rr, b, false) }}
	// IQ4NL is IQ4_NL's layout, as Q40 (kernels/matvec_q6k.cu's IQ4_NL
	// forms).
	IQ4NL = Layout{Bytes: 2304, BlockBytes: 144, putBlock: func(o []byte, rr int, b []byte) { putB32(o, rr, b, true) }}
)

// Size is the device size of a rows × cols matrix (cols a multiple of 256):
// whole tiles.
func (l Layout) Size(rows, cols int) int { return (rows + Rows - 1) / Rows * (cols / Cols) * l.Bytes }

// PutRow writes row rr (0..15) of the tile row starting at dst (cols/256
// tiles) from the row's ggml blocks src. dst must be zero where no row was
// written yet: Q5K and Q6K OR rows g and g+8's high bits into shared bytes.
func (l Layout) PutRow(dst []byte, rr int, src []byte, cols int) {
	for s := range cols / Cols {
		l.putBlock(dst[s*l.Bytes:(s+1)*l.Bytes], rr, src[s*l.BlockBytes:(s+1)*l.BlockBytes])
	}
}

// Tile lays out rows × cols blocks (ggml's, row after row) as tiles.
func (l Layout) Tile(src []byte, rows, cols int) []byte {
	out := make([]byte, l.Size(rows, cols))
	rb, tr := cols/Cols*l.BlockBytes, cols/Cols*l.Bytes
	for r := range rows {
		l.PutRow(out[r/Rows*tr:], r%Rows, src[r*rb:(r+1)*rb], cols)
	}
	return out
}

// ScaleMin is Q4_K run j's (0..7) 6-bit scale and min from a block's 12
// packed bytes s (ggml's get_scale_min_k4).
func ScaleMin(s []byte, j int) (sc, m byte) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// Code is Q4_K value v's (0..255) 4-bit code from a block's 128 code bytes:
// byte 32·(j/2) + v%32 of run j = v/32, the low nibble for even j, high for
// odd.
func Code(qs []byte, v int) byte {
	j := v / 32
	b := qs[32*(j/2)+v%32]
	if j%2 == 1 {
		return b >> 4
	}
	return b & 15
}

// Code6 is Q6_K value v's (0..255) 6-bit code from a block: in half n =
// v/128, group G = v%128/32, l = v%32, the nibble of ql byte 64n + l +
// 32·(G%2) (low for G < 2) and bits 2G, 2G+1 of qh byte 32n + l.
func Code6(blk []byte, v int) byte {
	n, G, l := v/128, v%128/32, v%32
	q := blk[64*n+l+32*(G%2)]
	if G >= 2 {
		q >>= 4
	}
	return q&15 | (blk[128+32*n+l]>>(2*G)&3)<<4
}

func putQ4K(o []byte, rr int, b []byte) { putK4(o, rr, b, b[16:144]) }

// putQ5K is putQ4K of the low 4 bits (Q5_K's codes at 48) plus the fifth
// bits: value i (0..7) of columns 8c..8c+7 of run j sits at nibble
// 4(i%2) + i/2 of its code word (putK4's order).
func putQ5K(o []byte, rr int, b []byte) {
	putK4(o, rr, b, b[48:176])
	g, h := rr%8, rr/8
	for c := range 4 {
		// qh[8c+i] holds bit j of value i of every run j; transposed, byte
		// j holds run j's bits of the 8 values.
		runs := transpose8(binary.LittleEndian.Uint64(b[16+8*c:]))
		for j := range 8 {
			bits := q5Spread[byte(runs>>(8*j))] << (2*(j%2) + h) // code word m = 2(j%2) + h
			w := o[2368+16*(4*g+c)+4*(j/2):][:4]
			binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)|bits)
		}
	}
}

// q5Spread maps 8 fifth bits (bit i: value i of a code word's 8 columns) to
// their places in a Q5K word: bit 4n of nibble n = 4(i%2) + i/2.
var q5Spread = func() (t [256]uint32) {
	for v := range t {
		for i := range 8 {
			t[v] |= uint32(v>>i&1) << (4 * (4*(i%2) + i/2))
		}
	}
	return t
}()

// transpose8 transposes the 8×8 bit matrix x (byte i, bit j) to (byte j,
// bit i).
func transpose8(x uint64) uint64 {
	x = x&0xAA55AA55AA55AA55 | (x&0x00AA00AA00AA00AA)<<7 | (x>>7)&0x00AA00AA00AA00AA
	x = x&0xCCCC3333CCCC3333 | (x&0x0000CCCC0000CCCC)<<14 | (x>>14)&0x0000CCCC0000CCCC
	return x&0xF0F0F0F00F0F0F0F | (x&0x00000000F0F0F0F0)<<28 | (x>>28)&0x00000000F0F0F0F0
}

// putK4 writes a Q4_K-style block (d, dmin, 12 scale bytes at b[0:16]) with
// its 4-bit codes qs (ggml's order) into row rr of a Q4K-shaped tile.
func putK4(o []byte, rr int, b, qs []byte) {
	g, h := rr%8, rr/8
	for j := range 8 {
		o[2048+16*rr+j], o[2048+16*rr+8+j] = ScaleMin(b[4:16], j)
		sh := 4 * (j % 2)                  // run j's codes: low nibbles for even j, high for odd
		pair := qs[32*(j/2) : 32*(j/2)+32] // the 32 code bytes its pair shares
		for c := range 4 {
			q := pair[8*c : 8*c+8] // columns 8c..8c+7 of the run
			w := o[512*(j/2)+16*(4*g+c)+8*(j%2)+4*h:]
			w[0] = q[0]>>sh&15 | (q[2]>>sh&15)<<4
			w[1] = q[4]>>sh&15 | (q[6]>>sh&15)<<4
			w[2] = q[1]>>sh&15 | (q[3]>>sh&15)<<4
			w[3] = q[5]>>sh&15 | (q[7]>>sh&15)<<4
		}
	}
	copy(o[2304+8*g+4*h:2304+8*g+4*h+4], b[0:4])
}

func putQ6K(o []byte, rr int, b []byte) {
	putQ6Codes(o, rr, b, 0, true)
	g, h := rr%8, rr/8
	copy(o[3072+16*rr:3072+16*rr+16], b[192:208])
	copy(o[3328+4*g+2*h:3328+4*g+2*h+2], b[208:210])
}

// putQ3K writes a Q3_K block as Q6K's codes less their high bits: the
// block recoded as Q6_K (gguf.Recode: codes q+32, 28..35, int8 scales
// sc−32, the same d), whose low nibbles with bit 3 flipped are q+8.
func putQ3K(o []byte, rr int, b []byte) {
	var q6 [210]byte
	_ = gguf.Recode(gguf.TypeQ6_K, q6[:], gguf.TypeQ3_K, b) // a block of fixed size: no error
	putQ6Codes(o, rr, q6[:], 0x88, false)
	g, h := rr%8, rr/8
	copy(o[2048+16*rr:2048+16*rr+16], q6[192:208])
	copy(o[2304+4*g+2*h:2304+4*g+2*h+2], q6[208:210])
}

// putIQ4XS writes an IQ4_XS block (d f16 | scales_h u16 | scales_l[4] |
// qs[128]): ggml's sub-block i of 32 holds its first 16 columns in the low
// nibbles of qs[16i:16i+16] and the next 16 in the high ones, so tile
// sub-block j is nibble j%2 of qs[16(j/2):], under scale ls_{j/2} − 32.
func putIQ4XS(o []byte, rr int, b []byte) {
	g, h := rr%8, rr/8
	sh := binary.LittleEndian.Uint16(b[2:])
	for j := range 16 {
		i, s := j/2, 4*(j%2)
		ls := int(b[4+i/2]>>(4*(i%2))&15) | int(sh>>(2*i)&3)<<4
		o[2048+16*rr+j] = byte(int8(ls - 32))
		putNibs(o, rr, j, b[8+16*i:8+16*i+16], s, true)
	}
	copy(o[2304+4*g+2*h:2304+4*g+2*h+2], b[0:2])
}

// putB32 writes 256 columns of Q4_0 or IQ4_NL (iq) blocks (d f16 | qs[16]:
// 16 columns in the low nibbles, the next 16 in the high ones), so tile
// sub-block j is nibble j%2 of block j/2's qs, in Q3K's nibble order
// (Q4_0) or IQ4XS's (IQ4_NL).
func putB32(o []byte, rr int, b []byte, iq bool) {
	for j := range 16 {
		putNibs(o, rr, j, b[18*(j/2)+2:18*(j/2)+18], 4*(j%2), iq)
	}
	for i := range 8 {
		copy(o[2048+16*rr+2*i:2048+16*rr+2*i+2], b[18*i:18*i+2])
	}
}

// iq4Code is the tiles' code of IQ4_NL codebook index n: n/2 + 8·(n%2),
// so that codes i and i+8, which kernels/kquant.cuh's memra_iq4_lut looks
// up as one pair, stand for neighbouring values of one sign.
var iq4Code = [16]byte{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15}

// putNibs writes row rr's 16 codes of tile sub-block j into its low-nibble
// plane: column l's code is nibble s/4 of qs[l] (s 0 or 4), placed in Q3K's
// nibble order, or as iq4Code in IQ4XS's (iq).
func putNibs(o []byte, rr, j int, qs []byte, s int, iq bool) {
	g, h := rr%8, rr/8
	for c := range 4 {
		q := qs[4*c : 4*c+4] // columns 4c..4c+3
		w := o[512*(j/4)+16*(4*g+c)+4*(j%4):]
		if iq {
			n := func(k int) byte { return iq4Code[q[k]>>s&15] }
			w[h], w[2+h] = n(0)|n(1)<<4, n(2)|n(3)<<4
		} else {
			w[h], w[2+h] = q[0]>>s&15|(q[2]>>s&15)<<4, q[1]>>s&15|(q[3]>>s&15)<<4
		}
	}
}

// putQ6Codes writes a Q6_K block's codes into row rr of a Q6K-shaped tile:
// the low nibbles XOR flip (both nibbles of a byte), and with high the high
// bit pairs at 2048.
func putQ6Codes(o []byte, rr int, b []byte, flip byte, high bool) {
	g, h := rr%8, rr/8
	for j := range 16 {
		// Sub-block j's 16 values (as Code6): half n, group G, offset l0 in
		// the group's 32; their low nibbles at ql[64n+32(G%2)+l0:] (the
		// high nibbles for G ≥ 2), their high bits at qh[32n+l0:], bits 2G.
		n, G, l0 := j/8, j%8/2, 16*(j%2)
		ql, qh := b[64*n+32*(G%2)+l0:][:16], b[128+32*n+l0:][:16]
		ns, hs := 4*(G/2), 2*G
		sh := uint(2*h + 8*(j%2)) // value p's high bits at sh + 4(p/2) + 16(p%2) of the pair word
		for c := range 4 {
			lo := binary.LittleEndian.Uint32(ql[4*c:]) >> ns & 0x0F0F0F0F // columns 4c..4c+3, one per byte
			hi := binary.LittleEndian.Uint32(qh[4*c:]) >> hs & 0x03030303
			w := o[512*(j/4)+16*(4*g+c)+4*(j%4):]
			w[h] |= (byte(lo) | byte(lo>>16)<<4) ^ flip
			w[2+h] |= (byte(lo>>8) | byte(lo>>24)<<4) ^ flip
			if !high {
				continue
			}
			pairs := (hi&3 | hi>>8&3<<16 | hi>>16&3<<4 | hi>>24&3<<20) << sh
			hw := o[2048+512*(j/8)+16*(4*g+c)+4*(j%8/2):][:4]
			binary.LittleEndian.PutUint32(hw, binary.LittleEndian.Uint32(hw)|pairs)
		}
	}
}
