package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
)

// TestScreenRowBound: for rows of bf16 and f16 weights at several scales
// (subnormal to large) and random inputs, a float32 sum of the row's
// products and one of its copy's, each in a random order, must lie within
// screenRow's c·|x|_1 of each other; the copy's blocks must be q8_0's
// (scale, then 32 quants within ±127). Rows that cannot be bounded (a NaN,
// a block whose scale overflows f16) get c = +Inf and a zero copy; a zero
// row gets c = 0.
func TestScreenRowBound(t *testing.T) {
	r := rand.New(rand.NewPCG(132, 1))
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16} {
		for _, cols := range []int{32, 1024, 4096} {
			for trial := range 40 {
				scale := []float32{1e-6, 1e-3, 1, 30, 1e3}[trial%5]
				if typ == gguf.TypeF16 && scale == 1e3 {
					scale = 60 // within f16's range
				}
				w := make([]float32, cols)
				for i := range w {
					w[i] = float32(r.NormFloat64()) * scale
					if trial%7 == 3 && i%5 == 0 {
						w[i] = 0 // blocks with zeros
					}
				}
				src := make([]byte, 2*cols)
				if err := gguf.Quantize(typ, w, src); err != nil {
					t.Fatal(err)
				}
				dst := make([]byte, screenRowBytes(cols))
				c := screenRow(typ, src, dst)
				if math.IsInf(float64(c), 0) || math.IsNaN(float64(c)) || c < 0 {
					t.Fatalf("%s cols %d trial %d: c = %v for finite weights", typ, cols, trial, c)
				}
				x := make([]float32, cols)
				for i := range x {
					x[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()))
				}
				vals := screenRowValues(t, typ, src, cols)
				deq := screenRowValues(t, gguf.TypeQ8_0, dst, cols)
				screenQuantsInRange(t, dst)
				l := shuffledSum(r, vals, x)
				a := shuffledSum(r, deq, x)
				n1 := 0.0
				for _, v := range x {
					n1 += math.Abs(float64(v))
				}
				if d, b := math.Abs(float64(l)-float64(a)), float64(c)*n1; d > b {
					t.Fatalf("%s cols %d trial %d: |L - A| = %g past the bound %g", typ, cols, trial, d, b)
				}
			}
		}
	}
	t.Run("unbounded", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			typ  gguf.Type
			set  func(w []float32)
		}{
			{"nan", gguf.TypeBF16, func(w []float32) { w[77] = float32(math.NaN()) }},
			{"inf", gguf.TypeF16, func(w []float32) { w[3] = float32(math.Inf(-1)) }},
			{"scale-overflows-f16", gguf.TypeBF16, func(w []float32) { w[40] = 1e30 }},
		} {
			w := make([]float32, 128)
			for i := range w {
				w[i] = float32(i%9) - 4
			}
			tc.set(w)
			src := make([]byte, 2*len(w))
			if err := gguf.Quantize(tc.typ, w, src); err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, screenRowBytes(len(w)))
			for i := range dst {
				dst[i] = 0xAB
			}
			if c := screenRow(tc.typ, src, dst); !math.IsInf(float64(c), 1) {
				t.Errorf("%s: c = %v, want +Inf", tc.name, c)
			}
			for i, b := range dst {
				if b != 0 {
					t.Fatalf("%s: copy byte %d = %#x, want a zero copy", tc.name, i, b)
				}
			}
		}
		src := make([]byte, 2*64)
		dst := make([]byte, screenRowBytes(64))
		if c := screenRow(gguf.TypeBF16, src, dst); c != 0 {
			t.Errorf("a zero row: c = %v, want 0", c)
		}
	})
}

// screenRowValues is a one-row tensor's values, as the CPU backend reads
// them (exact for f16, bf16 and q8_0's d·q).
func screenRowValues(t *testing.T, typ gguf.Type, data []byte, cols int) []float32 {
	t.Helper()
	out := make([]float32, cols)
	if err := cpu.DequantizeRow(out, &model.Tensor{Name: "row", Type: typ, Shape: []int{cols, 1}, Data: data}, 0); err != nil {
		t.Fatal(err)
	}
	return out
}

// screenQuantsInRange fails t where a q8_0 copy holds a quant of -128 (it
// keeps them within ±127).
func screenQuantsInRange(t *testing.T, q []byte) {
	t.Helper()
	bb := gguf.TypeQ8_0.BlockBytes()
	for b := 0; b < len(q)/bb; b++ {
		for i := range 32 {
			if int8(q[b*bb+2+i]) == -128 {
				t.Fatalf("block %d: quant -128 (the copy keeps ±127)", b)
			}
		}
	}
}

// shuffledSum is Σ w_i·x_i in float32, products and sums rounded, in a
// random order.
func shuffledSum(r *rand.Rand, w, x []float32) float32 {
	var s float32
	for _, i := range r.Perm(len(w)) {
		s += w[i] * x[i]
	}
	return s
}

// TestScreenable: only 16-bit logits matrices on the plain kernel, of
// whole q8_0 blocks, get a copy.
func TestScreenable(t *testing.T) {
	mk := func(typ gguf.Type, cols, rows int) *model.Tensor {
		return &model.Tensor{Name: "output.weight", Type: typ, Shape: []int{cols, rows}}
	}
	for _, tc := range []struct {
		t    *model.Tensor
		want bool
	}{
		{mk(gguf.TypeBF16, 1024, 248320), true},
		{mk(gguf.TypeF16, 4096, 248320), true},
		{mk(gguf.TypeBF16, 1024, 2048), false}, // the wide kernel's rows
		{mk(gguf.TypeQ8_0, 1024, 248320), false},
		{mk(gguf.TypeF32, 1024, 248320), false},
		{mk(gguf.TypeBF16, 1000, 248320), false}, // not whole q8_0 blocks
		{nil, false},
	} {
		if got := screenable(tc.t); got != tc.want {
			name := "nil"
			if tc.t != nil {
				name = tc.t.Type.String()
			}
			t.Errorf("%s: screenable %v, want %v", name, got, tc.want)
		}
	}
}

// BenchmarkScreenRow times building a 1,024-column row's copy on the host,
// which Load does for every row of a 16-bit logits matrix (the 0.8B's
// 248,320, the rows split over the CPUs): what the screen adds to loading.
func BenchmarkScreenRow(b *testing.B) {
	const cols = 1024
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, cols)
	for i := range w {
		w[i] = float32(r.NormFloat64()) * 0.02
	}
	src := make([]byte, 2*cols)
	if err := gguf.Quantize(gguf.TypeBF16, w, src); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, screenRowBytes(cols))
	b.SetBytes(2 * cols)
	for b.Loop() {
		screenRow(gguf.TypeBF16, src, dst)
	}
}

// TestScreenedTopPaths: which steps end through the screen. A step whose
// top k the screen selects writes no logits, so none that then reads them
// (the penalty, the argmax of a device token without the draw) may take
// that path, and none takes it without the copy or with the logits left
// out.
func TestScreenedTopPaths(t *testing.T) {
	on := &Model{scr: screen{q: dtensor{ptr: 1}}}
	for _, tc := range []struct {
		name        string
		g           *Model
		a           stepArgs
		greedy, top bool
	}{
		{"greedy device token", on, stepArgs{deviceToken: true}, true, false},
		{"device draw", on, stepArgs{deviceToken: true, draw: true}, false, true},
		{"host top k", on, stepArgs{topK: true}, false, true},
		{"host logits", on, stepArgs{}, false, false},
		{"top k and the argmax", on, stepArgs{deviceToken: true, topK: true}, false, false},
		{"draw with the penalty", on, stepArgs{deviceToken: true, draw: true, penalty: true}, false, false},
		{"greedy with the penalty", on, stepArgs{deviceToken: true, penalty: true}, false, false},
		{"no copy", &Model{}, stepArgs{deviceToken: true, draw: true}, false, false},
		{"logits left out", &Model{scr: on.scr, omit: stepOmit{logits: true}}, stepArgs{topK: true}, false, false},
	} {
		if got := tc.g.screened(tc.a); got != tc.greedy {
			t.Errorf("%s: screened %v, want %v", tc.name, got, tc.greedy)
		}
		if got := tc.g.screenedTop(tc.a); got != tc.top {
			t.Errorf("%s: screenedTop %v, want %v", tc.name, got, tc.top)
		}
	}
}
