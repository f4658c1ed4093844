// Package q4ktile is the device layout of Q4_K matrices: the order in which
// the tensor-core matvec (kernels/matvec_q4k.cu) and embed_q4_k read them.
//
// A tile is 16 rows × one 256-column superblock, Bytes bytes (148 per row
// and superblock against ggml's 144), stored tile row by tile row: tile
// (t, s) starts at (t·cols/256 + s)·Bytes, and rows past the matrix's end
// are zero. Inside a tile, with g = row%8 and h = row/8 (of the tile's 16):
//
//   - bytes 0..2047: the 4-bit codes, 512 bytes per pair p of 32-column runs
//     (runs 2p and 2p+1); lane L = 4g+c of a warp reads 16 bytes at
//     512p + 16L: run 2p then 2p+1, each 4 bytes of row g then 4 of row
//     g+8, columns 8c..8c+7 of the run packed as nibbles c0|c2<<4,
//     c4|c6<<4, c1|c3<<4, c5|c7<<4. That is the A fragment of
//     mma.m16n8k16 once each nibble is placed under an f16 exponent.
//   - bytes 2048..2303: per row 16 bytes, the eight 6-bit run scales then
//     the eight mins, unpacked from ggml's 12 bytes.
//   - bytes 2304..2367: per g, 8 bytes: d and dmin (f16) of row g, then of
//     row g+8.
//
// So a warp reads a superblock of 16 rows as 2,368 contiguous bytes, 16
// bytes per lane per load.
package q4ktile

const (
	Rows       = 16   // rows per tile
	Cols       = 256  // columns per tile: one superblock
	Bytes      = 2368 // bytes per tile
	BlockBytes = 144  // ggml's Q4_K block: d, dmin, 12 bytes of scales, 128 of codes

	scaleOff = 2048
	dOff     = 2304
)

// Size is the device size of a rows × cols Q4_K matrix (cols a multiple of
// 256): whole tiles, the last one padded with zero rows.
func Size(rows, cols int) int { return (rows + Rows - 1) / Rows * (cols / Cols) * Bytes }

// ScaleMin is run j's (0..7) 6-bit scale and min from a block's 12 packed
// bytes s (ggml's get_scale_min_k4).
func ScaleMin(s []byte, j int) (sc, m byte) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// Code is value v's (0..255) 4-bit code from a block's 128 code bytes: byte
// 32·(j/2) + v%32 of run j = v/32, the low nibble for even j, high for odd.
func Code(qs []byte, v int) byte {
	j := v / 32
	b := qs[32*(j/2)+v%32]
	if j%2 == 1 {
		return b >> 4
	}
	return b & 15
}

// PutRow writes row rr (0..15) of the tile row starting at dst (cols/256
// tiles) from the row's ggml blocks src (cols/256 × 144 bytes).
func PutRow(dst []byte, rr int, src []byte, cols int) {
	g, h := rr%8, rr/8
	for s := range cols / Cols {
		o := dst[s*Bytes : (s+1)*Bytes]
		b := src[s*BlockBytes : (s+1)*BlockBytes]
		for j := range 8 {
			o[scaleOff+16*rr+j], o[scaleOff+16*rr+8+j] = ScaleMin(b[4:16], j)
			sh := 4 * (j % 2)                     // run j's codes: low nibbles for even j, high for odd
			qs := b[16+32*(j/2) : 16+32*(j/2)+32] // of the 32 code bytes its pair shares
			for c := range 4 {
				q := qs[8*c : 8*c+8] // columns 8c..8c+7 of the run
				w := o[512*(j/2)+16*(4*g+c)+8*(j%2)+4*h:]
				w[0] = q[0]>>sh&15 | (q[2]>>sh&15)<<4
				w[1] = q[4]>>sh&15 | (q[6]>>sh&15)<<4
				w[2] = q[1]>>sh&15 | (q[3]>>sh&15)<<4
				w[3] = q[5]>>sh&15 | (q[7]>>sh&15)<<4
			}
		}
		copy(o[dOff+8*g+4*h:dOff+8*g+4*h+4], b[0:4])
	}
}

// Tile lays out rows × cols Q4_K blocks (ggml's, row after row) as tiles.
func Tile(src []byte, rows, cols int) []byte {
	out := make([]byte, Size(rows, cols))
	rb, tr := cols/Cols*BlockBytes, cols/Cols*Bytes
	for r := range rows {
		PutRow(out[r/Rows*tr:], r%Rows, src[r*rb:(r+1)*rb], cols)
	}
	return out
}
