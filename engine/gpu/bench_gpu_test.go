package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// benchEngine opens the GPU and the kernels for a benchmark or skips.
func benchEngine(b *testing.B) (*cuda.Engine, *Kernels, cuda.Module) {
	b.Helper()
	e, err := cuda.New(0)
	if err != nil {
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
	b.ReportMetric(float64(d.Nanoseconds())/float64(b.N)/1e3, "µs/launch")
}

// BenchmarkGPUCopy is the ceiling: a 2 GiB device-to-device copy; the GB/s
// it reports counts bytes read plus written, as GPU.md's 4.19 TB/s does.
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
	resident, err := matvecGrids(e, mod, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct{ rows, cols int }{{24576, 4096}, {12288, 4096}, {4096, 12288}, {248320, 1024}} {
		for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeF32, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K} {
			name := fmt.Sprintf("%s/%dx%d", typ, shape.rows, shape.cols)
			b.Run(name, func(b *testing.B) {
				rb, err := gguf.RowBytes(typ, int64(shape.cols))
				if err != nil {
					b.Fatal(err)
				}
				wBytes := int(rb) * shape.rows
				d := dtensor{name: name, typ: typ, rows: shape.rows, cols: shape.cols}
				if typ == gguf.TypeBF16 {
					d.ptr = randomDevice(b, e, wBytes, 4) // every bf16 bit pattern is a value
				} else {
					// Valid encodings (random bytes would hold NaN/Inf scales).
					src := make([]float32, shape.cols*shape.rows)
					r := rand.New(rand.NewPCG(2, 3))
					for i := range src {
						src[i] = float32(r.NormFloat64())
					}
					data := make([]byte, wBytes)
					if err := gguf.Quantize(typ, src, data); err != nil {
						b.Fatal(err)
					}
					p, err := e.Alloc(uint64(wBytes))
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { e.Free(p) })
					g := &Model{e: e}
					d.ptr = p
					if l, ok := splitOf(typ); ok {
						wb, _ := l.rowBytes(shape.cols)
						d.scales = p.Add(uint64(shape.rows * wb))
					}
					var stage []byte
					err = g.put(d, func(i int) []byte { return data[i*int(rb) : (i+1)*int(rb)] }, int(rb), &stage, func(int64) {})
					if err != nil {
						b.Fatal(err)
					}
				}
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
						g := &Model{k: k, cfg: model.Config{NormEps: 1e-6}, mvBlocks: grid.blocks}
						b.SetBytes(int64(wBytes))
						timeLaunches(b, e, func() error { return g.matvec(y, d, x, mvStore, 0) })
					})
				}
			})
		}
	}
}
