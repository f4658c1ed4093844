package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

// dotBound is the error bound of an f32 dot of n products against a float64
// dot over the same stored values, in any summation order: each product and
// each of the n−1 additions rounds once (≤ 2⁻²⁴ relative), and q8_0 adds a
// multiplication by the block scale, so (n+2)·2⁻²⁴·Σ|w·x| bounds it (the
// worst case, recursive summation; pairwise orders do better); n·2⁻¹⁴⁹ more
// covers products that underflow to subnormals, rounded absolutely.
func dotBound(n int, abs float64) float64 {
	return float64(n+2)*0x1p-24*abs + float64(n)*0x1p-149
}

// TestGoDot checks the Go dot kernels against a float64 dot over
// gguf.Dequantize's values for every matrix type. On a CPU with AVX2 and FMA
// dotFor returns them only for the types without a vector kernel, and the
// vector kernels leave them a row's tail (bf16, f16) or nothing (q8_0), so
// the kernels that run on arm64 and older x86 are checked here. Lengths:
// none, one and several blocks, and for the 1-element types every tail past
// the kernels' 8-element groups; rows at each byte offset mod 4 (dotF32
// reads an unaligned row byte by byte), x from an odd element on. The
// lengths are short enough that one weight dropped or counted twice
// (≈ Σ|w·x|/n) is well past the bound.
func TestGoDot(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, typ := range model.MatrixTypes() {
		dot, err := goDot(typ)
		if err != nil {
			t.Fatal(err)
		}
		if got := dot(nil, nil); got != 0 {
			t.Errorf("%s: empty dot = %v", typ, got)
		}
		bs := typ.BlockSize()
		lengths := []int{bs, 2 * bs, 3 * bs, 5 * bs}
		if bs == 1 {
			lengths = []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 515}
		}
		for _, n := range lengths {
			for off := range 4 {
				t.Run(fmt.Sprintf("%s/%d/off%d", typ, n, off), func(t *testing.T) {
					data, err := modeltest.RandomTensor(r, typ, []uint64{uint64(n), 1}, modeltest.KindMatrix)
					if err != nil {
						t.Fatal(err)
					}
					row := make([]byte, len(data)+off)[off:]
					copy(row, data)
					x := make([]float32, n+1)[1:]
					for i := range x {
						x[i] = float32(r.NormFloat64())
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
					if abs == 0 {
						t.Fatal("all-zero products: the test cannot tell a dropped element")
					}
					got := dot(row, x)
					if d := math.Abs(float64(got) - want); !(d <= dotBound(n, abs)) { // NaN fails
						t.Fatalf("dot = %v, float64 %v: |diff| %.3g > %.3g", got, want, d, dotBound(n, abs))
					}
				})
			}
		}
	}
}
