//go:build amd64

package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/memra-ai/memra/gguf"
)

// Pure Go has no vector instructions, and the scalar kernels of matvec.go
// convert and multiply one element at a time: on bf16, f16 and q8_0 they are
// bound by arithmetic, not memory. These AVX2 + FMA (+ F16C) kernels convert
// 8 elements per instruction; dotFor picks them when the CPU has the
// features and falls back to the Go kernels otherwise.

//go:noescape
func dotBF16AVX2(w *byte, x *float32, n int) float32

//go:noescape
func dotF16AVX2(w *byte, x *float32, n int) float32

//go:noescape
func dotQ8AVX2(w *byte, x *float32, nb int) float32

//go:noescape
func prefetchAhead(p *byte, off, n int)

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
	case gguf.TypeQ4_K:
		return dotK(dotQ4KAVX2, 144, scalesK4), true
	case gguf.TypeQ5_K:
		return dotK(dotQ5KAVX2, 176, scalesK4), true
	case gguf.TypeQ6_K:
		return dotK(dotQ6KAVX2, 210, gguf.ScalesQ6K), true
	}
	return nil, false
}
