// Command pchain times a chain of bf16 matvecs on the 0.8B FFN shapes (gate|up
// 7168 × 1024, down 1024 × 3584) run as ONE persistent kernel with grid
// barriers between phases (pchain.cu), to set against what the same products
// cost as graph nodes (engine/gpu BenchmarkGPUGraphChain). It is the record
// behind docs/perf.md step 25 (scripts/gpu/run43.sh ran it):
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/pchain.cubin engine/internal/pchain/pchain.cu
//	CGO_ENABLED=0 go build -o bin/pchain ./engine/internal/pchain
//	bin/pchain -cubin bin/pchain.cubin
//
// Each chain's first phases are checked against a float64 reference before
// any timing, for every flag setting; all settings must agree bit for bit
// (they add the same products in the same order).
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/memra-ai/memra/engine/cuda"
)

// shape is one phase kind of pchain.cu (pc_phase.kind is its index).
type shape struct{ rows, cols int }

var shapes = [2]shape{{7168, 1024}, {1024, 3584}}

// phase mirrors pchain.cu's pc_phase (three pointers, three int32, padding).
type phase struct {
	w, x, y          uint64
	rows, cols, kind int32
	_                int32
}

func main() {
	cubin := flag.String("cubin", "bin/pchain.cubin", "the compiled pchain.cu")
	n := flag.Int("phases", 64, "phases per launch")
	perSM := flag.String("blocks", "1,2", "blocks per SM to try (at most what the GPU holds)")
	flag.Parse()
	if err := run(*cubin, *n, *perSM); err != nil {
		fmt.Fprintln(os.Stderr, "pchain:", err)
		os.Exit(1)
	}
}

// weights is one shape's matrix: its host values and enough device copies
// to stream from HBM (the L2 case reads copy 0 only).
type weights struct {
	s      shape
	host   []uint16 // bf16 bits, rows × cols
	copies []cuda.DevPtr
}

// randomBF16 fills rows × cols bf16 values N(0, 1/cols), so a product keeps
// the scale of its input along a long chain (no overflow, never zero).
func randomBF16(s shape, seed uint64) []uint16 {
	r := rand.New(rand.NewPCG(seed, 1))
	w := make([]uint16, s.rows*s.cols)
	sd := 1 / math.Sqrt(float64(s.cols))
	for i := range w {
		w[i] = uint16(math.Float32bits(float32(r.NormFloat64()*sd)) >> 16)
	}
	return w
}

func bf16(b uint16) float64 { return float64(math.Float32frombits(uint32(b) << 16)) }

func run(cubin string, n int, perSM string) error {
	if n < 2 {
		return fmt.Errorf("-phases %d: need at least 2", n)
	}
	e, err := cuda.New(0)
	if err != nil {
		return err
	}
	defer e.Close()
	img, err := os.ReadFile(cubin)
	if err != nil {
		return err
	}
	mod, err := e.LoadModule(img)
	if err != nil {
		return fmt.Errorf("%s: %w", cubin, err)
	}
	fn, err := e.Function(mod, "pchain")
	if err != nil {
		return err
	}
	resident, err := e.MaxActiveBlocksPerSM(fn, 256, 0)
	if err != nil {
		return err
	}
	fmt.Printf("pchain: %d SMs, %d blocks of 256 per SM resident\n", e.Info().SMs, resident)

	var alloc []cuda.DevPtr
	defer func() {
		for _, p := range alloc {
			e.Free(p)
		}
	}()
	upload := func(b []byte) (cuda.DevPtr, error) {
		p, err := e.Alloc(uint64(len(b)))
		if err != nil {
			return 0, err
		}
		alloc = append(alloc, p)
		return p, e.CopyHtoD(p, b)
	}
	// 64 MB of each shape's copies stream from HBM (the L2 is 50-60 MB).
	var ws [2]weights
	for k, s := range shapes {
		ws[k] = weights{s: s, host: randomBF16(s, uint64(k+1))}
		copies := (64<<20 + 2*s.rows*s.cols - 1) / (2 * s.rows * s.cols)
		for range copies {
			p, err := upload(cuda.AsBytes(ws[k].host))
			if err != nil {
				return err
			}
			ws[k].copies = append(ws[k].copies, p)
		}
	}
	x0 := make([]float32, shapes[0].cols)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range x0 {
		x0[i] = float32(r.NormFloat64())
	}
	// Buffers: x (1024) and h (7168; the down phase reads its first 3584).
	dx, err := upload(cuda.AsBytes(x0))
	if err != nil {
		return err
	}
	dh, err := e.Alloc(uint64(4 * shapes[0].rows))
	if err != nil {
		return err
	}
	alloc = append(alloc, dh)
	dbar, err := e.Alloc(4)
	if err != nil {
		return err
	}
	alloc = append(alloc, dbar)
	dph, err := e.Alloc(uint64(n) * uint64(unsafe.Sizeof(phase{})))
	if err != nil {
		return err
	}
	alloc = append(alloc, dph)

	// Chains: "ab" alternates gate|up (x → h) and down (h → x), the FFN's
	// dependency; "a" and "b" repeat one shape on fixed inputs, to set
	// against the graph chain of that shape alone; "0" has no rows (the
	// barrier alone).
	chain := func(kinds string, l2 bool) []phase {
		ph := make([]phase, n)
		for i := range ph {
			k := 0
			switch kinds {
			case "b":
				k = 1
			case "ab":
				k = i % 2
			}
			if kinds == "0" {
				ph[i] = phase{kind: 0} // no rows: the barrier alone
				continue
			}
			c := ws[k].copies[(i/len(kinds))%len(ws[k].copies)]
			if l2 {
				c = ws[k].copies[0]
			}
			// gate|up reads x and writes h, down reads h[0:3584] and
			// writes x: in "a" and "b" no phase reads another's output.
			src, dst := dx, dh
			if k == 1 {
				src, dst = dh, dx
			}
			ph[i] = phase{w: uint64(c), x: uint64(src), y: uint64(dst), rows: int32(ws[k].s.rows), cols: int32(ws[k].s.cols), kind: int32(k)}
		}
		return ph
	}
	launch := func(ph []phase, blocks, flags int) error {
		if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&ph[0])), len(ph)*int(unsafe.Sizeof(phase{})))); err != nil {
			return err
		}
		return launchOnly(e, fn, dph, len(ph), dbar, blocks, flags)
	}

	// Correctness: gate|up then down from x0, against float64.
	ph := chain("ab", false)[:2]
	var got [2][]float32
	var blocksList []int
	for _, f := range strings.Split(perSM, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b < 1 || b > resident {
			return fmt.Errorf("-blocks %q: want 1..%d", f, resident)
		}
		blocksList = append(blocksList, b*e.Info().SMs)
	}
	for _, blocks := range blocksList {
		for pi, flags := range []int{0, flagPrefetch, flagRed, flagPrefetch | flagRed} {
			if err := e.CopyHtoD(dx, cuda.AsBytes(x0)); err != nil {
				return err
			}
			if err := launch(ph, blocks, flags); err != nil {
				return err
			}
			h := make([]float32, shapes[0].rows)
			y := make([]float32, shapes[0].cols)
			if err := e.CopyDtoH(cuda.AsBytes(h), dh); err != nil {
				return err
			}
			if err := e.CopyDtoH(cuda.AsBytes(y), dx); err != nil {
				return err
			}
			worst := max(check(ws[0], x0, h), check(ws[1], h[:shapes[1].cols], y))
			// f32 sums of at most 14 terms per lane plus a 5-level butterfly:
			// error ≲ 19 · 2^-24 ≈ 1.1e-6 of Σ|w·x|; 1e-5 leaves margin.
			if worst > 1e-5 {
				return fmt.Errorf("blocks %d flags %d: relative error %.2e (> 1e-5)", blocks, flags, worst)
			}
			out := slices.Concat(h, y)
			if pi == 0 {
				got[0] = out
			} else if !slices.Equal(bitsOf(got[0]), bitsOf(out)) {
				return fmt.Errorf("flags %d changed the results' bits", flags)
			}
			fmt.Printf("check blocks %d flags %d: max error %.2e of Σ|w·x| (ok)\n", blocks, flags, worst)
		}
	}

	// Timing: µs per phase, median of 5 batches of 10 launches of n phases.
	start, err := e.NewEvent()
	if err != nil {
		return err
	}
	defer e.DestroyEvent(start)
	end, err := e.NewEvent()
	if err != nil {
		return err
	}
	defer e.DestroyEvent(end)
	for _, kinds := range []string{"0", "ab", "a", "b"} {
		for _, l2 := range []bool{false, true} {
			if kinds == "0" && l2 {
				continue
			}
			ph := chain(kinds, l2)
			if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&ph[0])), len(ph)*int(unsafe.Sizeof(phase{})))); err != nil {
				return err
			}
			var bytes float64
			for _, p := range ph {
				bytes += 2 * float64(p.rows) * float64(p.cols)
			}
			for _, blocks := range blocksList {
				for _, flags := range []int{0, flagPrefetch, flagRed, flagPrefetch | flagRed} {
					var ts []float64
					for rep := range 6 {
						err := e.Do(func() error {
							if err := e.Record(start); err != nil {
								return err
							}
							for range 10 {
								if err := launchOnly(e, fn, dph, n, dbar, blocks, flags); err != nil {
									return err
								}
							}
							return e.Record(end)
						})
						if err != nil {
							return err
						}
						if err := e.EventSynchronize(end); err != nil {
							return err
						}
						d, err := e.Elapsed(start, end)
						if err != nil {
							return err
						}
						if rep > 0 { // the first batch warms up
							ts = append(ts, d.Seconds()/10)
						}
					}
					slices.Sort(ts)
					t := ts[len(ts)/2]
					where := "hbm"
					if l2 {
						where = "l2"
					}
					fmt.Printf("chain %-2s %-3s blocks %4d prefetch %-5v red %-5v  %7.3f µs/phase  %5.2f TB/s of weights\n",
						kinds, where, blocks, flags&flagPrefetch != 0, flags&flagRed != 0, t/float64(n)*1e6, bytes/t/1e12)
				}
			}
		}
	}
	return nil
}

// pchain.cu's PC_PREFETCH and PC_RED.
const (
	flagPrefetch = 1
	flagRed      = 2
)

// launchOnly zeroes the barrier counter and launches the chain already in dph.
func launchOnly(e *cuda.Engine, fn cuda.Function, dph cuda.DevPtr, n int, dbar cuda.DevPtr, blocks, flags int) error {
	if err := e.MemsetD32Async(dbar, 0, 1); err != nil {
		return err
	}
	p := cuda.NewParams(4)
	p.SetPtr(0, dph)
	p.SetI32(1, int32(n))
	p.SetPtr(2, dbar)
	p.SetI32(3, int32(flags))
	return e.LaunchParams(fn, [3]uint32{uint32(blocks), 1, 1}, [3]uint32{256, 1, 1}, 0, p)
}

// check returns the largest |y - W x| / Σ|w·x| over the rows, in float64.
func check(w weights, x, y []float32) float64 {
	worst := 0.0
	for i := range w.s.rows {
		var s, m float64
		for c := range w.s.cols {
			p := bf16(w.host[i*w.s.cols+c]) * float64(x[c])
			s += p
			m += math.Abs(p)
		}
		d := math.Abs(float64(y[i])-s) / m
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		worst = max(worst, d)
	}
	return worst
}

func bitsOf(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, f := range v {
		b[i] = math.Float32bits(f)
	}
	return b
}
