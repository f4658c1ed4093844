package ktile

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// valueQ4K reads (row, col) of Q4K tiles by the addressing the kernels use
// (embed_q4_k, matvec_q4k.cu's fragments), decoded as gguf's dequantiser
// does: float32(d·sc)·q − float32(dmin·m).
func valueQ4K(tiles []byte, cols, row, col int) float32 { return valueK4(Q4K, tiles, cols, row, col) }

// valueQ5K is valueQ4K for Q5K tiles (embed_q5_k, matvec_q4k.cu's fifth
// bits): Q4K's code plus 16 × the bit at 4n + m of the lane's word for the
// run pair.
func valueQ5K(tiles []byte, cols, row, col int) float32 { return valueK4(Q5K, tiles, cols, row, col) }

func valueK4(l Layout, tiles []byte, cols, row, col int) float32 {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*l.Bytes:]
	rr, g, h, j := row%Rows, row%8, row%Rows/8, col%Cols/32
	q := codeK4(l, tiles, cols, row, col)
	sc, m := t[2048+16*rr+j], t[2048+16*rr+8+j]
	d := gguf.F16ToF32(binary.LittleEndian.Uint16(t[2304+8*g+4*h:]))
	dmin := gguf.F16ToF32(binary.LittleEndian.Uint16(t[2304+8*g+4*h+2:]))
	a, o := float32(d*float32(sc)), float32(dmin*float32(m))
	return float32(a*float32(q)) - o
}

// codeK4 is the code (Q5K: with its fifth bit) of (row, col) in Q4K or Q5K
// tiles.
func codeK4(l Layout, tiles []byte, cols, row, col int) byte {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*l.Bytes:]
	rr, v := row%Rows, col%Cols
	g, h := rr%8, rr/8
	j, c, i := v/32, v%32/8, v%8
	w := t[512*(j/2)+16*(4*g+c)+8*(j%2)+4*h:]
	q := w[2*(i%2)+i/4] >> (4 * (i / 2 % 2)) & 15
	if l.Bytes == Q5K.Bytes {
		hw := binary.LittleEndian.Uint32(t[Q4K.Bytes+16*(4*g+c)+4*(j/2):])
		q |= byte(hw>>(4*(4*(i%2)+i/2)+2*(j%2)+h)&1) << 4
	}
	return q
}

// valueQ6K reads (row, col) of Q6K tiles by the addressing the kernels use
// (embed_q6_k, matvec_q6k.cu's fragments), decoded as gguf's dequantiser
// does: float32(d·sc)·(q − 32).
func valueQ6K(tiles []byte, cols, row, col int) float32 {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*Q6K.Bytes:]
	rr, g, h, j := row%Rows, row%8, row%Rows/8, col%Cols/16
	sc := int8(t[3072+16*rr+j])
	d := gguf.F16ToF32(binary.LittleEndian.Uint16(t[3328+4*g+2*h:]))
	ds := float32(d * float32(sc))
	return ds * float32(int(codeQ6K(tiles, cols, row, col))-32)
}

// codeQ6K is the 6-bit code of (row, col) in Q6K tiles.
func codeQ6K(tiles []byte, cols, row, col int) byte {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*Q6K.Bytes:]
	rr, v := row%Rows, col%Cols
	g, h := rr%8, rr/8
	j, c, p := v/16, v%16/4, v%4
	nib := t[512*(j/4)+16*(4*g+c)+4*(j%4)+2*(p%2)+h] >> (4 * (p / 2)) & 15
	hw := binary.LittleEndian.Uint32(t[2048+512*(j/8)+16*(4*g+c)+4*(j%8/2):])
	return nib | byte(hw>>(2*(h+2*(p/2))+8*(j%2)+16*(p%2))&3)<<4
}

// valueQ3K reads (row, col) of Q3K tiles by the addressing the kernels use
// (embed_q3_k, matvec_q6k.cu's Q3 fragments), decoded as gguf's dequantiser
// does: float32(d·sc)·(q − 8) for the stored code q.
func valueQ3K(tiles []byte, cols, row, col int) float32 {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*Q3K.Bytes:]
	rr, g, h, j := row%Rows, row%8, row%Rows/8, col%Cols/16
	sc := int8(t[2048+16*rr+j])
	d := gguf.F16ToF32(binary.LittleEndian.Uint16(t[2304+4*g+2*h:]))
	ds := float32(d * float32(sc))
	return ds * float32(int(codeQ3K(tiles, cols, row, col))-8)
}

// codeQ3K is the stored code (q + 8) of (row, col) in Q3K tiles: Q6K's
// low nibble.
func codeQ3K(tiles []byte, cols, row, col int) byte {
	return codeNib(Q3K, false, tiles, cols, row, col)
}

// codeNib is the nibble of (row, col) in a low-nibble plane of l's tiles:
// in Q6K's order, or in IQ4XS's (lut).
func codeNib(l Layout, lut bool, tiles []byte, cols, row, col int) byte {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*l.Bytes:]
	rr, v := row%Rows, col%Cols
	g, h := rr%8, rr/8
	j, c, p := v/16, v%16/4, v%4
	w := t[512*(j/4)+16*(4*g+c)+4*(j%4):]
	if lut {
		return w[2*(p/2)+h] >> (4 * (p % 2)) & 15
	}
	return w[2*(p%2)+h] >> (4 * (p / 2)) & 15
}

// valueB32 reads (row, col) of Q40 or IQ4NL (v: the codebook) tiles by the
// kernels' addressing (embed_q4_0, embed_iq4_nl), decoded as gguf's
// dequantisers do: float32(q−8)·d, or d·v[n].
func valueB32(l Layout, v *[16]float32, tiles []byte, cols, row, col int) float32 {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*l.Bytes:]
	d := gguf.F16ToF32(binary.LittleEndian.Uint16(t[2048+16*(row%Rows)+2*(col%Cols/32):]))
	if v != nil {
		return d * v[iq4Index(codeNib(l, true, tiles, cols, row, col))]
	}
	return float32(int(codeNib(l, false, tiles, cols, row, col))-8) * d
}

// iq4Codebook is IQ4_NL's codebook as gguf decodes it: the values of a
// block with d = 1 whose code j is j.
func iq4Codebook(t testing.TB) [16]float32 {
	blk := make([]byte, 18)
	binary.LittleEndian.PutUint16(blk, gguf.F32ToF16(1))
	for j := range 16 {
		blk[2+j] = byte(j) | byte(j)<<4
	}
	var y [32]float32
	if err := gguf.Dequantize(gguf.TypeIQ4_NL, blk, y[:]); err != nil {
		t.Fatal(err)
	}
	return [16]float32(y[:16])
}

// valueIQ4XS reads (row, col) of IQ4XS tiles by the addressing the kernels
// use (embed_iq4_xs, matvec_q6k.cu's IQ4 fragments), decoded as gguf's
// dequantiser does: float32(d·(ls−32))·v[n] for the index n of the stored
// code.
func valueIQ4XS(tiles []byte, cols, row, col int, v [16]float32) float32 {
	t := tiles[(row/Rows*(cols/Cols)+col/Cols)*IQ4XS.Bytes:]
	rr, g, h, j := row%Rows, row%8, row%Rows/8, col%Cols/16
	sc := int8(t[2048+16*rr+j])
	d := gguf.F16ToF32(binary.LittleEndian.Uint16(t[2304+4*g+2*h:]))
	dl := float32(d * float32(sc))
	return dl * v[iq4Index(codeIQ4XS(tiles, cols, row, col))]
}

// codeIQ4XS is the stored code of (row, col) in IQ4XS tiles.
func codeIQ4XS(tiles []byte, cols, row, col int) byte {
	return codeNib(IQ4XS, true, tiles, cols, row, col)
}

// iq4Index is the codebook index that code c of the IQ4 tiles stands for:
// c = i + 8h holds index 2i + h (kquant.cuh memra_iq4_lut).
func iq4Index(c byte) byte { return 2*(c%8) + c/8 }

// prmt is PTX's prmt.b32 in its default mode: byte k of the result is byte
// s_k%8 of b:a (a the low word) for selector nibble s_k of s's low 16
// bits, or that byte's top bit in all 8 where s_k%16 >= 8.
func prmt(a, b, s uint32) uint32 {
	var r uint32
	for k := range 4 {
		n := s >> (4 * k) & 15
		x := byte((uint64(b)<<32 | uint64(a)) >> (8 * (n % 8)))
		if n >= 8 {
			x = byte(int8(x) >> 7)
		}
		r |= uint32(x) << (8 * k)
	}
	return r
}

// TestIQ4Table runs the kernels' lookup (kquant.cuh memra_iq4_lut: two
// permutes of the words MEMRA_IQ4_A0..B1 and an XOR) on the code of every
// IQ4_NL index, four codes to a selector as the kernels pass them, and
// wants gguf's value + 128; and iq4Index must undo iq4Code.
func TestIQ4Table(t *testing.T) {
	src, err := os.ReadFile("../../../kernels/kquant.cuh")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]uint32{}
	for _, m := range regexp.MustCompile(`(?m)^#define MEMRA_IQ4_([AB][01]) 0x([0-9A-Fa-f]{8})u$`).FindAllStringSubmatch(string(src), -1) {
		x, _ := strconv.ParseUint(m[2], 16, 32)
		words[m[1]] = uint32(x)
	}
	if len(words) != 4 {
		t.Fatalf("kquant.cuh: %d of the words MEMRA_IQ4_A0, A1, B0, B1 found", len(words))
	}
	v := iq4Codebook(t)
	for n0 := 0; n0 < 16; n0 += 4 {
		var s uint32
		for k := range 4 {
			s |= uint32(iq4Code[n0+k]) << (4 * k)
		}
		got := prmt(words["A0"], words["A1"], s) ^ prmt(words["B0"], words["B1"], s^0x8888)
		for k := range 4 {
			n := n0 + k
			if b := int(byte(got>>(8*k))) - 128; float32(b) != v[n] {
				t.Errorf("index %d (code %d): the kernels' lookup gives %d, gguf %g", n, iq4Code[n], b, v[n])
			}
			if iq4Index(iq4Code[n]) != byte(n) {
				t.Errorf("index %d: code %d reads back as index %d", n, iq4Code[n], iq4Index(iq4Code[n]))
			}
		}
	}
}

// TestPutRowOwnBits writes a single row of random blocks into a zeroed tile
// for each of the 16 rows in turn: every code, scale and d of every other
// row must read back zero, so no row's bits land in another's (TestTile's
// zero padding rows could not tell: their d is 0).
func TestPutRowOwnBits(t *testing.T) {
	const cols = 256
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		l    Layout
		code func(tiles []byte, cols, row, col int) byte
		side func(row int) [][2]int // byte ranges [from, to) of a row's scales and d
	}{
		{"Q4_K", Q4K, func(tl []byte, c, row, col int) byte { return codeK4(Q4K, tl, c, row, col) },
			func(row int) [][2]int {
				o := 2304 + 8*(row%8) + 4*(row/8)
				return [][2]int{{2048 + 16*row, 2064 + 16*row}, {o, o + 4}}
			}},
		{"Q5_K", Q5K, func(tl []byte, c, row, col int) byte { return codeK4(Q5K, tl, c, row, col) },
			func(row int) [][2]int {
				o := 2304 + 8*(row%8) + 4*(row/8)
				return [][2]int{{2048 + 16*row, 2064 + 16*row}, {o, o + 4}}
			}},
		{"Q6_K", Q6K, codeQ6K,
			func(row int) [][2]int {
				o := 3328 + 4*(row%8) + 2*(row/8)
				return [][2]int{{3072 + 16*row, 3088 + 16*row}, {o, o + 2}}
			}},
		{"Q3_K", Q3K, codeQ3K,
			func(row int) [][2]int {
				o := 2304 + 4*(row%8) + 2*(row/8)
				return [][2]int{{2048 + 16*row, 2064 + 16*row}, {o, o + 2}}
			}},
		{"IQ4_XS", IQ4XS, codeIQ4XS,
			func(row int) [][2]int {
				o := 2304 + 4*(row%8) + 2*(row/8)
				return [][2]int{{2048 + 16*row, 2064 + 16*row}, {o, o + 2}}
			}},
		{"Q4_0", Q40, func(tiles []byte, cols, row, col int) byte { return codeNib(Q40, false, tiles, cols, row, col) },
			func(row int) [][2]int { return [][2]int{{2048 + 16*row, 2064 + 16*row}} }},
		{"IQ4_NL", IQ4NL, func(tiles []byte, cols, row, col int) byte { return codeNib(IQ4NL, true, tiles, cols, row, col) },
			func(row int) [][2]int { return [][2]int{{2048 + 16*row, 2064 + 16*row}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for only := range Rows {
				blk := make([]byte, tc.l.BlockBytes)
				for i := range blk {
					blk[i] = byte(r.IntN(255) + 1) // no zero byte: every bit field of the row is likely set somewhere
				}
				// Only this row written (a zero Q3_K block is not zero
				// in Q3K: its codes are q+8 = 4 and its scales −32).
				tile := make([]byte, tc.l.Size(Rows, cols))
				tc.l.PutRow(tile, only, blk, cols)
				var set int
				for row := range Rows {
					for col := range cols {
						q := tc.code(tile, cols, row, col)
						if row != only && q != 0 {
							t.Fatalf("row %d alone: row %d col %d reads code %d", only, row, col, q)
						}
						if q != 0 {
							set++
						}
					}
					if row == only {
						continue
					}
					for _, rg := range tc.side(row) {
						for b := rg[0]; b < rg[1]; b++ {
							if tile[b] != 0 {
								t.Fatalf("row %d alone: byte %d of row %d's scales or d is %#x", only, b, row, tile[b])
							}
						}
					}
				}
				if set == 0 {
					t.Fatalf("row %d alone: no code of it reads back non-zero", only)
				}
			}
		})
	}
}

// TestTile reads every value of random blocks back out of the tiles by the
// kernels' addressing and compares it with gguf.Dequantize of the original
// blocks (bit for bit: the same operations), on a row count that is not a
// multiple of 16; the padding rows must be zero.
func TestTile(t *testing.T) {
	const rows, cols = 21, 512
	iq4 := iq4Codebook(t)
	for _, tc := range []struct {
		typ   gguf.Type
		l     Layout
		value func(tiles []byte, cols, row, col int) float32
		d     []int // byte offsets of a block's f16 scales
	}{
		{gguf.TypeQ4_K, Q4K, valueQ4K, []int{0, 2}},
		{gguf.TypeQ5_K, Q5K, valueQ5K, []int{0, 2}},
		{gguf.TypeQ6_K, Q6K, valueQ6K, []int{208}},
		{gguf.TypeQ3_K, Q3K, valueQ3K, []int{108}},
		{gguf.TypeIQ4_XS, IQ4XS, func(tiles []byte, cols, row, col int) float32 {
			return valueIQ4XS(tiles, cols, row, col, iq4)
		}, []int{0}},
		{gguf.TypeQ4_0, Q40, func(tiles []byte, cols, row, col int) float32 {
			return valueB32(Q40, nil, tiles, cols, row, col)
		}, []int{0, 18, 36, 54, 72, 90, 108, 126}},
		{gguf.TypeIQ4_NL, IQ4NL, func(tiles []byte, cols, row, col int) float32 {
			return valueB32(IQ4NL, &iq4, tiles, cols, row, col)
		}, []int{0, 18, 36, 54, 72, 90, 108, 126}},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.typ)))
			src := make([]byte, rows*cols/Cols*tc.l.BlockBytes)
			for i := range src {
				src[i] = byte(r.IntN(256))
			}
			for b := 0; b < len(src); b += tc.l.BlockBytes { // finite f16 scales
				for _, o := range tc.d {
					binary.LittleEndian.PutUint16(src[b+o:], gguf.F32ToF16(r.Float32()/64))
				}
			}
			want := make([]float32, rows*cols)
			if err := gguf.Dequantize(tc.typ, src, want); err != nil {
				t.Fatal(err)
			}
			tiles := tc.l.Tile(src, rows, cols)
			if len(tiles) != tc.l.Size(rows, cols) || len(tiles) != 2*2*tc.l.Bytes {
				t.Fatalf("tiled %d bytes, Size %d, want %d", len(tiles), tc.l.Size(rows, cols), 4*tc.l.Bytes)
			}
			for row := range rows {
				for col := range cols {
					if got := tc.value(tiles, cols, row, col); got != want[row*cols+col] {
						t.Fatalf("row %d col %d: %g, want %g", row, col, got, want[row*cols+col])
					}
				}
			}
			for row := rows; row < 32; row++ {
				for col := range cols {
					if got := tc.value(tiles, cols, row, col); got != 0 {
						t.Fatalf("padding row %d col %d: %g, want 0", row, col, got)
					}
				}
			}
		})
	}
}

// TestCode checks Code and Code6 (mvexp's float64 references use them)
// against gguf.Dequantize on blocks with unit scales and zero mins.
func TestCode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b4 := make([]byte, 144)
	for i := range b4 {
		b4[i] = byte(r.IntN(256))
	}
	binary.LittleEndian.PutUint16(b4[0:], gguf.F32ToF16(1))
	binary.LittleEndian.PutUint16(b4[2:], gguf.F32ToF16(0))
	b6 := make([]byte, 210)
	for i := range b6 {
		b6[i] = byte(r.IntN(256))
	}
	binary.LittleEndian.PutUint16(b6[208:], gguf.F32ToF16(1))
	for i := 192; i < 208; i++ {
		b6[i] = 1
	}
	y4, y6 := make([]float32, 256), make([]float32, 256)
	if err := gguf.Dequantize(gguf.TypeQ4_K, b4, y4); err != nil {
		t.Fatal(err)
	}
	if err := gguf.Dequantize(gguf.TypeQ6_K, b6, y6); err != nil {
		t.Fatal(err)
	}
	for v := range 256 {
		sc, _ := ScaleMin(b4[4:16], v/32)
		if want := float32(sc) * float32(Code(b4[16:], v)); y4[v] != want {
			t.Fatalf("Q4_K value %d: dequant %g, sc·Code %g", v, y4[v], want)
		}
		if want := float32(int(Code6(b6, v)) - 32); y6[v] != want {
			t.Fatalf("Q6_K value %d: dequant %g, Code6−32 %g", v, y6[v], want)
		}
	}
}

// BenchmarkTile is the host cost of laying a 256 × 4096 matrix out in
// tiles, as a load does for every K-quant matrix (SetBytes: GGUF bytes).
func BenchmarkTile(b *testing.B) {
	const rows, cols = 256, 4096
	for _, tc := range []struct {
		name string
		l    Layout
	}{{"Q4_K", Q4K}, {"Q5_K", Q5K}, {"Q6_K", Q6K}, {"Q3_K", Q3K}, {"IQ4_XS", IQ4XS}, {"Q4_0", Q40}, {"IQ4_NL", IQ4NL}} {
		b.Run(tc.name, func(b *testing.B) {
			src := make([]byte, rows*cols/Cols*tc.l.BlockBytes)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range src {
				src[i] = byte(r.IntN(256))
			}
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				tc.l.Tile(src, rows, cols)
			}
		})
	}
}
