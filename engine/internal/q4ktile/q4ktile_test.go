package q4ktile

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// value reads (row, col) of a tiled matrix by the addressing the kernels
// use (embed_q4_k, matvec_q4k.cu's fragments), decoded as gguf's
// dequantiser does: float32(d·sc)·q − float32(dmin·m).
func value(tiles []byte, cols, row, col int) float32 {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*Bytes:]
	rr, v := row%Rows, col%Cols
	g, h := rr%8, rr/8
	j, c, i := v/32, v%32/8, v%8
	w := t[512*(j/2)+16*(4*g+c)+8*(j%2)+4*h:]
	q := w[2*(i%2)+i/4] >> (4 * (i / 2 % 2)) & 15
	sc, m := t[scaleOff+16*rr+j], t[scaleOff+16*rr+8+j]
	d := gguf.F16ToF32(binary.LittleEndian.Uint16(t[dOff+8*g+4*h:]))
	dmin := gguf.F16ToF32(binary.LittleEndian.Uint16(t[dOff+8*g+4*h+2:]))
	a, o := float32(d*float32(sc)), float32(dmin*float32(m))
	return float32(a*float32(q)) - o
}

// TestTile reads every value of random Q4_K blocks back out of the tiles by
// the kernels' addressing and compares it with gguf.Dequantize of the
// original blocks (bit for bit: same operations), on a row count that is not
// a multiple of 16; the padding rows must be zero.
func TestTile(t *testing.T) {
	const rows, cols = 21, 512
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, rows*cols/Cols*BlockBytes)
	for i := range src {
		src[i] = byte(r.IntN(256))
	}
	for b := 0; b < len(src); b += BlockBytes { // d, dmin: finite f16s
		binary.LittleEndian.PutUint16(src[b:], gguf.F32ToF16(r.Float32()/64))
		binary.LittleEndian.PutUint16(src[b+2:], gguf.F32ToF16(r.Float32()/64))
	}
	want := make([]float32, rows*cols)
	if err := gguf.Dequantize(gguf.TypeQ4_K, src, want); err != nil {
		t.Fatal(err)
	}
	tiles := Tile(src, rows, cols)
	if len(tiles) != Size(rows, cols) || Size(rows, cols) != 2*2*Bytes {
		t.Fatalf("tiled %d bytes, Size %d, want %d", len(tiles), Size(rows, cols), 4*Bytes)
	}
	for row := range rows {
		for col := range cols {
			if got := value(tiles, cols, row, col); got != want[row*cols+col] {
				t.Fatalf("row %d col %d: %g, want %g", row, col, got, want[row*cols+col])
			}
		}
	}
	for row := rows; row < 32; row++ {
		for col := range cols {
			if got := value(tiles, cols, row, col); got != 0 {
				t.Fatalf("padding row %d col %d: %g, want 0", row, col, got)
			}
		}
	}
}
