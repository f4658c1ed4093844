// Command pchain times the 0.8B preset's bf16 FFN (gate|up 7168 × 1024 with
// the pre-norm and the SwiGLU, down 1024 × 3584 added into the residual) run
// as ONE persistent kernel with grid barriers between phases (pchain.cu's
// pchain; pstream, pwarp, pdeep, pfeed, pfreg and pfpre, which stream the
// weights ahead of the barriers through shared memory), to
// set against what the same products cost as graph nodes (engine/gpu
// BenchmarkGPUGraphChain). It is the record behind docs/perf.md steps 25,
// 27 and 86 to 88 (scripts/gpu/run43.sh to run55.sh and run196.sh to
// run229.sh ran its forms):
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/pchain.cubin engine/internal/pchain/pchain.cu
//	CGO_ENABLED=0 go build -o bin/pchain ./engine/internal/pchain
//	bin/pchain -cubin bin/pchain.cubin -time pchain,pfeed,pfreg,pfpre
//	bin/pchain -cubin bin/pchain.cubin -nine 1,2 # the 9B q8_0 FFN's ring kernels
//
// Each chain's first phases are checked against a float64 reference before
// any timing, for every flag setting; all settings, pstream, pwarp and the
// deep kernels (pdeep, pfeed, pfreg, pfpre) must agree bit for bit (they
// add the same products in the same order). The same FFN in q8_0 (step 87)
// runs on pfeed_q8, pfreg_q8 and pfpre_q8, each checked against float64 and
// against pfeed_q8 bit for bit, with x' in f32 and in int8 (PQ_X8); -nine
// checks and times pring, pring_hq, pring_hx and its variants on the 9B
// q8_0 FFN instead, times some of them one FFN a launch, and traces where
// pring_hx's, pring_hx_er's, pring_hx_br's and pring_hx_brs's phases go
// (nine.go). -time picks
// the kernels timed, -types the weight types, -arrive the deep kernels'
// ways to arrive at the grid barrier, -producers the producer kernels'
// counts of producer warps.
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
	"github.com/memra-ai/memra/engine/internal/evtime"
	"github.com/memra-ai/memra/engine/internal/xcmd"
	"github.com/memra-ai/memra/gguf"
)

// shape is one phase kind of pchain.cu (pc_phase.kind is its index).
type shape struct{ rows, cols int }

var shapes = [2]shape{{7168, 1024}, {1024, 3584}}

// units is each kind's row unit in pchain.cu's pc_unit: r rows a warp, c
// 16-byte chunks a lane a row, sc chunks of q8_0 block scales after them in
// a slot. Kinds 2 and 3 are kinds 0 and 1 in q8_0, 4 and 5 the 9B FFN in
// q8_0 (pring's), 7 the 9B output projection in q8_0 (pring_hx_brl's; a
// down kind, since pc_down is a kind's low bit). Kind 6, a mixer phase
// (kindMix, pring_hx_brm's), has no rows and no unit.
var units = [8]struct{ r, c, sc int }{{4, 4, 0}, {1, 14, 0}, {4, 2, 16}, {1, 7, 14}, {2, 8, 32}, {1, 24, 48}, {}, {1, 8, 16}}

// kindShape is the matrix of a phase kind (not 6).
func kindShape(kind int) shape {
	switch {
	case kind == kindOut:
		return outShape
	case kind >= kind9B:
		return nineShapes[kind-kind9B]
	}
	return shapes[kind%2]
}

// stride is a unit's 16-byte chunks in a slot (pchain.cu's pc_stride).
func stride(kind int32) int {
	u := units[kind]
	return u.r*u.c*32 + u.sc
}

// kindQ8 is what a q8_0 chain adds to a phase's kind.
const kindQ8 = 2

// phase mirrors pchain.cu's pc_phase (four pointers, four int32).
type phase struct {
	w, x, y, norm          uint64
	rows, cols, kind, mode int32
}

// bytes is the phase's weights as they stream: bf16, or q8_0's quants and
// an f16 scale per 32.
func (p phase) bytes() float64 {
	n := float64(p.rows) * float64(p.cols)
	if p.kind >= kindQ8 {
		return n + n/16
	}
	return 2 * n
}

// pc_phase.mode values the chains use (0 stores y = W x').
const (
	modeAdd    = 1 // y += W x'
	modeSwiGLU = 2 // y[r/2] = silu(row r)·row r+1
)

func main() {
	cubin := flag.String("cubin", "bin/pchain.cubin", "the compiled pchain.cu")
	n := flag.Int("phases", 64, "phases per launch")
	perSM := flag.String("blocks", "1,2", "blocks per SM to try (at most what the GPU holds)")
	timed := flag.String("time", "pchain,pstream,pwarp,pdeep,pfeed,pfreg,pfpre", "kernels to time (every one is checked)")
	prod := flag.String("producers", "1", "producer warps of pfeed, pfreg and pfpre to time: 1, 2, 4 (each also checked)")
	types := flag.String("types", "bf16,q8_0", "weight types to time: bf16 (every kernel), q8_0 (pfeed, pfreg and pfpre only)")
	nine := flag.String("nine", "", "ring depths (slots a warp: 1, 2) to check and time pring, pring_hq, pring_hx and its variants with on the 9B q8_0 FFN (and trace pring_hx, pring_hx_er, and at 2 pring_hx_br and pring_hx_brs, with the last), instead of the 0.8B chains")
	ncu := flag.String("ncu", "", "with -nine: launch only this form (pring_hx/x8, ...), once on 2 phases, then 3 times on the chain at the last depth, for ncu; no checks or timings")
	arrive := flag.String("arrive", "fence", "the deep kernels' arrivals at the grid barrier to time: fence, red, relaxed, nobar (the last two time a wrong result)")
	flag.Parse()
	pick := map[string]bool{}
	for _, k := range strings.Split(*timed, ",") {
		switch k {
		case "pchain", "pstream", "pwarp", "pdeep", "pfeed", "pfreg", "pfpre":
			pick[k] = true
		default:
			fmt.Fprintf(os.Stderr, "pchain: -time %q: kernels are pchain, pstream, pwarp, pdeep, pfeed, pfreg and pfpre\n", k)
			os.Exit(2)
		}
	}
	var arrivals []arrival
	for _, a := range strings.Split(*arrive, ",") {
		i := slices.IndexFunc(deepArrivals, func(d arrival) bool { return d.name == a })
		if i < 0 {
			fmt.Fprintf(os.Stderr, "pchain: -arrive %q: forms are fence, red, relaxed and nobar\n", a)
			os.Exit(2)
		}
		arrivals = append(arrivals, deepArrivals[i])
	}
	var producers []int
	for _, f := range strings.Split(*prod, ",") {
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > maxProducers || maxProducers%p != 0 {
			fmt.Fprintf(os.Stderr, "pchain: -producers %q: counts are 1, 2 and 4\n", f)
			os.Exit(2)
		}
		producers = append(producers, p)
	}
	var q8s []bool
	for _, t := range strings.Split(*types, ",") {
		switch t {
		case "bf16", "q8_0":
			q8s = append(q8s, t == "q8_0")
		default:
			fmt.Fprintf(os.Stderr, "pchain: -types %q: types are bf16 and q8_0\n", t)
			os.Exit(2)
		}
	}
	if *ncu != "" && *nine == "" {
		fmt.Fprintln(os.Stderr, "pchain: -ncu needs -nine (the ring depths)")
		os.Exit(2)
	}
	if *nine != "" {
		var depths []int
		for _, f := range strings.Split(*nine, ",") {
			d, err := strconv.Atoi(f)
			if err != nil {
				fmt.Fprintf(os.Stderr, "pchain: -nine %q: ring depths are numbers of slots, 1 to %d\n", f, maxRingSlots)
				os.Exit(2)
			}
			depths = append(depths, d)
		}
		if err := runNine(*cubin, *n, depths, *ncu); err != nil {
			fmt.Fprintln(os.Stderr, "pchain:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*cubin, *n, *perSM, pick, arrivals, producers, q8s); err != nil {
		fmt.Fprintln(os.Stderr, "pchain:", err)
		os.Exit(1)
	}
}

// weights is one shape's matrix, bf16 or q8_0: its host values and enough
// device copies to stream from HBM (the L2 case reads copy 0 only).
type weights struct {
	s      shape
	host   []uint16 // bf16 bits, rows × cols; nil for q8_0
	quants []int8   // q8_0: rows × cols
	scales []uint16 // q8_0: f16 bits, rows × cols/32
	copies []cuda.DevPtr
}

// at is element (row, c) as the kernels read it.
func (w *weights) at(row, c int) float64 {
	if w.host != nil {
		return bf16(w.host[row*w.s.cols+c])
	}
	i := row*w.s.cols + c
	return float64(gguf.F16ToF32(w.scales[i/32])) * float64(w.quants[i])
}

// device is the matrix as pchain.cu reads it: bf16 row-major, or the
// q8_0 quants row-major followed by the scales (pc_unit's order).
func (w *weights) device() []byte {
	if w.host != nil {
		return slices.Clone(cuda.AsBytes(w.host))
	}
	b := make([]byte, 0, len(w.quants)+2*len(w.scales))
	for _, q := range w.quants {
		b = append(b, byte(q))
	}
	return append(b, cuda.AsBytes(w.scales)...)
}

// randomQ8 fills rows × cols q8_0 values whose products are about
// N(0, 1/cols), as randomBF16's: quants uniform in [-127, 127] (sd ≈ 73.3)
// under f16 scales of (0.5 to 1.5)/(73.3 √cols), each sign random.
func randomQ8(s shape, seed uint64) (quants []int8, scales []uint16) {
	r := rand.New(rand.NewPCG(seed, 2))
	quants = make([]int8, s.rows*s.cols)
	for i := range quants {
		quants[i] = int8(r.IntN(255) - 127)
	}
	scales = make([]uint16, s.rows*s.cols/32)
	for i := range scales {
		d := (0.5 + r.Float64()) / (73.3 * math.Sqrt(float64(s.cols)))
		if r.IntN(2) == 0 {
			d = -d
		}
		scales[i] = gguf.F32ToF16(float32(d))
	}
	return quants, scales
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

func run(cubin string, n int, perSM string, timed map[string]bool, arrivals []arrival, producers []int, q8s []bool) error {
	if n < 2 {
		return fmt.Errorf("-phases %d: need at least 2", n)
	}
	e, mod, fn, err := xcmd.Kernel(cubin, "pchain")
	if err != nil {
		return err
	}
	defer e.Close()
	resident, err := e.MaxActiveBlocksPerSM(fn, 256, 0)
	if err != nil {
		return err
	}
	fmt.Printf("pchain: %d SMs, %d blocks of 256 per SM resident\n", e.Info().SMs, resident)
	stream, err := loadStream(e, mod, "pstream", 288)
	if err != nil {
		return err
	}
	perWarp, err := loadStream(e, mod, "pwarp", 256)
	if err != nil {
		return err
	}
	// The deep kernels: pdeep, then each producer kernel with each count
	// of producer warps ("pfpre/p2": two), in bf16 and in q8_0
	// ("pfpre_q8/p2"); base is the name -time picks.
	type namedDeep struct {
		name, base string
		k          deepKernel
	}
	deep, err := loadDeep(e, mod, "pdeep", 0)
	if err != nil {
		return err
	}
	deeps := []namedDeep{{"pdeep", "pdeep", deep}}
	for _, q8 := range []bool{false, true} {
		for _, base := range []string{"pfeed", "pfreg", "pfpre"} {
			name := base
			if q8 {
				name += "_q8"
			}
			for _, p := range producers {
				k, err := loadDeep(e, mod, name, p)
				if err != nil {
					return err
				}
				k.q8 = q8
				if base != "pfeed" {
					k.held = pfregHeld
				}
				label := name
				if p > 1 {
					label = fmt.Sprintf("%s/p%d", name, p)
				}
				deeps = append(deeps, namedDeep{label, base, k})
			}
		}
	}

	mem := newDevMem(e)
	defer mem.free()
	upload := mem.upload
	// 64 MB of each matrix's copies stream from HBM (the L2 is 50-60 MB).
	// ws are the bf16 matrices, wq the q8_0 ones, of the same shapes.
	var ws, wq [2]weights
	for k, s := range shapes {
		ws[k] = weights{s: s, host: randomBF16(s, uint64(k+1))}
		wq[k] = weights{s: s}
		wq[k].quants, wq[k].scales = randomQ8(s, uint64(k+1))
	}
	for _, w := range []*weights{&ws[0], &ws[1], &wq[0], &wq[1]} {
		b := w.device()
		for range (64<<20 + len(b) - 1) / len(b) {
			p, err := upload(b)
			if err != nil {
				return err
			}
			w.copies = append(w.copies, p)
		}
	}
	x0 := make([]float32, shapes[0].cols)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range x0 {
		x0[i] = float32(r.NormFloat64())
	}
	nw := make([]float32, shapes[0].cols) // the pre-norm's weights
	for i := range nw {
		nw[i] = float32(0.5 + r.Float64())
	}
	// Buffers: x (1024, the residual) and h (7168; gate|up's SwiGLU writes
	// 3584, which the down phase reads).
	dx, err := upload(cuda.AsBytes(x0))
	if err != nil {
		return err
	}
	dnw, err := upload(cuda.AsBytes(nw))
	if err != nil {
		return err
	}
	dh, err := mem.alloc(uint64(4 * shapes[0].rows))
	if err != nil {
		return err
	}
	dbar, dph, err := mem.chain(n)
	if err != nil {
		return err
	}

	// Chains: "ab" alternates gate|up (norm(x) → h) and down (x += W h),
	// the FFN; "a" and "b" repeat one of them, no phase reading another's
	// output, to set against the graph chain of that shape alone; "0" has no
	// rows (the barrier alone).
	// A q8_0 chain is the same with wq's matrices (kinds 2 and 3).
	chain := func(kinds string, l2, q8 bool) []phase {
		ph := make([]phase, n)
		w, add := &ws, int32(0)
		if q8 {
			w, add = &wq, kindQ8
		}
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
			c := w[k].copies[(i/len(kinds))%len(w[k].copies)]
			if l2 {
				c = w[k].copies[0]
			}
			p := phase{w: uint64(c), x: uint64(dx), y: uint64(dh), norm: uint64(dnw), mode: modeSwiGLU}
			if k == 1 {
				p = phase{w: uint64(c), x: uint64(dh), y: uint64(dx), mode: modeAdd}
			}
			p.rows, p.cols, p.kind = int32(w[k].s.rows), int32(w[k].s.cols), int32(k)+add
			ph[i] = p
		}
		return ph
	}
	launch := func(ph []phase, blocks, flags int) error {
		if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&ph[0])), len(ph)*int(unsafe.Sizeof(phase{})))); err != nil {
			return err
		}
		return launchOnly(e, fn, dph, len(ph), dbar, blocks, flags)
	}

	// readBack returns the first FFN's SwiGLU outputs h and residual y.
	readBack := func() (h, y []float32, err error) {
		h, y = make([]float32, shapes[1].cols), make([]float32, shapes[0].cols)
		if err := e.CopyDtoH(cuda.AsBytes(h), dh); err != nil {
			return nil, nil, err
		}
		return h, y, e.CopyDtoH(cuda.AsBytes(y), dx)
	}
	// reset puts x0 in x and NaNs in h before a checked launch, so that a
	// kernel that skips a row cannot pass on what an earlier launch left.
	nans := slices.Repeat([]float32{nanF32}, shapes[0].rows)
	reset := func() error {
		if err := e.CopyHtoD(dx, cuda.AsBytes(x0)); err != nil {
			return err
		}
		return e.CopyHtoD(dh, cuda.AsBytes(nans))
	}
	// Correctness: gate|up then down from x0, against float64.
	ph := chain("ab", false, false)[:2]
	want := ffnRef(ws, x0, nw, false)
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
		for pi, flags := range []int{0, flagPrefetch, flagRed | flagPrefetch} {
			if err := reset(); err != nil {
				return err
			}
			if err := launch(ph, blocks, flags); err != nil {
				return err
			}
			h, y, err := readBack()
			if err != nil {
				return err
			}
			worst := max(want.checkH(h), want.checkX(&ws[1], x0, h, y))
			if worst > 1 {
				return fmt.Errorf("blocks %d flags %d: error %.2f times its bound", blocks, flags, worst)
			}
			out := slices.Concat(h, y)
			if pi == 0 {
				got[0] = out
			} else if !slices.Equal(bitsOf(got[0]), bitsOf(out)) {
				return fmt.Errorf("flags %d changed the results' bits", flags)
			}
			fmt.Printf("check blocks %d flags %d: max error %.3g of its bound (ok)\n", blocks, flags, worst)
		}
	}
	// pstream, pwarp and the deep kernels add the same products in the
	// same order: pchain's bits, over 7 phases (so that the streaming
	// kernels refill their slots, the deep ones each twice or more, and the
	// mbarriers turn both parities), from pchain's flags-0 launch.
	long := chain("ab", false, false)[:7]
	if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&long[0])), len(long)*int(unsafe.Sizeof(phase{})))); err != nil {
		return err
	}
	var ref []float32
	kernels := []struct {
		name   string
		launch func() error
	}{
		{"pchain", func() error { return launchOnly(e, fn, dph, len(long), dbar, blocksList[0], 0) }},
		{"pstream", func() error { return stream.launch(e, dph, len(long), dbar, 0, ringSums) }},
		{"pwarp", func() error { return perWarp.launchWarp(e, dph, len(long), dbar, 0) }},
	}
	for _, d := range deeps {
		if d.k.q8 {
			continue
		}
		s, ok := d.k.fit(long)
		if !ok {
			return fmt.Errorf("%s: the check's chain does not fit (slots of %d bytes a block, %d fit, or too many units a warp)", d.name, s.shared(), d.k.room)
		}
		kernels = append(kernels, struct {
			name   string
			launch func() error
		}{d.name, func() error { return d.k.launch(e, dph, len(long), dbar, 0, s) }})
	}
	for i, k := range kernels {
		if err := reset(); err != nil {
			return err
		}
		if err := k.launch(); err != nil {
			return err
		}
		h, y, err := readBack()
		if err != nil {
			return err
		}
		out := slices.Concat(h, y)
		if i == 0 {
			ref = out
			continue
		}
		if !slices.Equal(bitsOf(ref), bitsOf(out)) {
			return fmt.Errorf("%s: the results of %d phases differ from pchain's", k.name, len(long))
		}
		fmt.Printf("check %s: %d phases bit-identical to pchain (ok)\n", k.name, len(long))
	}
	// q8_0: the first FFN of each q8_0 kernel against float64, then its 7
	// phases against pfeed_q8's bit for bit (pfreg and pfpre add the same
	// products in the same order from registers), with x' in f32 and in
	// int8 (PQ_X8).
	checkQ8 := func(x8 bool) ([]float32, error) {
		wantQ := ffnRef(wq, x0, nw, x8)
		flags, form := 0, ""
		if x8 {
			flags, form = flagX8, "/x8"
		}
		var refQ []float32
		for _, q := range []int{2, 7} {
			chq := chain("ab", false, true)[:q]
			if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&chq[0])), len(chq)*int(unsafe.Sizeof(phase{})))); err != nil {
				return nil, err
			}
			for _, d := range deeps {
				if !d.k.q8 {
					continue
				}
				sl, ok := d.k.fit(chq)
				if !ok {
					return nil, fmt.Errorf("%s: the q8_0 check's chain does not fit (slots of %d bytes a block, %d fit, or too many units a warp)", d.name, sl.shared(), d.k.room)
				}
				if err := reset(); err != nil {
					return nil, err
				}
				if err := d.k.launch(e, dph, len(chq), dbar, flags, sl); err != nil {
					return nil, err
				}
				h, y, err := readBack()
				if err != nil {
					return nil, err
				}
				if q == 2 {
					worst := max(wantQ.checkH(h), wantQ.checkX(&wq[1], x0, h, y))
					if worst > 1 {
						return nil, fmt.Errorf("%s%s: q8_0 FFN error %.2f times its bound", d.name, form, worst)
					}
					fmt.Printf("check %s%s: q8_0 FFN max error %.3g of its bound (ok)\n", d.name, form, worst)
					continue
				}
				out := slices.Concat(h, y)
				if refQ == nil {
					refQ = out
					continue
				}
				if !slices.Equal(bitsOf(refQ), bitsOf(out)) {
					return nil, fmt.Errorf("%s%s: the results of %d q8_0 phases differ from pfeed_q8%s's", d.name, form, q, form)
				}
				fmt.Printf("check %s%s: %d q8_0 phases bit-identical to pfeed_q8%s (ok)\n", d.name, form, q, form)
			}
		}
		return refQ, nil
	}
	f32x, err := checkQ8(false)
	if err != nil {
		return err
	}
	int8x, err := checkQ8(true)
	if err != nil {
		return err
	}
	if slices.Equal(bitsOf(f32x), bitsOf(int8x)) {
		return fmt.Errorf("pfeed_q8: PQ_X8 changed no bit of %d phases", 7)
	}

	// Timing: µs per phase, median of 5 batches of 10 launches of n phases
	// after 10 untimed ones.
	timeIt := func(launch func() error) (float64, error) {
		return evtime.PerCall(e, 10, 5, 10, func(int) error { return launch() })
	}
	// stages times a streaming kernel whole and with stages left out (the
	// difference is what a stage costs; the results are then wrong).
	// base adds a kernel's own flags to each form.
	stages := func(name, kinds, where string, bytes float64, base int, launch func(flags int) error) error {
		for _, sf := range []int{0, streamNoStage, streamNoDot, streamNoStage | streamNoDot} {
			t, err := timeIt(func() error { return launch(base | sf) })
			if err != nil {
				return err
			}
			fmt.Printf("chain %-2s %-3s %-15s blocks %4d stage %-5v dot %-5v %7.3f µs/phase  %5.2f TB/s of weights\n",
				kinds, where, name, e.Info().SMs, sf&streamNoStage == 0, sf&streamNoDot == 0, t/float64(n)*1e6, bytes/t/1e12)
			if kinds == "0" {
				break
			}
		}
		return nil
	}
	// Each weight type's chains: bf16 on every kernel, q8_0 on the
	// producer kernels built for it.
	for _, q8 := range q8s {
		for _, kinds := range []string{"0", "ab", "a", "b"} {
			for _, l2 := range []bool{false, true} {
				if kinds == "0" && (l2 || q8) {
					continue
				}
				ph := chain(kinds, l2, q8)
				if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&ph[0])), len(ph)*int(unsafe.Sizeof(phase{})))); err != nil {
					return err
				}
				var bytes float64
				for _, p := range ph {
					bytes += p.bytes()
				}
				where := "hbm"
				if l2 {
					where = "l2"
				}
				if timed["pstream"] && !q8 {
					if err := stages("pstream", kinds, where, bytes, 0, func(sf int) error { return stream.launch(e, dph, n, dbar, sf, ringSums) }); err != nil {
						return err
					}
				}
				if timed["pwarp"] && !q8 {
					if err := stages("pwarp", kinds, where, bytes, 0, func(sf int) error { return perWarp.launchWarp(e, dph, n, dbar, sf) }); err != nil {
						return err
					}
				}
				for _, d := range deeps {
					if !timed[d.base] || d.k.q8 != q8 {
						continue
					}
					s, ok := d.k.fit(ph)
					if !ok {
						fmt.Printf("chain %-2s %-3s %s: two phases' slots take %d bytes of shared memory a block (%d fit), or more units a warp than it holds: not timed\n",
							kinds, where, d.name, s.shared(), d.k.room)
						continue
					}
					forms := []struct {
						name  string
						flags int
					}{{"", 0}}
					if q8 {
						forms = append(forms, struct {
							name  string
							flags int
						}{"/x8", flagX8})
					}
					for _, fm := range forms {
						for _, a := range arrivals {
							if err := stages(d.name+fm.name+" "+a.name, kinds, where, bytes, a.flags|fm.flags, func(sf int) error { return d.k.launch(e, dph, n, dbar, sf, s) }); err != nil {
								return err
							}
						}
					}
				}
				// The ring alone (no staging, no sums) in more, smaller slots.
				if kinds == "ab" && timed["pstream"] && !q8 {
					for _, g := range ringSweep {
						t, err := timeIt(func() error { return stream.launch(e, dph, n, dbar, streamNoStage|streamNoDot, g) })
						if err != nil {
							return err
						}
						fmt.Printf("chain %-2s %-3s pstream ring %2d slots of %5d bytes (tiles %2d/%d rows) %7.3f µs/phase  %5.2f TB/s of weights\n",
							kinds, where, g.slots, g.slotBytes(), g.tileA, g.tileB, t/float64(n)*1e6, bytes/t/1e12)
					}
				}
				for _, blocks := range blocksList {
					if !timed["pchain"] || q8 {
						break
					}
					for _, flags := range []int{0, flagPrefetch} {
						t, err := timeIt(func() error { return launchOnly(e, fn, dph, n, dbar, blocks, flags) })
						if err != nil {
							return err
						}
						fmt.Printf("chain %-2s %-3s blocks %4d prefetch %-5v red %-5v  %7.3f µs/phase  %5.2f TB/s of weights\n",
							kinds, where, blocks, flags&flagPrefetch != 0, flags&flagRed != 0, t/float64(n)*1e6, bytes/t/1e12)
					}
				}
			}
		}
	}
	return nil
}

// streamKernel is pchain.cu's pstream or pwarp: one block per SM (288 or
// 256 threads) with its ring of weight tiles in opt-in dynamic shared
// memory (streamRing bytes; pwarp's is 8 warps × 3 slots of a down row).
type streamKernel struct {
	fn      cuda.Function
	blocks  int
	threads int
}

// ring is a geometry of pstream's ring (pchain.cu's ps_geom): slots of the
// larger tile, gate|up tiles of tileA rows, down tiles of tileB.
type ring struct{ tileA, tileB, slots int }

func (g ring) slotBytes() int {
	return max(g.tileA*shapes[0].cols*2, g.tileB*shapes[1].cols*2)
}

// ringSums is the geometry the sums are written for (a warp per gate/up
// pair of a 16-row tile, a warp per row of an 8-row one); ringSweep the
// same shared memory in more, smaller slots, which only stream.
var (
	ringSums  = ring{16, 8, 3}
	ringSweep = []ring{ringSums, {8, 4, 6}, {4, 2, 12}, {2, 1, 24}}
)

// pchain.cu's PS_MAX_SLOTS, and the dynamic shared memory pstream asks for
// (every geometry above fits it).
const (
	maxSlots   = 32
	streamRing = 3 * 8 * 3584 * 2
)

func loadStream(e *cuda.Engine, mod cuda.Module, name string, threads int) (streamKernel, error) {
	fn, err := e.Function(mod, name)
	if err != nil {
		return streamKernel{}, err
	}
	if err := e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, streamRing); err != nil {
		return streamKernel{}, fmt.Errorf("%s: %d bytes of dynamic shared memory: %w", name, streamRing, err)
	}
	per, err := e.MaxActiveBlocksPerSM(fn, threads, streamRing)
	if err != nil || per < 1 {
		return streamKernel{}, fmt.Errorf("%s: %d blocks per SM resident (%v)", name, per, err)
	}
	return streamKernel{fn: fn, blocks: e.Info().SMs, threads: threads}, nil
}

// launchWarp launches pwarp on the chain in dph.
func (k streamKernel) launchWarp(e *cuda.Engine, dph cuda.DevPtr, n int, dbar cuda.DevPtr, flags int) error {
	return launchChain(e, k.fn, k.blocks, k.threads, streamRing, dph, n, dbar, flags)
}

// deepKernel is pchain.cu's pdeep, pfeed, pfreg or pfpre: one block an SM,
// each of its first 8 warps' units of two phases in flight in the warp's
// own shared-memory slots; in pdeep a ninth warp arrives at the grid
// barrier, in the others 1, 2 or 4 more warps issue every copy.
type deepKernel struct {
	fn        cuda.Function
	blocks    int
	producers int    // producer warps; 0 for pdeep
	room      int    // dynamic shared memory a block may take beside its static
	held      [8]int // most units of each kind a warp can take into registers (pfreg); 0: any
	q8        bool   // built for q8_0 chains (pchain.cu's *_q8 kernels), not bf16 ones
}

// threads is the block: 8 consumer warps and pdeep's barrier warp or the
// producers.
func (k deepKernel) threads() int { return 256 + 32*max(k.producers, 1) }

// pchain.cu's PF_MAX_THREADS: at most 4 producer warps.
const maxProducers = 4

func loadDeep(e *cuda.Engine, mod cuda.Module, name string, producers int) (deepKernel, error) {
	if producers < 0 || producers > maxProducers || name != "pdeep" && producers == 0 {
		return deepKernel{}, fmt.Errorf("%s: %d producer warps (1 to %d)", name, producers, maxProducers)
	}
	k := deepKernel{producers: producers, blocks: e.Info().SMs}
	fn, err := e.Function(mod, name)
	if err != nil {
		return deepKernel{}, err
	}
	static, err := e.FuncAttribute(fn, cuda.FuncSharedSizeBytes)
	if err != nil {
		return deepKernel{}, err
	}
	room := e.Info().MaxSharedPerBlockOptin - static
	if err := e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, room); err != nil {
		return deepKernel{}, fmt.Errorf("%s: %d bytes of dynamic shared memory: %w", name, room, err)
	}
	// The grid barrier needs every block resident: one an SM with all of it.
	if per, err := e.MaxActiveBlocksPerSM(fn, k.threads(), room); err != nil || per < 1 {
		return deepKernel{}, fmt.Errorf("%s: %d blocks of %d threads an SM resident with %d bytes (%v)", name, per, k.threads(), room, err)
	}
	k.fn, k.room = fn, room
	return k, nil
}

// pfregHeld is what pfreg's and pfpre's b0 and b1 hold: 2 gate|up units,
// 1 down row (pc_unit's H).
var pfregHeld = [8]int{2, 1, 2, 1, 0, 0, 0, 0}

// deepSlots is the deep kernels' slot0 and slot1: 16-byte chunks a warp for the even
// and the odd phases.
type deepSlots [2]int

// shared is the dynamic shared memory of a block's 8 warps' slots.
func (s deepSlots) shared() int { return 8 * (s[0] + s[1]) * 16 }

// fit sizes the slots for chain ph (a warp's most units of a phase of that
// parity, each its stride of chunks) and reports whether they fit a block,
// the kernel's weight type and, for pfreg, its registers.
func (k deepKernel) fit(ph []phase) (deepSlots, bool) {
	var s deepSlots
	nw := k.blocks * 8
	ok := true
	for i, p := range ph {
		if p.rows == 0 {
			continue
		}
		ok = ok && (p.kind >= kindQ8) == k.q8 && p.kind < kind9B
		u := units[p.kind]
		most := (int(p.rows)/u.r + nw - 1) / nw
		s[i%2] = max(s[i%2], most*stride(p.kind))
		if k.held[p.kind] > 0 && most > k.held[p.kind] {
			ok = false
		}
	}
	return s, ok && s.shared() <= k.room
}

// launch launches the kernel on the chain in dph with slots s.
func (k deepKernel) launch(e *cuda.Engine, dph cuda.DevPtr, n int, dbar cuda.DevPtr, flags int, s deepSlots) error {
	return launchChain(e, k.fn, k.blocks, k.threads(), s.shared(), dph, n, dbar, flags, int32(s[0]), int32(s[1]))
}

// arrival is a deep kernel's way to arrive at the grid barrier (pchain.cu's
// PD_RED, PD_RELAXED and PD_NOBAR; the last two are for timing only).
type arrival struct {
	name  string
	flags int
}

var deepArrivals = []arrival{{"fence", 0}, {"red", 4}, {"relaxed", 8}, {"nobar", 16}}

// pchain.cu's PS_NO_STAGE and PS_NO_DOT (pstream, pwarp and the deep
// kernels), and PQ_X8 (the q8_0 kernels' sums on x' in int8).
const (
	streamNoStage = 1
	streamNoDot   = 2
	flagX8        = 32
)

// launch launches pstream on the chain in dph with ring geometry g.
func (k streamKernel) launch(e *cuda.Engine, dph cuda.DevPtr, n int, dbar cuda.DevPtr, flags int, g ring) error {
	if g.slots > maxSlots || g.slots*g.slotBytes() > streamRing {
		return fmt.Errorf("pstream: ring %+v does not fit (%d slots, %d bytes at most)", g, maxSlots, streamRing)
	}
	return launchChain(e, k.fn, k.blocks, k.threads, streamRing, dph, n, dbar, flags,
		int32(g.tileA), int32(g.tileB), int32(g.slots), int32(g.slotBytes()))
}

// pchain.cu's PC_PREFETCH and PC_RED.
const (
	flagPrefetch = 1
	flagRed      = 2
)

// launchOnly launches pchain on the chain already in dph.
func launchOnly(e *cuda.Engine, fn cuda.Function, dph cuda.DevPtr, n int, dbar cuda.DevPtr, blocks, flags int) error {
	return launchChain(e, fn, blocks, 256, 0, dph, n, dbar, flags)
}

// launchChain zeroes the barrier counter and launches one of pchain.cu's
// kernels: (phases, n, bar, flags) and the kernel's own int arguments.
// more: the kernel's parameters after the four every chain kernel takes,
// each an int32 or a cuda.DevPtr.
func launchChain(e *cuda.Engine, fn cuda.Function, blocks, threads, shared int, dph cuda.DevPtr, n int, dbar cuda.DevPtr, flags int, more ...any) error {
	if err := e.MemsetD32Async(dbar, 0, 1); err != nil {
		return err
	}
	return launchOn(e, fn, blocks, threads, shared, false, dph, n, dbar, flags, more...)
}

// launchOn is launchChain on a barrier counter the caller has zeroed, with
// programmatic dependent launch when pdl is set (and the engine uses it).
func launchOn(e *cuda.Engine, fn cuda.Function, blocks, threads, shared int, pdl bool, dph cuda.DevPtr, n int, dbar cuda.DevPtr, flags int, more ...any) error {
	p := cuda.NewParams(4 + len(more))
	p.SetPtr(0, dph)
	p.SetI32(1, int32(n))
	p.SetPtr(2, dbar)
	p.SetI32(3, int32(flags))
	for i, v := range more {
		switch v := v.(type) {
		case int32:
			p.SetI32(4+i, v)
		case cuda.DevPtr:
			p.SetPtr(4+i, v)
		default:
			return fmt.Errorf("launchOn: parameter %d is a %T, not an int32 or a cuda.DevPtr", 4+i, v)
		}
	}
	grid, block := [3]uint32{uint32(blocks), 1, 1}, [3]uint32{uint32(threads), 1, 1}
	if pdl {
		return e.LaunchParamsPDL(fn, grid, block, uint32(shared), p)
	}
	return e.LaunchParams(fn, grid, block, uint32(shared), p)
}

// ffn is the float64 reference of one FFN from x0: the normalised input,
// and per SwiGLU output the gate and up products and their magnitudes.
// With x8 (the q8_0 kernels' PQ_X8) the products are of x' rounded to
// int8 as the kernels round it (quant8), and gq and uq bound what the
// elements at a rounding tie may move them.
type ffn struct {
	xn           []float64 // rmsnorm(x0)·nw
	g, u, gm, um []float64
	x8           bool
	gq, uq       []float64
}

// tieSlack is how near a half x/d must be, in quanta, for a kernel whose x',
// d or 1/d differs from quant8's by a few ulp (its x' comes from rsqrtf and
// its own order of sums) to round it the other way: 127·4·2^-24 ≈ 3e-5 of a
// quantum, with room.
const tieSlack = 1e-4

// quant8 rounds x to PQ_X8's int8 as pq_quantize_x and prg_stage do, in
// f32 (per block of 32: d = max|x|/127, q = round-to-even(x·(1/d))), and
// returns each q·d, each block's d and whether each x·(1/d) lies within
// tieSlack of a half.
func quant8(x []float32) (xq, d []float64, tie []bool) {
	xq, tie = make([]float64, len(x)), make([]bool, len(x))
	for c0 := 0; c0 < len(x); c0 += 32 {
		var m float32
		for _, v := range x[c0 : c0+32] {
			m = max(m, float32(math.Abs(float64(v))))
		}
		dd := m / 127
		var id float32
		if dd > 0 {
			id = 1 / dd
		}
		for c := c0; c < c0+32; c++ {
			v := float64(x[c] * id)
			q := math.RoundToEven(v)
			xq[c] = q * float64(dd)
			tie[c] = math.Abs(math.Abs(v-math.Trunc(v))-0.5) < tieSlack
		}
		d = append(d, float64(dd))
	}
	return xq, d, tie
}

// ffnRef computes gate|up on rmsnorm(x0)·nw (rows 2j and 2j+1 are output
// j's gate and up) in float64; with x8, on that input in f32 rounded by
// quant8.
func ffnRef(ws [2]weights, x0, nw []float32, x8 bool) ffn {
	s := ws[0].s
	inv := invRMS(x0)
	f := ffn{xn: normed(x0, nw, inv), x8: x8}
	if !x8 {
		f.products(&ws[0], f.xn, nil, nil, 1)
		return f
	}
	xf := make([]float32, s.cols)
	for c := range xf {
		xf[c] = float32(float32(x0[c])*float32(inv)) * nw[c] // pc_stage_x's (x·inv)·w
	}
	xq, xd, tie := quant8(xf)
	f.products(&ws[0], xq, xd, tie, 1)
	return f
}

// ffnRefHX is pring_hx's gate|up (step 88): x0·nw in f32 rounded by
// quant8, each product then times 1/rms(x0).
func ffnRefHX(ws [2]weights, x0, nw []float32) ffn {
	inv := invRMS(x0)
	f := ffn{xn: normed(x0, nw, inv), x8: true}
	xf := make([]float32, len(x0))
	for c := range xf {
		xf[c] = x0[c] * nw[c] // prg_quant_xn's x·w
	}
	// No allowance at ties: the kernel rounds x·w exactly as quant8 does
	// (checkXQ holds its int8 to that, bit for bit).
	xq, xd, _ := quant8(xf)
	f.products(&ws[0], xq, xd, nil, inv)
	return f
}

// invRMS is the norm's 1/sqrt(mean(x²) + eps) in float64.
func invRMS(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return 1 / math.Sqrt(ss/float64(len(x))+1e-6)
}

// normed is x·inv·nw in float64.
func normed(x, nw []float32, inv float64) []float64 {
	xn := make([]float64, len(x))
	for c := range xn {
		xn[c] = float64(x[c]) * inv * float64(nw[c])
	}
	return xn
}

// products fills f's gate and up products of gu with x, each times post,
// their magnitudes, and (tie non-nil) what the elements at a rounding tie,
// whose quanta are xd per 32, may move them.
func (f *ffn) products(gu *weights, x, xd []float64, tie []bool, post float64) {
	for row := range gu.s.rows {
		var d, m, q float64
		for c := range gu.s.cols {
			w := gu.at(row, c)
			d += w * x[c]
			m += math.Abs(w * x[c])
			if tie != nil && tie[c] {
				q += math.Abs(w) * xd[c/32]
			}
		}
		d, m, q = d*post, m*post, q*post
		if row%2 == 0 {
			f.g, f.gm, f.gq = append(f.g, d), append(f.gm, m), append(f.gq, q)
		} else {
			f.u, f.um, f.uq = append(f.u, d), append(f.um, m), append(f.uq, q)
		}
	}
}

// rel is the f32 error bound of a kernel product relative to Σ|w·x|: a lane
// adds at most 14 chunks of 8 products in sequence, then a 5-level
// butterfly (≤ 117 roundings, 117·2^-24 ≈ 7e-6); in q8_0 at most 7 chunks
// of 16 products, each chunk's sum scaled and added (7·(16 + 2) + 5 = 131
// roundings, ≈ 7.8e-6; the int8 values and f16 scales are exact in f32);
// with x8 at most 24 chunks (pring's down rows) of an exact integer dot,
// scaled twice and added (24·3 + 5 = 77); the norm's input rounding (a few
// ulp per element) fits in the rest of 1e-5, as does pring_hx's 1/rms
// applied after the sums (its sum of squares ~15 roundings deep, rsqrtf's
// 2 ulp and the multiply: under 1e-6 of the sum).
const rel = 1e-5

// checkH returns the largest error of the SwiGLU outputs over its bound:
// silu(g)·u with g, u off by δg, δu moves by at most 1.1·δg·|u| +
// |silu(g)|·δu + 1.1·δg·δu (silu's slope is below 1.1), plus 8 roundings.
func (f ffn) checkH(h []float32) float64 {
	worst := 0.0
	for j := range h {
		g, u := f.g[j], f.u[j]
		sg := g / (1 + math.Exp(-g))
		dg, du := rel*f.gm[j]+f.gq[j], rel*f.um[j]+f.uq[j]
		bound := 1.1*dg*math.Abs(u) + math.Abs(sg)*du + 1.1*dg*du + 8*0x1p-24*math.Abs(sg*u)
		worst = max(worst, ratio(float64(h[j])-sg*u, bound))
	}
	return worst
}

// checkX returns the largest error of the down phase's x0 + W h (h the
// kernel's own SwiGLU outputs; with x8, h rounded by quant8, which from the
// kernel's own f32 values rounds as it does) over rel·(Σ|w·h| + |x0|).
func (f ffn) checkX(w *weights, x0, h, y []float32) float64 {
	worst := 0.0
	h64 := make([]float64, len(h))
	for c, v := range h {
		h64[c] = float64(v)
	}
	if f.x8 {
		h64, _, _ = quant8(h)
	}
	for i := range w.s.rows {
		d, m := float64(x0[i]), math.Abs(float64(x0[i]))
		for c := range w.s.cols {
			p := w.at(i, c) * h64[c]
			d += p
			m += math.Abs(p)
		}
		worst = max(worst, ratio(float64(y[i])-d, rel*m))
	}
	return worst
}

// ratio is |err|/bound, +Inf for NaN.
func ratio(err, bound float64) float64 {
	r := math.Abs(err) / bound
	if math.IsNaN(r) {
		return math.Inf(1)
	}
	return r
}

var nanF32 = float32(math.NaN())

// devMem is a run's device memory, freed together.
type devMem struct {
	e   *cuda.Engine
	all []cuda.DevPtr
}

func newDevMem(e *cuda.Engine) *devMem { return &devMem{e: e} }

func (m *devMem) alloc(n uint64) (cuda.DevPtr, error) {
	p, err := m.e.Alloc(n)
	if err == nil {
		m.all = append(m.all, p)
	}
	return p, err
}

// upload allocates len(b) bytes and copies b there.
func (m *devMem) upload(b []byte) (cuda.DevPtr, error) {
	p, err := m.alloc(uint64(len(b)))
	if err != nil {
		return 0, err
	}
	return p, m.e.CopyHtoD(p, b)
}

// chain allocates a launch's barrier counter and its n phases.
func (m *devMem) chain(n int) (bar, phases cuda.DevPtr, err error) {
	if bar, err = m.alloc(4); err != nil {
		return 0, 0, err
	}
	phases, err = m.alloc(uint64(n) * uint64(unsafe.Sizeof(phase{})))
	return bar, phases, err
}

func (m *devMem) free() {
	for _, p := range m.all {
		m.e.Free(p)
	}
}

func bitsOf(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, f := range v {
		b[i] = math.Float32bits(f)
	}
	return b
}
