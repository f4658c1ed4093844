package gpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// benchEngine opens the GPU and the kernels for a benchmark or skips.
// benchOptin is the shared memory a block may take on e (blockShared).
func benchOptin(b *testing.B, e *cuda.Engine) int {
	b.Helper()
	optin, _, err := blockShared(e)
	if err != nil {
		b.Fatal(err)
	}
	return optin
}

func benchEngine(b *testing.B) (*cuda.Engine, *Kernels, cuda.Module) {
	b.Helper()
	e, err := cuda.New(0)
	if err != nil {
		if !cuda.NoGPU(err) { // a driver that is there and fails is a failure, not a skip
			b.Fatal(err)
		}
		b.Skipf("no GPU: %v", err)
	}
	b.Cleanup(func() { e.Close() })
	mod, err := e.LoadModule(kernels.Fatbin())
	if err != nil {
		b.Fatal(err)
	}
	k, err := loadKernels(e, mod)
	if err != nil {
		b.Fatal(err)
	}
	return e, k, mod
}

// randomDevice uploads n random bytes (never zeros: zeros can run faster).
func randomDevice(b *testing.B, e *cuda.Engine, n int, seed uint64) cuda.DevPtr {
	b.Helper()
	buf := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	p, err := e.Alloc(uint64(n))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Free(p) })
	if err := e.CopyHtoD(p, buf); err != nil {
		b.Fatal(err)
	}
	return p
}

// timeLaunches runs fn b.N times between two events and reports device
// time per op (wall clock excludes host launch overhead this way only in
// aggregate; the events bracket the whole batch).
func timeLaunches(b *testing.B, e *cuda.Engine, fn func() error) {
	b.Helper()
	timeOps(b, e, fn, 1, "µs/launch")
}

// timeOps is timeLaunches for an fn that does `per` units of work (a graph
// of per nodes, say), reported as µs per unit under the name unit.
func timeOps(b *testing.B, e *cuda.Engine, fn func() error, per int, unit string) {
	b.Helper()
	start, _ := e.NewEvent()
	end, _ := e.NewEvent()
	defer e.DestroyEvent(start)
	defer e.DestroyEvent(end)
	for range 3 { // warm-up
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	err := e.Do(func() error {
		if err := e.Record(start); err != nil {
			return err
		}
		for range b.N {
			if err := fn(); err != nil {
				return err
			}
		}
		return e.Record(end)
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.EventSynchronize(end); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	d, err := e.Elapsed(start, end)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N*per)/1e3, unit)
}

// BenchmarkGPUCopy is the ceiling: a 2 GiB device-to-device copy; the GB/s
// it reports counts bytes read plus written (so counted, ~4.19 TB/s on the
// H200, against 4.11 for read-only streaming).
func BenchmarkGPUCopy(b *testing.B) {
	e, _, _ := benchEngine(b)
	const n = 2 << 30
	src := randomDevice(b, e, n, 1)
	dst, err := e.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Free(dst)
	b.SetBytes(2 * n)
	timeLaunches(b, e, func() error { return e.CopyDtoDAsync(dst, src, n) })
}

// BenchmarkGPUMatvec measures the weight-streaming rate of the matvec
// kernels on the decode shapes of the 9B (4096 → 24576 gate|up, 4096 →
// 12288, 12288 → 4096) and 0.8B (1024 → 248320 logits) presets, each in the
// kernel the engine picks for it (MatvecWide), on a grid of one block per
// row unit and on the engine's grid (capped at the resident blocks, each
// block looping over units). SetBytes counts the weight
// bytes, the traffic that must move; every matrix here is larger than the
// 50 MB L2, and the input vector stays in L2.
func BenchmarkGPUMatvec(b *testing.B) {
	e, k, mod := benchEngine(b)
	shapes := tiledShapes{}
	for _, t := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
		for _, c := range []int{1024, 4096, 12288} {
			shapes.add(t, 1024, c, fmt.Sprintf("%d columns", c)) // 1,024 rows: the plain and wide kernels
		}
		shapes.add(t, 4096, 12288, "12288 columns") // the wave form, where the type has one
	}
	resident, room, err := matvecGrids(e, mod, benchOptin(b, e), 0, shapes)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct{ rows, cols int }{{24576, 4096}, {12288, 4096}, {4096, 12288}, {248320, 1024}} {
		for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeF32, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
			name := fmt.Sprintf("%s/%dx%d", typ, shape.rows, shape.cols)
			b.Run(name, func(b *testing.B) {
				d, wBytes := benchMatrix(b, e, name, typ, shape.rows, shape.cols)
				x := randomDevice(b, e, shape.cols*4, 5)
				y, err := e.Alloc(uint64(shape.rows * 4))
				if err != nil {
					b.Fatal(err)
				}
				defer e.Free(y)
				for _, grid := range []struct {
					name   string
					blocks map[mvKey]int
				}{{"units", nil}, {"resident", resident}} {
					b.Run(grid.name, func(b *testing.B) {
						g := &Model{k: k, cfg: model.Config{NormEps: 1e-6}, mvBlocks: grid.blocks, mvRoom: room}
						b.SetBytes(int64(wBytes))
						timeLaunches(b, e, func() error { return g.matvec(y, d, x, mvStore, 0) })
					})
				}
			})
		}
	}
}

// BenchmarkGPUGraphChain measures what one kernel costs inside a CUDA graph,
// as decode steps run them: a graph of n launches in stream order (so, on
// sm_90, with programmatic dependent launch between neighbours) replayed
// b.N times; device time per node. The matvecs cycle over enough copies of
// their weights (≥ 64 MB) that every node streams from HBM, as in a step,
// or (/L2) read one copy that the 60 MB L2 keeps; GB/s counts weight
// bytes. Against bytes / copy bandwidth and an empty one-block node, this
// separates a node's streaming from what every node costs beyond it
// (docs/perf.md step 22).
func BenchmarkGPUGraphChain(b *testing.B) {
	e, k, mod := benchEngine(b)
	const n = 64 // nodes per graph
	// Each case also runs as n launches on the stream (the eager path):
	// the same kernels without the graph.
	both := func(b *testing.B, bytes int, launch func(i int) error) {
		b.Run("graph", func(b *testing.B) { graphChain(b, e, n, bytes, launch) })
		b.Run("stream", func(b *testing.B) {
			if bytes > 0 {
				b.SetBytes(int64(n * bytes))
			}
			timeOps(b, e, func() error {
				for i := range n {
					if err := launch(i); err != nil {
						return err
					}
				}
				return nil
			}, n, "µs/node")
		})
	}
	// A one-block kernel: the floor of a node.
	b.Run("swiglu_256", func(b *testing.B) {
		x := randomDevice(b, e, 3*256*4, 7)
		both(b, 0, func(int) error { return k.SwiGLU(x, x.Add(1024), x.Add(2048), 256) })
	})
	for _, c := range []struct {
		typ        gguf.Type
		rows, cols int
		xnorm      bool
		l2         bool // one copy of the weights, which stays in the L2
	}{
		{typ: gguf.TypeQ8_0, rows: 4096, cols: 4096, l2: true},
		{typ: gguf.TypeQ8_0, rows: 1024, cols: 3584, l2: true},
		{typ: gguf.TypeBF16, rows: 1024, cols: 3584, l2: true},
		{typ: gguf.TypeBF16, rows: 7168, cols: 1024, xnorm: true, l2: true},
		{typ: gguf.TypeQ8_0, rows: 4096, cols: 4096},               // 9B ssm_out / attn_output (wide)
		{typ: gguf.TypeQ8_0, rows: 4096, cols: 12288},              // 9B ffn_down (wide)
		{typ: gguf.TypeQ8_0, rows: 12288, cols: 4096, xnorm: true}, // 9B-like input projection, norm fused
		{typ: gguf.TypeQ8_0, rows: 24576, cols: 4096, xnorm: true}, // 9B gate|up
		{typ: gguf.TypeQ8_0, rows: 1024, cols: 3584},               // 0.8B ffn_down (wide)
		{typ: gguf.TypeQ8_0, rows: 7168, cols: 1024, xnorm: true},  // 0.8B gate|up
		{typ: gguf.TypeBF16, rows: 4096, cols: 4096},               // 9B ssm_out, bf16
		{typ: gguf.TypeBF16, rows: 4096, cols: 12288},              // 9B ffn_down, bf16
		{typ: gguf.TypeBF16, rows: 24576, cols: 4096, xnorm: true}, // 9B gate|up, bf16
		{typ: gguf.TypeBF16, rows: 1024, cols: 3584},               // 0.8B ffn_down, bf16 (wide)
		{typ: gguf.TypeBF16, rows: 7168, cols: 1024, xnorm: true},  // 0.8B gate|up, bf16
		{typ: gguf.TypeBF16, rows: 7168, cols: 1024},               // the same without the norm (step 25's persistent chain has none)
		{typ: gguf.TypeQ4_K, rows: 4096, cols: 12288},              // 9B ffn_down, the K-quants on the tensor cores
		{typ: gguf.TypeQ5_K, rows: 4096, cols: 12288},
		{typ: gguf.TypeQ6_K, rows: 4096, cols: 12288},
		{typ: gguf.TypeQ3_K, rows: 4096, cols: 12288},
		{typ: gguf.TypeIQ4_XS, rows: 4096, cols: 12288},
		{typ: gguf.TypeQ4_K, rows: 4096, cols: 4096}, // 9B ssm_out / attn_output
		{typ: gguf.TypeQ5_K, rows: 4096, cols: 4096},
		{typ: gguf.TypeQ6_K, rows: 4096, cols: 4096},
		{typ: gguf.TypeQ3_K, rows: 4096, cols: 4096},
		{typ: gguf.TypeIQ4_XS, rows: 4096, cols: 4096},
		{typ: gguf.TypeQ4_K, rows: 24576, cols: 4096, xnorm: true}, // 9B gate|up
		{typ: gguf.TypeQ5_K, rows: 24576, cols: 4096, xnorm: true},
		{typ: gguf.TypeQ6_K, rows: 24576, cols: 4096, xnorm: true},
		{typ: gguf.TypeQ3_K, rows: 24576, cols: 4096, xnorm: true},
		{typ: gguf.TypeIQ4_XS, rows: 24576, cols: 4096, xnorm: true},
	} {
		name := fmt.Sprintf("%s/%dx%d/xnorm=%v", c.typ, c.rows, c.cols, c.xnorm)
		minBytes := 64 << 20
		if c.l2 {
			name, minBytes = name+"/L2", 0
		}
		b.Run(name, func(b *testing.B) {
			// The grids the engine gives a model whose residual stream
			// is cols wide (the fused norm's shared memory sets them).
			shapes := tiledShapes{}
			if tiled(c.typ) { // the tensor-core kernels' shared memory for this width
				shapes.add(c.typ, c.rows, c.cols, name)
			}
			resident, room, err := matvecGrids(e, mod, benchOptin(b, e), c.cols, shapes)
			if err != nil {
				b.Fatal(err)
			}
			g := &Model{e: e, k: k, cfg: model.Config{NormEps: 1e-6}, mvBlocks: resident, mvRoom: room}
			ws, bytes := benchWeights(b, e, c.typ, c.rows, c.cols, minBytes)
			x := randomDevice(b, e, c.cols*4, 5)
			y := randomDevice(b, e, c.rows*4, 6)
			norm := cuda.DevPtr(0)
			mode := mvAccumulate
			if c.xnorm {
				norm, mode = randomDevice(b, e, c.cols*4, 8), mvStore
			}
			// Random bits hold NaNs; the speed of a product does not
			// depend on its values, and y is never read.
			both(b, bytes, func(i int) error { return g.matvec(y, ws[i%len(ws)], x, mode, norm) })
		})
	}
}

// benchWeights uploads copies of a rows×cols matrix of typ in the device
// layout, at least minBytes in all, with random bytes (q8_0: random quants,
// scales between 2^-7 and 2^-6; the K-quants: whole tiles of random bytes,
// their scales NaN or not, which no kernel's speed depends on); it returns
// them and one copy's GGUF bytes.
func benchWeights(b *testing.B, e *cuda.Engine, typ gguf.Type, rows, cols, minBytes int) ([]dtensor, int) {
	b.Helper()
	rb, err := gguf.RowBytes(typ, int64(cols))
	if err != nil {
		b.Fatal(err)
	}
	one := int(rb) * rows
	copies := max(1, (minBytes+one-1)/one)
	var ws []dtensor
	for i := range copies {
		d := dtensor{name: fmt.Sprintf("w%d", i), typ: typ, rows: rows, cols: cols, laneScales: laneScales(typ, rows, cols)}
		d.ptr = randomDevice(b, e, int(devBytes(typ, rows, cols, int(rb), d.laneScales)), uint64(10+i))
		if l, ok := splitOf(typ); ok {
			wb, sb := l.rowBytes(cols, d.laneScales)
			d.scales = d.ptr.Add(uint64(rows * wb))
			s := make([]uint16, rows*sb/2)
			r := rand.New(rand.NewPCG(uint64(i), 9))
			for j := range s {
				s[j] = 0x2000 + uint16(r.IntN(0x400)) // f16 in [2^-7, 2^-6)
			}
			if err := e.CopyHtoD(d.scales, cuda.AsBytes(s)); err != nil {
				b.Fatal(err)
			}
		} else if typ != gguf.TypeBF16 && typ != gguf.TypeF16 && typ != gguf.TypeF32 && !tiled(typ) {
			b.Fatalf("benchWeights: %s needs valid blocks", typ)
		}
		ws = append(ws, d)
	}
	return ws, one
}

// BenchmarkGPUGraphReadback: what the token's read-back between two
// replays costs the stream (ContinueGraph queues, after each replay, a
// 4-byte copy into pinned memory and an event behind it). A graph of 16
// one-block nodes is replayed back to back three ways: alone, with an
// event recorded behind each replay, and with the copy and the event; µs
// per replay.
func BenchmarkGPUGraphReadback(b *testing.B) {
	e, k, _ := benchEngine(b)
	const n = 16
	x := randomDevice(b, e, 3*256*4, 7)
	g := captureChain(b, e, n, func(int) error { return k.SwiGLU(x, x.Add(1024), x.Add(2048), 256) })
	defer e.DestroyGraphExec(g)
	pinned, err := e.HostAlloc(8)
	if err != nil {
		b.Fatal(err)
	}
	defer pinned.Free()
	ev, err := e.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer e.DestroyEvent(ev)
	for _, mode := range []string{"replay", "event", "copy+event"} {
		b.Run(mode, func(b *testing.B) {
			timeOps(b, e, func() error {
				if err := e.GraphLaunch(g); err != nil {
					return err
				}
				if mode == "copy+event" {
					if err := e.CopyDtoHAsync(pinned.Bytes()[:4], x); err != nil {
						return err
					}
				}
				if mode != "replay" {
					return e.Record(ev)
				}
				return nil
			}, 1, "µs/replay")
		})
	}
}

// graphChain captures n launches of launch(i) into one graph, replays it
// b.N times between two events and reports device µs per node (and, with
// bytes > 0, the bytes each node moves).
func graphChain(b *testing.B, e *cuda.Engine, n, bytes int, launch func(i int) error) {
	b.Helper()
	x := captureChain(b, e, n, launch)
	defer e.DestroyGraphExec(x)
	if bytes > 0 {
		b.SetBytes(int64(n * bytes))
	}
	timeOps(b, e, func() error { return e.GraphLaunch(x) }, n, "µs/node")
}

// captureChain captures launch(0..n-1) as one graph and instantiates it.
func captureChain(b *testing.B, e *cuda.Engine, n int, launch func(i int) error) cuda.GraphExec {
	b.Helper()
	var x cuda.GraphExec
	err := e.Do(func() error {
		if err := e.BeginCapture(); err != nil {
			return err
		}
		var lerr error
		for i := range n {
			if lerr = launch(i); lerr != nil {
				break
			}
		}
		graph, err := e.EndCapture()
		if err == nil {
			defer e.DestroyGraph(graph)
		}
		if lerr != nil || err != nil {
			return errors.Join(lerr, err)
		}
		x, err = e.Instantiate(graph)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return x
}

// benchMatrix uploads a rows × cols matrix of type typ in its device layout
// (q8_0's lane-order scales where the wide kernel takes it) and returns it
// with its GGUF bytes: random bits for bf16 (every pattern is a value),
// otherwise normal values quantised, so no scale is NaN or Inf.
func benchMatrix(b *testing.B, e *cuda.Engine, name string, typ gguf.Type, rows, cols int) (dtensor, int) {
	b.Helper()
	rb, err := gguf.RowBytes(typ, int64(cols))
	if err != nil {
		b.Fatal(err)
	}
	wBytes := int(rb) * rows
	d := dtensor{name: name, typ: typ, rows: rows, cols: cols, laneScales: laneScales(typ, rows, cols)}
	if typ == gguf.TypeBF16 {
		d.ptr = randomDevice(b, e, wBytes, 4) // every bf16 bit pattern is a value
	} else {
		// Valid encodings (random bytes would hold NaN/Inf scales).
		src := make([]float32, cols*rows)
		r := rand.New(rand.NewPCG(2, 3))
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		data := make([]byte, wBytes)
		if err := gguf.Quantize(typ, src, data); err != nil {
			b.Fatal(err)
		}
		p, err := e.Alloc(devBytes(typ, rows, cols, int(rb), d.laneScales))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Free(p) })
		g := &Model{e: e}
		d.ptr = p
		if l, ok := splitOf(typ); ok {
			wb, _ := l.rowBytes(cols, d.laneScales)
			d.scales = p.Add(uint64(rows * wb))
		}
		var stage staging
		err = g.put(d, func(i int) []byte { return data[i*int(rb) : (i+1)*int(rb)] }, int(rb), &stage, func(int64) {})
		if err != nil {
			b.Fatal(err)
		}
	}
	return d, wBytes
}

// BenchmarkGPUMatvecBatch measures the prefill's batch kernels
// (matvec_batch.cu, matvec_batch_kq.cu) on the 9B's and 0.8B's shapes, in the variant whose
// sums match the decode kernel the engine picks, for n tokens (1, one pass
// of kernels.MatvecBatchTokens, and a chunk of DefaultPrefillChunk in passes
// side by side on prefill's grid: batchBlocks), reading x from global
// memory and, for the types with staged kernels, from copies in shared memory (where a
// chunk's copies fit beside the rings) and laid out in global memory
// (matvec_batch_lay's layout; the lay/ cases time that kernel); the K-quants' ("tiles") from
// matvec_batch_kq_stage's copies, staged once before the timed launches
// (the kq-stage cases time that kernel), on the grid of the blocks the GPU holds at once (prefill.go
// batchGrids). SetBytes counts the weight bytes once a launch: against
// BenchmarkGPUMatvec's decode kernels, the rate of n tokens' products.
// The norm/ cases time matvec_batch_norm, which normalises a chunk's
// inputs before the launches that read them.
func BenchmarkGPUMatvecBatch(b *testing.B) {
	e, k, mod := benchEngine(b)
	stageMax, err := batchShared(e, mod, benchOptin(b, e))
	if err != nil {
		b.Fatal(err)
	}
	n, chunk := kernels.MatvecBatchTokens, DefaultPrefillChunk
	for _, cols := range []int{1024, 4096, 12288} {
		b.Run(fmt.Sprintf("lay/%d/n%d", cols, n), func(b *testing.B) {
			xs := alignFloats(cols)
			x := randomDevice(b, e, n*xs*4, 5)
			xl, err := e.Alloc(uint64(n * xs * 4))
			if err != nil {
				b.Fatal(err)
			}
			defer e.Free(xl)
			b.SetBytes(int64(2 * n * cols * 4)) // x read, xl written
			timeLaunches(b, e, func() error {
				return k.MatvecBatchLay(xl, x, int32(n), int32(cols), int32(xs), int32(xs))
			})
		})
		b.Run(fmt.Sprintf("norm/%d/n%d", cols, n), func(b *testing.B) {
			xs := alignFloats(cols)
			x := randomDevice(b, e, n*xs*4, 5)
			nw := randomDevice(b, e, cols*4, 6)
			xn, err := e.Alloc(uint64(n * xs * 4))
			if err != nil {
				b.Fatal(err)
			}
			defer e.Free(xn)
			b.SetBytes(int64(2 * n * cols * 4)) // x read, xn written
			timeLaunches(b, e, func() error {
				return k.MatvecBatchNorm(xn, x, nw, int32(n), int32(cols), int32(xs), int32(xs), 1e-6)
			})
		})
		for _, q6 := range []int32{0, 1} {
			b.Run(fmt.Sprintf("kq-stage/%d/n%d/q6=%d", cols, n, q6), func(b *testing.B) {
				xs, ks := alignFloats(cols), alignFloats(kernels.KQStageFloats(cols))
				x := randomDevice(b, e, n*xs*4, 5)
				nw := randomDevice(b, e, cols*4, 6)
				xk, err := e.Alloc(uint64(n * ks * 4))
				if err != nil {
					b.Fatal(err)
				}
				defer e.Free(xk)
				b.SetBytes(int64(2 * n * cols * 4)) // x read, x' written (hi and lo)
				timeLaunches(b, e, func() error {
					return k.MatvecBatchKQStage(xk, x, nw, int32(n), int32(cols), int32(xs), int32(ks), 1, 1e-6, q6)
				})
			})
		}
	}
	// The 9B's and 0.8B's shapes; 8224 x 1024 and 5120 x 1024 are the
	// 0.8B's input projections (DeltaNet, attention), which step 121 left
	// to time for step 104's slow Q3_K and IQ4_XS priming.
	for _, shape := range []struct{ rows, cols int }{{24576, 4096}, {12288, 4096}, {4096, 12288}, {4096, 4096}, {7168, 1024}, {8224, 1024}, {5120, 1024}, {1024, 3584}, {1024, 2048}} {
		for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
			name := fmt.Sprintf("%s/%dx%d", typ, shape.rows, shape.cols)
			b.Run(name, func(b *testing.B) {
				d, wBytes := benchMatrix(b, e, name, typ, shape.rows, shape.cols)
				xs, ys := alignFloats(shape.cols), alignFloats(shape.rows)
				x := randomDevice(b, e, chunk*xs*4, 5)
				y, err := e.Alloc(uint64(chunk * ys * 4))
				if err != nil {
					b.Fatal(err)
				}
				defer e.Free(y)
				xk, ks := x, xs // the K-quants read x as matvec_batch_kq_stage stages it
				if bk, _ := batchKernel(batchVariant(d, fromGlobal)); bk.TensorCore {
					ks = alignFloats(kernels.KQStageFloats(shape.cols))
					if xk, err = e.Alloc(uint64(chunk * ks * 4)); err != nil {
						b.Fatal(err)
					}
					defer e.Free(xk)
					if err := k.MatvecBatchKQStage(xk, x, 0, int32(chunk), int32(shape.cols), int32(xs), int32(ks), 0, 0, int32(kqLayout(d))); err != nil {
						b.Fatal(err)
					}
				}
				for _, tokens := range []int{1, n, chunk} {
					for _, from := range []xFrom{fromGlobal, fromStaged, fromLaid} {
						v := batchVariant(d, from)
						bk, ok := batchKernel(v)
						sh := bk.Shared(tokens, shape.cols)
						if !ok || bk.Staged && sh-bk.Ring() > stageMax {
							continue // no staged or laid kernel for the type, or copies that do not fit
						}
						grid, err := batchGrids(e, mod, []mvbKey{{v, sh}})
						if err != nil {
							b.Fatal(err)
						}
						blocks := batchBlocks(shape.rows, tokens, bk.RowsPerBlock, grid[mvbKey{v, sh}])
						src := "global"
						switch {
						case bk.Staged:
							src = "staged"
						case bk.Laid:
							src = "laid" // x's values as they come: the time is the layout's, not the values'
						case bk.TensorCore:
							src = "tiles"
						}
						b.Run(fmt.Sprintf("n%d/%s", tokens, src), func(b *testing.B) {
							b.SetBytes(int64(wBytes))
							timeLaunches(b, e, func() error {
								return k.MatvecBatch(v, y, d.ptr, d.scales, xk, int32(shape.rows), int32(shape.cols), mvStore,
									int32(tokens), int32(ks), int32(ys), blocks)
							})
						})
					}
				}
			})
		}
	}
}

// BenchmarkGPUPrefillHost is the host's side of a prompt's priming. A tiny
// model with the 0.8B preset's 24 layers (every fourth attention) launches
// about as many kernels a chunk as the 0.8B does (bf16 and q8_0 224, as the
// 0.8B; Q4_K 290 against its 272: the tiny beta's 4 rows make its alpha a
// launch of its own) and gives the GPU little to do with them, so its
// chunks take what the host takes to launch them: host-µs/chunk is the
// time to enqueue 8 chunks (the host's alone while the GPU keeps up, as it
// does here), µs/chunk their time to the end of the last on the GPU;
// "eager" launches each kernel (host-µs/launch: perf.md step 124),
// "replay" records the launches and replays the chunk's graph (step 125).
func BenchmarkGPUPrefillHost(b *testing.B) {
	e := decodeEngine(b)
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_K} {
		spec := gpuTinySpec(typ, false, 31)
		spec.NLayer, spec.Interval = 24, 4
		m := modeltest.Load(b, spec)
		g := loadModel(b, e, m, Options{})
		if g.pf == nil {
			b.Fatal("no prefill plan")
		}
		const chunks = 8
		prompt := testPrompt(chunks*g.pf.tokens, m.NVocab)
		cc, err := g.NewCache(len(prompt) + 8)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cc.Close() })
		for _, replay := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/replay=%v", typ, replay), func(b *testing.B) {
				launches := 0 // of the whole prompt, launched eagerly
				err := e.Do(func() error {
					e.SetLaunchObserver(func(cuda.Function) { launches++ })
					defer e.SetLaunchObserver(nil)
					return g.prefill(cc, prompt, 0, replay)
				})
				if err == nil {
					err = e.Synchronize()
				}
				if err != nil {
					b.Fatal(err)
				}
				var host, total time.Duration
				for b.Loop() {
					t0 := time.Now()
					err := e.Do(func() error { return g.prefill(cc, prompt, 0, replay) })
					t1 := time.Now()
					if err == nil {
						err = e.Synchronize()
					}
					if err != nil {
						b.Fatal(err)
					}
					host += t1.Sub(t0)
					total += time.Since(t0)
				}
				n := float64(b.N * chunks)
				if !replay {
					b.ReportMetric(float64(launches)/chunks, "launches/chunk")
					b.ReportMetric(host.Seconds()*1e6/(float64(b.N)*float64(launches)), "host-µs/launch")
				}
				b.ReportMetric(host.Seconds()*1e6/n, "host-µs/chunk")
				b.ReportMetric(total.Seconds()*1e6/n, "µs/chunk")
			})
		}
	}
}

// BenchmarkGPUPrefillChunk times a prefill chunk of the model named by
// MEMRA_BENCH_MODEL (a GGUF file, e.g. the 0.8B synth preset) as prefill
// runs it, eagerly (each kernel launched from the host) and replayed
// (chunkReplay: recorded, the graph's changed nodes updated, replayed),
// 16 chunks between synchronisations, alternately at position 0 and one
// full chunk on with two prompts' tokens, so that every replay updates the
// nodes of the tokens and positions as a prompt's chunks do. Each path
// runs chunks of 1, 2, 4, 8, ... tokens up to the plan's full chunk: a
// chunk's time against its tokens says what a chunk costs whatever it
// holds and what each token adds, the trade of a chunk's length (perf.md
// step 127). A pass of fewer than 8 tokens takes the batch kernels' path
// for a partial pass (n not known at compile time).
func BenchmarkGPUPrefillChunk(b *testing.B) {
	path := os.Getenv("MEMRA_BENCH_MODEL")
	if path == "" {
		b.Skip("MEMRA_BENCH_MODEL not set")
	}
	e := decodeEngine(b)
	m := modeltest.Open(b, path)
	g := loadModel(b, e, m, Options{})
	if g.pf == nil {
		b.Fatal("no prefill plan")
	}
	tokens := testPrompt(2*g.pf.tokens, m.NVocab)
	cc, err := g.NewCache(64)
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	const reps = 16
	for _, c := range []struct {
		name string
		run  func(*Cache, []int32, int) error
	}{{"eager", g.prefillChunk}, {"replay", g.chunkReplay}} {
		for _, n := range []int{1, 2, 4, 8, 16, 32, 64} {
			if n > g.pf.tokens {
				break
			}
			b.Run(fmt.Sprintf("%s/n%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					err := e.Do(func() error {
						for i := range reps {
							k := i % 2 * g.pf.tokens
							if err := c.run(cc, tokens[k:k+n], k); err != nil {
								return err
							}
						}
						return nil
					})
					if err == nil {
						err = e.Synchronize()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*reps), "µs/chunk")
				b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*reps*n), "µs/token")
			})
		}
	}
}
