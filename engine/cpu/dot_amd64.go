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
	}
	return nil, false
}
