package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// TestSIMDDot checks the vector dot kernels (when this CPU has them) against
// a float64 dot over the same stored values, for lengths with and without a
// tail past the last 32-element group. Tolerance: f32 accumulation over n
// terms in ≤ n/8 + 8 rounding steps per partial sum, bounded by
// (n/8 + 16)·2⁻²⁴·Σ|w·x|.
func TestSIMDDot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0} {
		f, ok := simdDot(typ)
		if !ok {
			t.Logf("%s: no vector kernel on this CPU; the Go kernel runs", typ)
			continue
		}
		for _, n := range []int{32, 64, 96, 1000, 4096, 4100} {
			if typ == gguf.TypeQ8_0 && n%32 != 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", typ, n), func(t *testing.T) {
				src := make([]float32, n)
				x := make([]float32, n)
				for i := range src {
					src[i] = float32(r.NormFloat64())
					x[i] = float32(r.Float64()*2 - 1)
				}
				rb, err := gguf.RowBytes(typ, int64(n))
				if err != nil {
					t.Fatal(err)
				}
				row := make([]byte, rb)
				if err := gguf.Quantize(typ, src, row); err != nil {
					t.Fatal(err)
				}
				w := make([]float32, n)
				if err := gguf.Dequantize(typ, row, w); err != nil {
					t.Fatal(err)
				}
				var want, abs float64
				for i := range w {
					want += float64(w[i]) * float64(x[i])
					abs += math.Abs(float64(w[i]) * float64(x[i]))
				}
				got := f(row, x)
				tol := float64(n/8+16) * 0x1p-24 * abs
				if d := math.Abs(float64(got) - want); d > tol || math.IsNaN(float64(got)) {
					t.Fatalf("dot = %v, float64 %v: |diff| %.3g > %.3g", got, want, d, tol)
				}
			})
		}
	}
}
