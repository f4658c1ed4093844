package cpu_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

// Expected values below are worked out by hand in the comments.

// opsTol: single f32 ops on O(1) values, a few roundings of 6e-8 each.
const opsTol = 1e-6

func near(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	for i := range want {
		if !(math.Abs(float64(got[i])-want[i]) <= opsTol*math.Max(1, math.Abs(want[i]))) { // NaN fails
			t.Errorf("%s[%d] = %.7g, want %.7g", what, i, got[i], want[i])
		}
	}
}

func silu64(x float64) float64 { return x / (1 + math.Exp(-x)) }

func TestRMSNorm(t *testing.T) {
	// mean(3², 4²) = 12.5; 1/sqrt(12.5) = 0.28284271
	out := make([]float32, 2)
	cpu.RMSNorm(out, []float32{3, 4}, []float32{1, 2}, 0)
	near(t, "rmsnorm", out, []float64{3 * 0.28284271247, 4 * 0.28284271247 * 2})
	// qwen35 interleaved q/gate: only the q part of each 2·dim stride is normalised.
	x := []float32{3, 4, 9, 9, 0, 5, 9, 9}
	cpu.RMSNormHeads(x, 2, 2, 4, []float32{1, 1}, 0)
	// head 1: mean(0, 25) = 12.5 → 5·0.2828 = 1.41421
	near(t, "heads", x, []float64{0.84852814, 1.1313708, 9, 9, 0, 1.4142136, 9, 9})
	// eps counts: mean(0.03², 0.04²) = 1.25e-3, + eps 1.25e-3 = 2.5e-3,
	// 1/sqrt(2.5e-3) = 20 → (0.6, 0.8).
	cpu.RMSNorm(out, []float32{0.03, 0.04}, []float32{1, 1}, 1.25e-3)
	near(t, "rmsnorm eps", out, []float64{0.6, 0.8})
}

func TestL2NormAndScalars(t *testing.T) {
	x := []float32{3, 4}
	cpu.L2Norm(x, 0)
	near(t, "l2", x, []float64{0.6, 0.8})
	// eps counts: Σx² = 2.5e-5, + eps 7.5e-5 = 1e-4, 1/sqrt(1e-4) = 100.
	x = []float32{0.003, 0.004}
	cpu.L2Norm(x, 7.5e-5)
	near(t, "l2 eps", x, []float64{0.3, 0.4})
	near(t, "scalars", []float32{cpu.Softplus(0), cpu.Softplus(30), cpu.Sigmoid(0), cpu.SiLU(1)},
		[]float64{math.Ln2, 30, 0.5, 1 / (1 + math.Exp(-1))})
}

func TestRoPE(t *testing.T) {
	// nRot 4 (half 2), base 10000, pos 1: θ0 = 1, θ1 = 10000^(-1/2) = 0.01.
	cos, sin := make([]float32, 2), make([]float32, 2)
	cpu.RopeCosSin(cos, sin, 1, 4, 10000)
	near(t, "cos", cos, []float64{math.Cos(1), math.Cos(0.01)})
	// Head dim 6: dims 4, 5 untouched. Pair (0, 2) rotates by θ0, (1, 3) by θ1.
	x := []float32{1, 0, 0, 2, 7, 8}
	cpu.RoPE(x, 1, 6, cos, sin)
	near(t, "rope", x, []float64{math.Cos(1), -2 * math.Sin(0.01), math.Sin(1), 2 * math.Cos(0.01), 7, 8})
}

func TestAttention(t *testing.T) {
	// Scores (scale 1) for q = (1, 0): k0 = (0, 0) → 0, k1 = (ln 3, 0) → ln 3;
	// softmax = (1/4, 3/4); values (4, 0), (0, 8) → out (1, 6).
	q := []float32{1, 0}
	keys := []float32{0, 0, float32(math.Log(3)), 0}
	vals := []float32{4, 0, 0, 8}
	out := make([]float32, 2)
	cpu.AttendOne(out, q, keys, vals, 2, 2, 0, 1, make([]float32, 2))
	near(t, "attend", out, []float64{1, 6})
	// Scores 999 and 1000: exp overflows f32 unless the largest score is
	// subtracted first; the weights are (1, e)/(1+e).
	big := []float32{999, 0, 1000, 0}
	cpu.AttendOne(out, q, big, vals, 2, 2, 0, 1, make([]float32, 2))
	near(t, "attend large scores", out, []float64{4 / (1 + math.E), 8 * math.E / (1 + math.E)})

	// GQA: 2 query heads, 1 KV head: both read the same KV. With 2 KV heads
	// (row stride 4) head 1 reads the second KV head, whose keys are zero
	// → uniform weights → mean of its values.
	q2 := []float32{1, 0, 1, 0}
	out2 := make([]float32, 4)
	cpu.Attention(nil, out2, q2, keys, vals, 2, 2, 1, 2, 1, make([]float32, 4))
	near(t, "gqa shared", out2, []float64{1, 6, 1, 6})
	keys2 := []float32{0, 0, 0, 0, float32(math.Log(3)), 0, 0, 0}
	vals2 := []float32{4, 0, 2, 2, 0, 8, 4, 6}
	cpu.Attention(nil, out2, q2, keys2, vals2, 2, 2, 2, 2, 1, make([]float32, 4))
	near(t, "gqa split", out2, []float64{1, 6, 3, 4})
}

func TestConvStep(t *testing.T) {
	// One channel, kernel 3, taps (1, 2, 3) oldest first, state starts 0.
	w := []float32{1, 2, 3}
	state := make([]float32, 2)
	out := make([]float32, 1)
	cpu.ConvStep(out, state, []float32{1}, w, 1, 3) // 3·1 = 3
	near(t, "conv1", out, []float64{silu64(3)})
	cpu.ConvStep(out, state, []float32{2}, w, 1, 3) // 1·0 + 2·1 + 3·2 = 8
	near(t, "conv2", out, []float64{silu64(8)})
	cpu.ConvStep(out, state, []float32{-1}, w, 1, 3) // 1·1 + 2·2 + 3·(−1) = 2
	near(t, "conv3", out, []float64{silu64(2)})
	near(t, "state", state, []float64{2, -1})
}

func TestDeltaRuleStep(t *testing.T) {
	// Sk = 2, Sv = 1. Step 1: M = 0, k = (1, 0), v = 2, β = 0.5, g = 0:
	// d = 0.5·(2 − 0) = 1, M = (1, 0), out = M·q with q = (1, 0) → 1.
	state := make([]float32, 2)
	out := make([]float32, 1)
	cpu.DeltaRuleStep(state, []float32{1, 0}, []float32{1, 0}, []float32{2}, out, 0, 0.5)
	near(t, "out1", out, []float64{1})
	// Step 2: g = ln 0.5 → M = (0.5, 0); k = (0, 1), v = 4, β = 1: M·k = 0,
	// d = 4, M = (0.5, 4); q = (1, 1) → 4.5.
	cpu.DeltaRuleStep(state, []float32{1, 1}, []float32{0, 1}, []float32{4}, out, float32(math.Log(0.5)), 1)
	near(t, "out2", out, []float64{4.5})
	near(t, "state", state, []float64{0.5, 4})
	// Step 3: the delta rule overwrites along k: k = (1, 0), v = 3, β = 1:
	// M·k = 0.5, d = 2.5, M = (3, 4); q = (1, 0) → 3.
	cpu.DeltaRuleStep(state, []float32{1, 0}, []float32{1, 0}, []float32{3}, out, 0, 1)
	near(t, "out3", out, []float64{3})
}

func TestGatedNormSwiGLU(t *testing.T) {
	// x = (1, −1): rms 1 → normalised (1, −1); ·w (2, 3); ·silu(z) with z = (0, 2).
	out := make([]float32, 2)
	cpu.GatedRMSNorm(out, []float32{1, -1}, []float32{0, 2}, []float32{2, 3}, 0)
	near(t, "gated", out, []float64{0, -3 * silu64(2)})
	sw := make([]float32, 2)
	cpu.SwiGLU(sw, []float32{1, -2}, []float32{3, 4})
	near(t, "swiglu", sw, []float64{3 * silu64(1), 4 * silu64(-2)})
}

// matvecTol: an f32 dot of n terms against float64 on identical weights
// errs by ≲ n·6e-8 relative to Σ|w·x| (worst case, no cancellation luck);
// n = 512 gives 3e-5.
const matvecTol = 3e-5

func TestMatVecAllTypes(t *testing.T) {
	const cols, rows = 512, 37 // odd rows: uneven worker chunks
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, cols)
	for i := range x {
		x[i] = rng.Float32()*2 - 1
	}
	pool := cpu.NewPool(3)
	defer pool.Close()
	for _, typ := range model.MatrixTypes() {
		data, err := modeltest.RandomTensor(rng, typ, []uint64{cols, rows}, modeltest.KindMatrix)
		if err != nil {
			t.Fatal(err)
		}
		w := &model.Tensor{Name: typ.String(), Type: typ, Shape: []int{cols, rows}, Data: data}
		deq := make([]float32, cols*rows)
		if err := gguf.Dequantize(typ, data, deq); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, rows)
		for _, p := range []*cpu.Pool{nil, pool} {
			if err := cpu.MatVec(p, got, w, x); err != nil {
				t.Fatal(err)
			}
			for r := range rows {
				var want, mag float64
				for c := range cols {
					want += float64(deq[r*cols+c]) * float64(x[c])
					mag += math.Abs(float64(deq[r*cols+c]) * float64(x[c]))
				}
				if mag == 0 {
					t.Fatalf("%v row %d: all-zero weights", typ, r)
				}
				if d := math.Abs(float64(got[r]) - want); !(d <= matvecTol*mag) { // NaN fails
					t.Fatalf("%v row %d (pool %v): got %g want %g (|Σ| %g)", typ, r, p != nil, got[r], want, mag)
				}
			}
		}
		// Embedding lookup of one row.
		row := make([]float32, cols)
		if err := cpu.DequantizeRow(row, w, 5); err != nil {
			t.Fatal(err)
		}
		for c := range cols {
			if row[c] != deq[5*cols+c] {
				t.Fatalf("%v DequantizeRow[%d] = %g, want %g", typ, c, row[c], deq[5*cols+c])
			}
		}
	}
}

func TestMatVecsAndErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mk := func(cols, rows int) *model.Tensor {
		d, _ := modeltest.RandomTensor(rng, gguf.TypeF32, []uint64{uint64(cols), uint64(rows)}, modeltest.KindMatrix)
		return &model.Tensor{Name: "w", Type: gguf.TypeF32, Shape: []int{cols, rows}, Data: d}
	}
	// 1,005 rows of 256 bytes over 4 workers: 4 parts of ~251 rows (a part
	// is at least 32 KiB of weights), so part boundaries fall inside the
	// first and last jobs and one part spans all of the second; under -race
	// (check:race) two parts writing one row would be a reported race.
	ws := []*model.Tensor{mk(64, 300), mk(64, 5), mk(64, 700)}
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	p := cpu.NewPool(4)
	defer p.Close()
	var jobs []cpu.MatVecJob
	for _, w := range ws {
		jobs = append(jobs, cpu.MatVecJob{Dst: make([]float32, w.Rows()), W: w, X: x})
	}
	if err := cpu.MatVecs(p, jobs...); err != nil {
		t.Fatal(err)
	}
	for k, w := range ws {
		want := make([]float32, w.Rows())
		if err := cpu.MatVec(nil, want, w, x); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if jobs[k].Dst[i] != want[i] {
				t.Fatalf("job %d row %d: MatVecs on 4 workers %v, MatVec alone %v", k, i, jobs[k].Dst[i], want[i])
			}
		}
	}
	a := ws[1]
	if err := cpu.MatVec(p, make([]float32, a.Rows()), a, x[:10]); err == nil {
		t.Error("MatVec accepted a short x")
	}
}

// TestTensorChecks: MatVec, DequantizeRow and Float32s refuse a tensor
// whose type, shape and data disagree, naming it. They sliced Data past its
// end (a panic), divided by a zero block size for an unknown type, or, for
// q8_0 columns not a multiple of 32, dropped the last partial block and
// returned a wrong product with no error.
func TestTensorChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    *model.Tensor
		want string
	}{
		{"short data", &model.Tensor{Name: "w", Type: gguf.TypeF32, Shape: []int{4, 2}, Data: make([]byte, 8)},
			"tensor w F32 [4 2]: 8 bytes of data, want 32"},
		{"partial block", &model.Tensor{Name: "w", Type: gguf.TypeQ8_0, Shape: []int{40, 1}, Data: make([]byte, 34)},
			"not a multiple of the block size 32"},
		{"unknown type", &model.Tensor{Name: "w", Type: gguf.Type(99), Shape: []int{4, 1}, Data: make([]byte, 16)},
			"unsupported tensor type"},
		{"no shape", &model.Tensor{Name: "w", Type: gguf.TypeF32, Data: make([]byte, 16)}, "tensor w: no shape"},
		// A negative dim, and dims whose product overflows int64 (16 bytes ·
		// 2^40 · 2^40 = 2^84) where it could wrap to the data's length.
		{"negative dim", &model.Tensor{Name: "w", Type: gguf.TypeF32, Shape: []int{4, 1, -1}}, "tensor w: shape [4 1 -1]"},
		{"overflowing dims", &model.Tensor{Name: "w", Type: gguf.TypeF32, Shape: []int{4, 1 << 40, 1 << 40}},
			"tensor w: shape [4 1099511627776 1099511627776]"},
		{"nil", nil, "nil tensor"},
	} {
		cols, rows := 4, 1
		if tc.w != nil && len(tc.w.Shape) == 2 {
			cols, rows = tc.w.Shape[0], tc.w.Shape[1]
		}
		err := cpu.MatVec(nil, make([]float32, rows), tc.w, make([]float32, cols))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: MatVec err %v, want %q", tc.name, err, tc.want)
		}
		err = cpu.DequantizeRow(make([]float32, cols), tc.w, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: DequantizeRow err %v, want %q", tc.name, err, tc.want)
		}
		if tc.w != nil && tc.w.Type == gguf.TypeF32 {
			if _, err := cpu.Float32s(tc.w); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Float32s err %v, want %q", tc.name, err, tc.want)
			}
		}
	}
}

// TestPoolCoversRange: Parallel calls fn once per index, in ranges no
// shorter than minChunk unless there is one.
func TestPoolCoversRange(t *testing.T) {
	p := cpu.NewPool(4)
	defer p.Close()
	for _, n := range []int{1, 3, 4, 5, 17, 1000} {
		for _, minChunk := range []int{1, 2, 3, 300} {
			hits := make([]int, n)
			var mu sync.Mutex
			var lens []int
			p.Parallel(n, minChunk, func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i]++
				}
				mu.Lock()
				lens = append(lens, hi-lo)
				mu.Unlock()
			})
			if len(lens) > 1 && slices.Min(lens) < minChunk {
				t.Fatalf("n %d minChunk %d: ranges of %v", n, minChunk, lens)
			}
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("n %d minChunk %d: index %d covered %d times", n, minChunk, i, h)
				}
			}
		}
	}
}

// TestPoolClose: Close stops every worker goroutine and may be called
// twice; Parallel after Close still covers the range, on the caller (it
// sent to the closed channels and panicked).
func TestPoolClose(t *testing.T) {
	// Counted by their stacks, not runtime.NumGoroutine: an earlier test's
	// closed pool may still be exiting (Close waits for wg.Done, not for
	// the return), and a total taken before NewPool then shrinks under
	// this pool's workers.
	waitWorkers := func(what string, want int) {
		for deadline := time.Now().Add(5 * time.Second); poolWorkers() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d pool worker goroutines, want %d", what, poolWorkers(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	p := cpu.NewPool(8)
	waitWorkers("a pool of 8 (the caller is the 8th)", 7)
	p.Close()
	p.Close()
	waitWorkers("after Close", 0)
	hits := make([]int, 100)
	p.Parallel(len(hits), 1, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			hits[i]++
		}
	})
	for i, h := range hits {
		if h != 1 {
			t.Fatalf("after Close: index %d covered %d times", i, h)
		}
	}
}

// poolWorkers counts the worker goroutines of the pools the calling
// goroutine made.
func poolWorkers() int {
	buf := make([]byte, 1<<20)
	me := strings.Fields(string(buf[:runtime.Stack(buf, false)]))[1] // "goroutine N [running]:"
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "created by github.com/memra-ai/memra/engine/cpu.NewPool in goroutine "+me+"\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestPoolPanic: a panic in one worker's range reaches the caller of
// Parallel, after every other range has returned, as an error wrapping the
// value; on a worker goroutine it ended the process, past any recover. The
// pool works on afterwards.
func TestPoolPanic(t *testing.T) {
	p := cpu.NewPool(4)
	defer p.Close()
	boom := errors.New("boom")
	for _, bad := range []int{2, 0} { // a worker's range, the caller's
		var finished atomic.Int32
		r := func() (r any) {
			defer func() { r = recover() }()
			p.Parallel(4, 1, func(w, lo, hi int) {
				if w == bad {
					panic(fmt.Errorf("range %d: %w", w, boom))
				}
				time.Sleep(10 * time.Millisecond) // still running when worker bad panics
				finished.Add(1)
			})
			return nil
		}()
		err, _ := r.(error)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), fmt.Sprintf("worker %d", bad)) {
			t.Fatalf("worker %d panicked: Parallel raised %v", bad, r)
		}
		if n := finished.Load(); n != 3 {
			t.Errorf("worker %d panicked: Parallel returned with %d of 3 other ranges done", bad, n)
		}
	}
	hits := make([]int, 8)
	p.Parallel(len(hits), 1, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			hits[i]++
		}
	})
	if !slices.Equal(hits, []int{1, 1, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("after a panic: ranges covered %v", hits)
	}
}

// TestNewPoolBounded: a pool of more than MaxThreads workers has
// MaxThreads (NewPool(1<<40) asked for 2^40 goroutines and channels).
func TestNewPoolBounded(t *testing.T) {
	p := cpu.NewPool(1 << 40)
	defer p.Close()
	if p.Workers() != cpu.MaxThreads {
		t.Errorf("NewPool(1<<40): %d workers, want %d", p.Workers(), cpu.MaxThreads)
	}
}

// TestPoolSplits: Parallel uses every worker it may (one range each, worker
// ids 0..parts−1), one range on worker 0 when n < 2·minChunk, none for
// n = 0, and treats minChunk 0 as 1; NewPool(0) has GOMAXPROCS workers
// (and leaves GOMAXPROCS as it was), NewPool(1) one.
func TestPoolSplits(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if p := cpu.NewPool(0); p.Workers() != procs || runtime.GOMAXPROCS(0) != procs {
		t.Errorf("NewPool(0): %d workers, GOMAXPROCS %d → %d", p.Workers(), procs, runtime.GOMAXPROCS(0))
	} else {
		p.Close()
	}
	if p := cpu.NewPool(1); p.Workers() != 1 {
		t.Errorf("NewPool(1): %d workers", p.Workers())
	} else {
		p.Close()
	}
	p := cpu.NewPool(4)
	defer p.Close()
	for _, tc := range []struct {
		n, minChunk int
		want        [][3]int // worker, lo, hi
	}{
		{1000, 1, [][3]int{{0, 0, 250}, {1, 250, 500}, {2, 500, 750}, {3, 750, 1000}}},
		{4, 0, [][3]int{{0, 0, 1}, {1, 1, 2}, {2, 2, 3}, {3, 3, 4}}},
		{9, 3, [][3]int{{0, 0, 3}, {1, 3, 6}, {2, 6, 9}}},
		{4, 2, [][3]int{{0, 0, 2}, {1, 2, 4}}},
		{5, 3, [][3]int{{0, 0, 5}}},
		{0, 1, nil},
	} {
		var mu sync.Mutex
		var got [][3]int
		p.Parallel(tc.n, tc.minChunk, func(w, lo, hi int) {
			mu.Lock()
			got = append(got, [3]int{w, lo, hi})
			mu.Unlock()
		})
		slices.SortFunc(got, func(a, b [3]int) int { return a[0] - b[0] })
		if !slices.Equal(got, tc.want) {
			t.Errorf("Parallel(%d, %d): ranges %v, want %v", tc.n, tc.minChunk, got, tc.want)
		}
	}
	var nilPool *cpu.Pool
	closed := cpu.NewPool(4)
	closed.Close()
	if nilPool.Workers() != 1 || closed.Workers() != 1 {
		t.Errorf("Workers: nil pool %d, closed pool %d, want 1", nilPool.Workers(), closed.Workers())
	}
}

// TestDequantizeRowBounds: DequantizeRow reads row r of an F32 {4, 3}
// holding 1..12, and refuses a row outside [0, 3) or a dst of another
// length rather than slice past the data.
func TestDequantizeRowBounds(t *testing.T) {
	data := make([]byte, 48)
	for i := range 12 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i+1)))
	}
	w := &model.Tensor{Name: "w", Type: gguf.TypeF32, Shape: []int{4, 3}, Data: data}
	dst := make([]float32, 4)
	if err := cpu.DequantizeRow(dst, w, 2); err != nil || !slices.Equal(dst, []float32{9, 10, 11, 12}) {
		t.Errorf("row 2: %v, err %v", dst, err)
	}
	for _, tc := range []struct{ r, n int }{{-1, 4}, {3, 4}, {0, 3}, {0, 5}} {
		err := cpu.DequantizeRow(make([]float32, tc.n), w, tc.r)
		want := fmt.Sprintf("dequantize w row %d: rows 3, dst %d elements, want 4", tc.r, tc.n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("row %d into %d: err %v, want %q", tc.r, tc.n, err, want)
		}
	}
}
