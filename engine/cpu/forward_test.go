package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/gguf"
)

// relErr returns max|got−want| / max|want|.
func relErr(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if math.IsNaN(d) {
			return math.Inf(1) // else NaN > tol is false and the step passes
		}
		num = math.Max(num, d)
		den = math.Max(den, math.Abs(want[i]))
	}
	return num / den
}

// forwardTol bounds the f32 backend against the float64 reference on the
// same (dequantised) weights. Typical steps agree to ~1e-6 (f32 rounding
// 6e-8 per op, dot products of up to 512 terms, ~10 chained ops per layer).
// The worst steps are ill-conditioned, not wrong: on a Gated DeltaNet
// layer's early tokens the head output is ≈ (q·k)·β·v, and the gated RMSNorm
// rescales it to unit size, so when q·k is near 0 the f32 rounding of the
// projections feeding q and k is amplified by 1/|q·k|. Over 40 first tokens
// of the all-types model the worst measured was 3e-5, and 2e-4 once over
// other sequences; 1e-3 leaves room for that while any formula error (a
// wrong pairing, scale or head mapping) shows up far above it (measured:
// one RoPE pair swapped 3e-3 to 3e-2; V heads grouped instead of tiled ~1).
const forwardTol = 1e-3

func TestForwardMatchesReference(t *testing.T) {
	types := model.MatrixTypes()
	cases := []struct {
		name string
		spec func() modeltest.Spec
	}{
		{"qwen35-alltypes", func() modeltest.Spec {
			s := modeltest.TinyQwen35()
			s.Type = modeltest.AllTypes(types)
			return s
		}},
		{"qwen35-tied-bf16", func() modeltest.Spec {
			s := modeltest.TinyQwen35()
			s.Tied = true
			s.Type = func(string) gguf.Type { return gguf.TypeBF16 }
			return s
		}},
		// The smallest rotary part, one pair per head (n_rot 2).
		{"qwen3-rope2", func() modeltest.Spec {
			s := modeltest.TinyQwen3()
			s.NRot = 2
			return s
		}},
		{"qwen3-alltypes", func() modeltest.Spec {
			s := modeltest.TinyQwen3()
			s.Type = modeltest.AllTypes(append(types[3:], types[:3]...)) // start elsewhere in the list
			return s
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := modeltest.Load(t, tc.spec())
			// Every supported type must be in use in the all-types models.
			if strings.HasSuffix(tc.name, "alltypes") {
				used := map[gguf.Type]bool{}
				for _, tn := range m.Tensors() {
					used[tn.Type] = true
				}
				for _, ty := range types {
					if !used[ty] {
						t.Errorf("type %v not exercised", ty)
					}
				}
			}
			b, err := cpu.New(m, cpu.Options{Ctx: 32, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ref := newRef(t, m)
			rng := rand.New(rand.NewPCG(7, 7))
			worst := 0.0
			for step := range 12 {
				tok := int32(rng.IntN(m.NVocab))
				got, err := b.DecodeStep(tok)
				if err != nil {
					t.Fatal(err)
				}
				want := ref.step(int(tok))
				e := relErr(got, want)
				worst = math.Max(worst, e)
				if e > forwardTol {
					t.Fatalf("step %d: rel err %.3g > %g", step, e, forwardTol)
				}
			}
			t.Logf("worst rel err over 12 steps: %.3g", worst)
			if b.Len() != 12 {
				t.Errorf("Len %d, want 12", b.Len())
			}
		})
	}
}

// TestAbsentKindKeys: a model without attention layers loads and decodes
// the same whatever its attention keys say (up to model.MaxDim; that it
// sizes nothing from them is TestScratchOfAbsentKinds').
func TestAbsentKindKeys(t *testing.T) {
	s := modeltest.TinyQwen35()
	s.NNextN = 0
	s.RecurrentLyrs = []bool{true, true, true, true}
	huge := s
	huge.NHead, huge.NHeadKV = model.MaxDim, 1
	var logits [2][][]float32
	for i, spec := range []modeltest.Spec{s, huge} {
		m := modeltest.Load(t, spec)
		if m.NumAttention() != 0 || m.NHead != spec.NHead {
			t.Fatalf("spec %d: %d attention layers, head_count %d", i, m.NumAttention(), m.NHead)
		}
		b, err := cpu.New(m, cpu.Options{Ctx: 8, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range []int32{3, 141, 59, 26} {
			ll, err := b.DecodeStep(tok)
			if err != nil {
				t.Fatal(err)
			}
			logits[i] = append(logits[i], slices.Clone(ll))
		}
		b.Close()
	}
	for step := range logits[0] {
		if !slices.Equal(logits[0][step], logits[1][step]) {
			t.Fatalf("step %d: logits differ with head_count %d", step, huge.NHead)
		}
	}
}

func TestResetRepeats(t *testing.T) {
	m := modeltest.Load(t, modeltest.TinyQwen35())
	b, err := cpu.New(m, cpu.Options{Ctx: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	toks := []int32{5, 17, 300, 2}
	run := func() []float32 {
		var last []float32
		for _, tk := range toks {
			if last, err = b.DecodeStep(tk); err != nil {
				t.Fatal(err)
			}
		}
		return last
	}
	first := run()
	b.Reset()
	if b.Len() != 0 {
		t.Fatalf("Len after Reset = %d", b.Len())
	}
	second := run()
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("logit %d differs after Reset: %v vs %v", i, first[i], second[i])
		}
	}
}

// TestFeedMatchesDecodeStep: tokens fed without their logits leave the
// cache as DecodeStep leaves it (the next step's logits are the same bits),
// and Feed stops at the first token it cannot append, keeping the ones
// before it.
func TestFeedMatchesDecodeStep(t *testing.T) {
	m := modeltest.Load(t, modeltest.TinyQwen35())
	toks := []int32{5, 17, 300, 2, 41, 9}
	var want []float32
	for _, feed := range []bool{false, true} {
		b, err := cpu.New(m, cpu.Options{Ctx: 8})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if feed {
			if err := b.Feed(toks[:len(toks)-1]); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, tk := range toks[:len(toks)-1] {
				if _, err := b.DecodeStep(tk); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := b.DecodeStep(toks[len(toks)-1])
		if err != nil {
			t.Fatal(err)
		}
		if !feed {
			want = got
			continue
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("logit %d after Feed: %v, after DecodeSteps: %v", i, got[i], want[i])
			}
		}
		err = b.Feed([]int32{1, int32(m.NVocab), 2})
		if err == nil || !strings.Contains(err.Error(), "out of range") || b.Len() != len(toks)+1 {
			t.Errorf("Feed past a bad token: err %v, Len %d (want %d)", err, b.Len(), len(toks)+1)
		}
		if err := b.Feed([]int32{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "context full") || b.Len() != 8 {
			t.Errorf("Feed past the capacity: err %v, Len %d (want 8)", err, b.Len())
		}
	}
}

// TestFeedContextStops: the backend is a sample.ContextFeeder whose
// FeedContext appends nothing once its context is done and says so, and
// feeds as Feed does while it is not.
func TestFeedContextStops(t *testing.T) {
	var _ sample.ContextFeeder = (*cpu.Backend)(nil)
	m := modeltest.Load(t, modeltest.TinyQwen35())
	b, err := cpu.New(m, cpu.Options{Ctx: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.FeedContext(context.Background(), []int32{5, 17}); err != nil || b.Len() != 2 {
		t.Fatalf("live context: err %v, Len %d (want 2)", err, b.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.FeedContext(ctx, []int32{300, 2}); !errors.Is(err, context.Canceled) || b.Len() != 2 {
		t.Errorf("done context: err %v, Len %d (want context.Canceled, 2)", err, b.Len())
	}
}

func TestContextFull(t *testing.T) {
	m := modeltest.Load(t, modeltest.TinyQwen3())
	b, err := cpu.New(m, cpu.Options{Ctx: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Capacity() != 3 {
		t.Fatalf("Capacity %d, want 3", b.Capacity())
	}
	for i := range 3 {
		if _, err := b.DecodeStep(int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = b.DecodeStep(1)
	if err == nil || !strings.Contains(err.Error(), "context full: 3 tokens, capacity 3") {
		t.Fatalf("err = %v, want context full: 3 tokens, capacity 3", err)
	}
	if b.Len() != 3 {
		t.Errorf("Len %d after overflow, want 3", b.Len())
	}
	if _, err := b.DecodeStep(int32(m.NVocab)); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("bad token: err = %v", err)
	}
}

// TestThreadsBounded: cpu.New refuses a worker count past MaxThreads (a
// goroutine and a channel each, all allocated before the first token), as
// the CLI's --threads does, rather than spawning it: 1<<40 would end the
// process in make. A count past the bound by one is enough to tell.
func TestThreadsBounded(t *testing.T) {
	m := modeltest.Load(t, modeltest.TinyQwen3())
	if _, err := cpu.New(m, cpu.Options{Ctx: 4, Threads: cpu.MaxThreads + 1}); err == nil ||
		!strings.Contains(err.Error(), "1025 threads: want 0 (GOMAXPROCS) to 1024") {
		t.Fatalf("err = %v, want one naming the limit", err)
	}
	b, err := cpu.New(m, cpu.Options{Ctx: 4, Threads: cpu.MaxThreads})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// TestClosedBackend: a step after Close is an error, not the workers'
// closed channel panicking in the caller's goroutine; the pool's own
// Parallel runs on the caller once closed, as a nil pool's does.
func TestClosedBackend(t *testing.T) {
	m := modeltest.Load(t, modeltest.TinyQwen3())
	b, err := cpu.New(m, cpu.Options{Ctx: 4, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.DecodeStep(1); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close() // twice is harmless
	if _, err := b.DecodeStep(1); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("DecodeStep after Close: err = %v, want one saying closed", err)
	}
	if err := b.Feed([]int32{1, 2}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Feed after Close: err = %v, want one saying closed", err)
	}
	if b.Len() != 1 {
		t.Errorf("Len after the refused steps = %d, want 1", b.Len())
	}
	p := b.Pool()
	if p.Workers() != 1 {
		t.Errorf("closed pool: %d workers, want 1", p.Workers())
	}
	got := make([]int, 100)
	p.Parallel(len(got), 1, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			got[i] = i + 1
		}
	})
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("closed pool's Parallel left element %d as %d", i, v)
		}
	}
}

// TestClosedFile: stepping a model whose GGUF file was closed is an error;
// it read the unmapped weights, a fault that ended the process.
func TestClosedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(path, modeltest.TinyQwen3()); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cpu.New(m, cpu.Options{Ctx: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f.Close()
	if _, err := b.DecodeStep(1); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("DecodeStep after the file's Close: err = %v, want one saying closed", err)
	}
	if err := b.Feed([]int32{1}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Feed after the file's Close: err = %v, want one saying closed", err)
	}
	if _, err := cpu.New(m, cpu.Options{Ctx: 4}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("New after the file's Close: err = %v, want one saying closed", err)
	}
}

// TestThreadsBitIdentical: the logits do not depend on the worker count or
// GOMAXPROCS, to the bit. The pool splits rows of a matrix and heads of
// attention and Gated DeltaNet, never one sum, so each value is computed by
// one worker in one order whatever the split. Both layer kinds, f32 (the Go
// kernel) and q8_0 (the AVX2 one where the CPU has it); the matrices are
// large enough (ffn_up of f32: 512 KB) that minChunkBytes lets 7 workers
// split them.
func TestThreadsBitIdentical(t *testing.T) {
	toks := []int32{5, 17, 300, 2, 41}
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0} {
		s := modeltest.TinyQwen35()
		s.Type = func(string) gguf.Type { return typ }
		m := modeltest.Load(t, s)
		decode := func(threads int) [][]float32 {
			b, err := cpu.New(m, cpu.Options{Ctx: len(toks), Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var out [][]float32
			for _, tk := range toks {
				l, err := b.DecodeStep(tk)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, l)
			}
			return out
		}
		want := decode(1)
		check := func(what string, got [][]float32) {
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s %s: step %d logit %d = %v, 1 thread %v", typ, what, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
		for _, n := range []int{2, 3, 7} {
			check(fmt.Sprintf("%d threads", n), decode(n))
		}
		for _, procs := range []int{1, 3} {
			got := func() [][]float32 {
				// Restored even when decode stops the test, for the tests after it.
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				return decode(0)
			}()
			check(fmt.Sprintf("GOMAXPROCS %d", procs), got)
		}
	}
}

// TestDefaultCapacity: Ctx 0 (or less) is min(context_length,
// DefaultContext = 4096), and 4096 where the file gives no context_length.
func TestDefaultCapacity(t *testing.T) {
	for _, tc := range []struct{ fileCtx, ctx, want int }{
		{256, 0, 256}, {256, -1, 256}, {0, 0, 4096}, {10000, 0, 4096}, {256, 7, 7},
	} {
		s := modeltest.TinyQwen3()
		s.ContextLength = tc.fileCtx
		b, err := cpu.New(modeltest.Load(t, s), cpu.Options{Ctx: tc.ctx, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if b.Capacity() != tc.want {
			t.Errorf("context_length %d, Ctx %d: Capacity %d, want %d", tc.fileCtx, tc.ctx, b.Capacity(), tc.want)
		}
		b.Close()
	}
}

// TestNewRefusesBadTensor: New checks the tensors of a model not from Load
// (Load would refuse these): one norm that is not F32 is named.
func TestNewRefusesBadTensor(t *testing.T) {
	m := modeltest.Load(t, modeltest.TinyQwen3())
	n := *m.Layers[1].AttnNorm
	n.Type, n.Shape = gguf.TypeF16, []int{2 * n.Shape[0]} // the same bytes as F16
	m.Layers[1].AttnNorm = &n
	if _, err := cpu.New(m, cpu.Options{Ctx: 4}); err == nil ||
		!strings.Contains(err.Error(), "cpu backend: tensor blk.1.attn_norm.weight: type F16, want F32") {
		t.Fatalf("err = %v, want one naming blk.1.attn_norm.weight", err)
	}
}
