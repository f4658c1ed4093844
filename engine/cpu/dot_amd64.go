//go:build amd64

package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/memra-ai/memra/gguf"
)

// Pure Go has no vector instructions, and the scalar kernels of matvec.go
// convert and multiply one element at a time (the 4-bit and K-quant types a
// dequantised block at a time): bound by arithmetic, not memory. These AVX2
// + FMA (+ F16C) kernels convert 8 elements per instruction; dotFor picks
// them when the CPU has the features and falls back to the Go kernels
// otherwise.

//go:noescape
func dotBF16AVX2(w *byte, x *float32, n int) float32

//go:noescape
func dotF16AVX2(w *byte, x *float32, n int) float32

//go:noescape
func dotQ8AVX2(w *byte, x *float32, nb int) float32

//go:noescape
func prefetchAhead(p *byte, off, n int)

//go:noescape
func dotNibAVX2(w *byte, x *float32, sc *float32, ng, stride int, tab *[16]int8) float32

// Codebooks of the 4-bit formats for dotNibAVX2: Q4_0's nibble n stands
// for n−8, IQ4_NL's and IQ4_XS's for gguf.IQ4Codebook()[n].
var (
	q4_0Codes = [16]int8{-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7}
	iq4Codes  = gguf.IQ4Codebook()
)

// dotNib32 wraps dotNibAVX2 for Q4_0 and IQ4_NL rows: blocks of 18 bytes, an
// f16 scale and 16 bytes of nibbles; the scales of up to 8·kChunk blocks
// (as many weights as dotK's chunk) are converted first.
func dotNib32(tab *[16]int8) dotFunc {
	f16 := f16Table()
	return func(row []byte, x []float32) float32 {
		const bb, most = 18, 8 * kChunk
		var sc [most]float32
		var sum float32
		nb := len(x) / 32
		for b0 := 0; b0 < nb; b0 += most {
			n := min(most, nb-b0)
			prefetchAhead(&row[b0*bb], n*bb, n*bb)
			for i := range n {
				at := (b0 + i) * bb
				sc[i] = f16[uint16(row[at])|uint16(row[at+1])<<8]
			}
			sum += dotNibAVX2(&row[b0*bb+2], &x[32*b0], &sc[0], n, bb, tab)
		}
		return sum
	}
}

// dotIQ4XS: each 136-byte IQ4_XS block is 8 groups of 16 nibble bytes after
// an 8-byte head of scales, one dotNibAVX2 call a block.
func dotIQ4XS(row []byte, x []float32) float32 {
	const bb = 136
	var sc [8]float32
	var sum float32
	for b := 0; b < len(x)/256; b++ {
		blk := row[b*bb : (b+1)*bb]
		gguf.ScalesIQ4XS(blk, &sc)
		sum += dotNibAVX2(&blk[8], &x[256*b], &sc[0], 8, 16, &iq4Codes)
	}
	return sum
}

//go:noescape
func dotQ3KAVX2(w *byte, x *float32, sc *float32, nb int) float32

//go:noescape
func dotQ4KAVX2(w *byte, x *float32, sc *float32, nb int) float32

//go:noescape
func dotQ5KAVX2(w *byte, x *float32, sc *float32, nb int) float32

//go:noescape
func dotQ6KAVX2(w *byte, x *float32, sc *float32, nb int) float32

// dotK wraps a K-quant vector kernel: it unpacks the f32 scales of up to
// kChunk superblocks of bb bytes (16 a superblock) and passes them with the
// blocks. Rows are whole superblocks (model load checks the shapes).
func dotK(kernel func(w *byte, x *float32, sc *float32, nb int) float32, bb int, scales func(blk []byte, sc *[16]float32)) dotFunc {
	return func(row []byte, x []float32) float32 {
		var sc [kChunk * 16]float32
		var sum float32
		nb := len(x) / 256
		for b0 := 0; b0 < nb; b0 += kChunk {
			n := min(kChunk, nb-b0)
			// The scales' loads are the first touch of each block's lines,
			// few in flight at a time: fetch the next chunk's while this
			// one runs (5-20% on 4,096-column rows, BenchmarkMatVec).
			prefetchAhead(&row[b0*bb], n*bb, n*bb)
			for i := range n {
				scales(row[(b0+i)*bb:(b0+i+1)*bb], (*[16]float32)(sc[16*i:]))
			}
			sum += kernel(&row[b0*bb], &x[256*b0], &sc[0], n)
		}
		return sum
	}
}

// scalesK4 lays out a Q4_K or Q5_K block's scales for dotQ4KAVX2 and
// dotQ5KAVX2: the eight scales, then the eight offsets.
func scalesK4(blk []byte, sc *[16]float32) {
	gguf.ScalesK4(blk, (*[8]float32)(sc[:8]), (*[8]float32)(sc[8:]))
}

// simdDot returns the vector kernel for t, if this CPU runs one.
func simdDot(t gguf.Type) (dotFunc, bool) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil, false
	}
	switch t {
	case gguf.TypeBF16:
		return func(row []byte, x []float32) float32 {
			n := len(x) &^ 31
			var s float32
			if n > 0 {
				s = dotBF16AVX2(&row[0], &x[0], n)
			}
			if n < len(x) {
				s += dotBF16(row[2*n:], x[n:])
			}
			return s
		}, true
	case gguf.TypeF16:
		if !cpu.X86.HasF16C {
			return nil, false
		}
		tab := f16Table()
		return func(row []byte, x []float32) float32 {
			n := len(x) &^ 31
			var s float32
			if n > 0 {
				s = dotF16AVX2(&row[0], &x[0], n)
			}
			if n < len(x) {
				s += dotF16(tab, row[2*n:], x[n:])
			}
			return s
		}, true
	case gguf.TypeQ8_0:
		if !cpu.X86.HasF16C {
			return nil, false
		}
		return func(row []byte, x []float32) float32 {
			nb := len(x) / 32
			if nb == 0 {
				return 0
			}
			return dotQ8AVX2(&row[0], &x[0], nb)
		}, true
	case gguf.TypeQ4_0:
		return dotNib32(&q4_0Codes), true
	case gguf.TypeIQ4_NL:
		return dotNib32(&iq4Codes), true
	case gguf.TypeIQ4_XS:
		return dotIQ4XS, true
	case gguf.TypeQ3_K:
		return dotK(dotQ3KAVX2, 110, gguf.ScalesQ3K), true
	case gguf.TypeQ4_K:
		return dotK(dotQ4KAVX2, 144, scalesK4), true
	case gguf.TypeQ5_K:
		return dotK(dotQ5KAVX2, 176, scalesK4), true
	case gguf.TypeQ6_K:
		return dotK(dotQ6KAVX2, 210, gguf.ScalesQ6K), true
	}
	return nil, false
}
