package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"

	"github.com/memra-ai/memra/gguf"
)

// guarded returns n bytes that end where an inaccessible page begins: a
// kernel that reads one byte past them faults (the test binary dies)
// rather than reading the slack Go's allocator leaves after a slice, which
// TestSIMDDot and FuzzDotSIMD cannot tell from the row.
func guarded(t *testing.T, n int) []byte {
	t.Helper()
	ps := syscall.Getpagesize()
	pages := (n+ps-1)/ps + 1
	mem, err := syscall.Mmap(-1, 0, (pages+1)*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[pages*ps:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return mem[pages*ps-n : pages*ps : pages*ps]
}

// TestSIMDDotGuarded runs the vector kernels (where this CPU has them) on
// rows and x that end at a guard page, for lengths with every kind of tail
// (1-element types: past the 32-element groups and the Go tail's 8; block
// types: 1, 2, 3, kChunk±1 and more blocks), and checks each against goDot
// on the same random non-zero values within twice dotBound (both kernels
// are within dotBound of the float64 dot).
func TestSIMDDotGuarded(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeIQ4_NL,
		gguf.TypeIQ4_XS, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K} {
		vec, ok := simdDot(typ)
		if !ok {
			t.Logf("%s: no vector kernel on this CPU", typ)
			continue
		}
		ref, err := goDot(typ)
		if err != nil {
			t.Fatal(err)
		}
		bs := typ.BlockSize()
		lengths := []int{bs, 2 * bs, 3 * bs, (kChunk - 1) * bs, (kChunk + 1) * bs, (8*kChunk + 3) * bs}
		if bs == 1 {
			lengths = []int{1, 7, 9, 31, 33, 63, 65, 1001}
		}
		for _, n := range lengths {
			t.Run(fmt.Sprintf("%s/%d", typ, n), func(t *testing.T) {
				rb, err := gguf.RowBytes(typ, int64(n))
				if err != nil {
					t.Fatal(err)
				}
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				row := guarded(t, int(rb))
				if err := gguf.Quantize(typ, src, row); err != nil {
					t.Fatal(err)
				}
				x := unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 4*n)[0])), n)
				w := make([]float32, n)
				if err := gguf.Dequantize(typ, row, w); err != nil {
					t.Fatal(err)
				}
				var abs float64
				for i := range x {
					x[i] = float32(r.Float64()*2 - 1)
					abs += math.Abs(float64(w[i]) * float64(x[i]))
				}
				got, want := vec(row, x), ref(row, x)
				if d := math.Abs(float64(got) - float64(want)); !(d <= 2*dotBound(n, abs)) { // NaN fails
					t.Fatalf("vector %v, Go %v: |diff| %.3g > %.3g", got, want, d, 2*dotBound(n, abs))
				}
			})
		}
	}
}
