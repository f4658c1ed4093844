// Command flagchain times a chain of all-to-all nodes captured in a graph, as
// a decode step runs them, with two hand-offs between nodes: the engine's
// griddepcontrol.wait (PDL) and a counter that each producer block releases
// and the consumer's blocks poll (flagchain.cu); each node may also stream a
// slice of weights, loaded before its wait, and let its successor launch at
// its start, after its wait or at its end. It is the record behind
// docs/perf.md step 69:
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/flagchain.cubin engine/internal/flagchain/flagchain.cu
//	CGO_ENABLED=0 go build -o bin/flagchain ./engine/internal/flagchain
//	bin/flagchain -cubin bin/flagchain.cubin
//
// Every form's output is checked word for word against the host before and
// after its timing; the form without any wait is run too, and the check is
// expected to catch it (if it does not, the check proves nothing here and the
// command says so).
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/evtime"
	"github.com/memra-ai/memra/engine/internal/xcmd"
)

// fc_node's modes (flagchain.cu).
const (
	modePDL    = 0
	modeFlag   = 1
	modeNoWait = 2
)

var modeNames = map[int]string{modePDL: "pdl", modeFlag: "flag", modeNoWait: "nowait"}

// fc_node's trigger positions (flagchain.cu's FC_TRIG_*).
const (
	trigStart  = 0
	trigWaited = 1
	trigEnd    = 2
)

var trigNames = map[int]string{trigStart: "start", trigWaited: "waited", trigEnd: "end"}

const (
	threads = 256 // FC_THREADS
	maxWper = 8   // FC_MAX_WPER
)

func main() {
	cubin := flag.String("cubin", "bin/flagchain.cubin", "the compiled flagchain.cu")
	nodes := flag.Int("nodes", 64, "nodes per graph")
	grids := flag.String("grids", "132,264,528", "blocks per node to try")
	words := flag.String("words", "1024", "x's length in 4-byte words (a multiple of 256)")
	wpers := flag.String("wper", "0,4,8", "16-byte weight loads per thread (0..8) to try")
	sleeps := flag.String("sleep", "0,128", "ns between a flag node's polls")
	flag.Parse()
	if err := run(*cubin, *nodes, xcmd.Ints(*grids), xcmd.Ints(*words), xcmd.Ints(*wpers), xcmd.Ints(*sleeps)); err != nil {
		fmt.Fprintln(os.Stderr, "flagchain:", err)
		os.Exit(1)
	}
}

// reference is the chain's output on the host: n nodes from x0, node i's
// block b writing y[j] = 3·x[j] + Σx + wsum[i][b] for its slice of j
// (uint32, wrapping); wsum nil means no weights.
func reference(x0 []uint32, nodes, grid int, wsum [][]uint32) []uint32 {
	x := slices.Clone(x0)
	y := make([]uint32, len(x))
	per := (len(x) + grid - 1) / grid
	for i := range nodes {
		var s uint32
		for _, v := range x {
			s += v
		}
		for j, v := range x {
			y[j] = 3*v + s
			if wsum != nil {
				y[j] += wsum[i][j/per]
			}
		}
		x, y = y, x
	}
	return x
}

// plan is one graph's shape: the mode, where a node triggers its successor,
// blocks per node, x's words, weight loads per thread and the flag nodes'
// poll spacing.
type plan struct{ mode, trig, grid, words, wper, sleep int }

func (p plan) String() string {
	s := fmt.Sprintf("%-6s trig %-6s grid %4d words %5d wper %2d", modeNames[p.mode], trigNames[p.trig], p.grid, p.words, p.wper)
	if p.mode == modeFlag {
		s += fmt.Sprintf(" sleep %3d", p.sleep)
	}
	return s
}

// weightBytes is one node's weights: wper 16-byte loads of every thread.
func (p plan) weightBytes() int { return p.grid * p.wper * threads * 16 }

// validate checks the flags that need no device: the error names the flag
// and the bad entry. run checks -grids against the device.
func validate(nodes int, words, wpers, sleeps []int) error {
	if nodes < 3 {
		return fmt.Errorf("-nodes %d: need at least 3", nodes)
	}
	for _, w := range words {
		if w < threads || w%threads != 0 {
			return fmt.Errorf("-words: %d is not a positive multiple of %d", w, threads)
		}
	}
	for _, w := range wpers {
		if w < 0 || w > maxWper {
			return fmt.Errorf("-wper: %d is not in 0..%d", w, maxWper)
		}
	}
	for _, s := range sleeps {
		if s < 0 {
			return fmt.Errorf("-sleep: %d is not a number of ns ≥ 0", s)
		}
	}
	return nil
}

func run(cubin string, nodes int, grids, words, wpers, sleeps []int) error {
	if err := validate(nodes, words, wpers, sleeps); err != nil {
		return err
	}
	e, _, fn, err := xcmd.Kernel(cubin, "fc_node")
	if err != nil {
		return err
	}
	defer e.Close()
	if !e.PDL() {
		return fmt.Errorf("this device or driver runs no programmatic dependent launch (MEMRA_PDL=0, or before sm_90 / CUDA 12.3): nothing to compare")
	}
	resident, err := e.MaxActiveBlocksPerSM(fn, threads, 0)
	if err != nil {
		return err
	}
	sms := e.Info().SMs
	for _, g := range grids {
		if g < 1 || g > resident*sms {
			return fmt.Errorf("-grids: %d blocks; want 1..%d (%d resident per SM): one wave, so that a node's blocks are resident together, as the engine's matvec grids are", g, resident*sms, resident)
		}
	}

	bufs := xcmd.NewBuffers(e)
	defer bufs.Free()
	allocate := bufs.Alloc
	copyBW, err := copyBandwidth(e, allocate)
	if err != nil {
		return err
	}
	fmt.Printf("flagchain: %d SMs, %d blocks of %d resident per SM, %d nodes a graph, copy %.3f TB/s (read + written)\n", sms, resident, threads, nodes, copyBW/1e12)

	maxWords := slices.Max(words)
	xin, err := allocate(4 * maxWords)
	if err != nil {
		return err
	}
	var buf [2]cuda.DevPtr
	for i := range buf {
		if buf[i], err = allocate(4 * maxWords); err != nil {
			return err
		}
	}
	cnt, err := allocate(4 * nodes)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(69, 1))
	// The weights: node i's at i·stride, so that every node streams its own
	// bytes from HBM (64 nodes of 4.3 MB and more are far past the L2).
	stride := slices.Max(grids) * slices.Max(wpers) * threads * 16
	var wdev cuda.DevPtr
	var whost []uint32
	if stride > 0 {
		whost = make([]uint32, nodes*stride/4)
		for i := range whost {
			whost[i] = r.Uint32()
		}
		if wdev, err = allocate(len(whost) * 4); err != nil {
			return err
		}
		if err := e.CopyHtoD(wdev, cuda.AsBytes(whost)); err != nil {
			return err
		}
	}
	// wsums is the host's Σw_b of every node and block for p, kept per
	// (grid, wper): eight plans share each.
	type wkey struct{ grid, wper int }
	wcache := map[wkey][][]uint32{}
	wsums := func(p plan) [][]uint32 {
		if p.wper == 0 {
			return nil
		}
		if ws, ok := wcache[wkey{p.grid, p.wper}]; ok {
			return ws
		}
		out := make([][]uint32, nodes)
		for i := range out {
			out[i] = make([]uint32, p.grid)
			for b := range out[i] {
				off := (i*stride + b*p.wper*threads*16) / 4
				for _, v := range whost[off : off+p.wper*threads*4] {
					out[i][b] += v
				}
			}
		}
		wcache[wkey{p.grid, p.wper}] = out
		return out
	}

	params := cuda.NewParams(11)
	// capture records the plan's graph: the counters zeroed, then node 0
	// from xin into buf[1], node i from buf[i%2] into buf[(i+1)%2].
	capture := func(p plan) (cuda.GraphExec, error) {
		var x cuda.GraphExec
		err := e.Do(func() error {
			if err := e.BeginCapture(); err != nil {
				return err
			}
			lerr := e.MemsetD32Async(cnt, 0, uint64(nodes))
			for i := 0; i < nodes && lerr == nil; i++ {
				in := buf[i%2]
				if i == 0 {
					in = xin
				}
				var cin, cout cuda.DevPtr
				if i > 0 {
					cin = cnt + cuda.DevPtr(4*(i-1))
				}
				if i < nodes-1 {
					cout = cnt + cuda.DevPtr(4*i)
				}
				params.SetPtr(0, in)
				params.SetPtr(1, buf[(i+1)%2])
				params.SetI32(2, int32(p.words))
				params.SetPtr(3, wdev+cuda.DevPtr(i*stride))
				params.SetI32(4, int32(p.wper))
				params.SetPtr(5, cin)
				params.SetU32(6, uint32(p.grid))
				params.SetPtr(7, cout)
				params.SetI32(8, int32(p.mode))
				params.SetI32(9, int32(p.sleep))
				params.SetI32(10, int32(p.trig))
				lerr = e.LaunchParamsPDL(fn, [3]uint32{uint32(p.grid), 1, 1}, [3]uint32{threads, 1, 1}, 0, params)
			}
			graph, err := e.EndCapture()
			if err == nil {
				defer e.DestroyGraph(graph)
			}
			if lerr != nil || err != nil {
				return fmt.Errorf("capture %v: %w", p, errors.Join(lerr, err))
			}
			if x, err = e.Instantiate(graph); err != nil {
				return fmt.Errorf("instantiate %v: %w", p, err)
			}
			return nil
		})
		return x, err
	}
	// check replays the graph from a fresh random x0 and compares the last
	// node's output with the host's: the number of words that differ.
	check := func(x cuda.GraphExec, p plan, ws [][]uint32) (int, error) {
		x0 := make([]uint32, p.words)
		for i := range x0 {
			x0[i] = r.Uint32()
		}
		if err := e.CopyHtoD(xin, cuda.AsBytes(x0)); err != nil {
			return 0, err
		}
		if err := e.GraphLaunch(x); err != nil {
			return 0, err
		}
		got := make([]uint32, p.words)
		if err := e.CopyDtoH(cuda.AsBytes(got), buf[nodes%2]); err != nil {
			return 0, err
		}
		bad := 0
		for j, v := range reference(x0, nodes, p.grid, ws) {
			if got[j] != v {
				bad++
			}
		}
		return bad, nil
	}

	var plans []plan
	for _, w := range words {
		for _, wp := range wpers {
			for _, g := range grids {
				plans = append(plans, plan{mode: modeNoWait, trig: trigStart, grid: g, words: w, wper: wp})
				for _, t := range []int{trigStart, trigWaited, trigEnd} {
					plans = append(plans, plan{mode: modePDL, trig: t, grid: g, words: w, wper: wp})
				}
				for _, t := range []int{trigStart, trigWaited} {
					for _, s := range sleeps {
						plans = append(plans, plan{mode: modeFlag, trig: t, grid: g, words: w, wper: wp, sleep: s})
					}
				}
			}
		}
	}
	var failed []string
	for _, p := range plans {
		x, err := capture(p)
		if err != nil {
			return err
		}
		ws := wsums(p)
		t, bad, err := timeAndCheck(e, x, func(x cuda.GraphExec) (int, error) { return check(x, p, ws) })
		e.DestroyGraphExec(x)
		if err != nil {
			return err
		}
		t /= float64(nodes)
		bytes := ""
		if p.wper > 0 {
			// The weights at copy bandwidth, the bench's roofline: bytes /
			// copy bandwidth counted read + written (H200: ~4.19 TB/s
			// copy, 4.11 read-only streaming).
			atCopy := float64(p.weightBytes()) / copyBW
			bytes = fmt.Sprintf("  %5.2f MB at copy %6.3f µs, excess %6.3f", float64(p.weightBytes())/1e6, atCopy*1e6, (t-atCopy)*1e6)
		}
		switch {
		case p.mode == modeNoWait:
			verdict := "the check caught it (ok)"
			if bad == 0 {
				verdict = "the check did NOT catch it: it proves little at this shape"
			}
			fmt.Printf("%v: %7.3f µs/node%s  no wait: %d of %d checks wrong, %s\n", p, t*1e6, bytes, bad, checks, verdict)
		case bad > 0:
			failed = append(failed, p.String())
			fmt.Printf("%v: %7.3f µs/node%s  FAILED: %d of %d checks wrong\n", p, t*1e6, bytes, bad, checks)
		default:
			fmt.Printf("%v: %7.3f µs/node%s  (%d checks ok)\n", p, t*1e6, bytes, checks)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("wrong outputs from %s", strings.Join(failed, "; "))
	}
	return nil
}

// checks is how many fresh inputs each form is checked on: half before its
// timing, half after.
const checks = 8

// timeAndCheck checks a graph on checks/2 fresh inputs, times it (seconds a
// replay: the median of 7 batches of 20 replays after 10 untimed ones), and
// checks it again; bad counts the checks with any wrong word.
func timeAndCheck(e *cuda.Engine, x cuda.GraphExec, check func(cuda.GraphExec) (int, error)) (t float64, bad int, err error) {
	for i := range checks {
		if i == checks/2 {
			if t, err = evtime.PerCall(e, 10, 7, 20, func(int) error { return e.GraphLaunch(x) }); err != nil {
				return 0, 0, err
			}
		}
		n, err := check(x)
		if err != nil {
			return 0, 0, err
		}
		if n > 0 {
			bad++
		}
	}
	return t, bad, nil
}

// copyBandwidth is a 1 GiB device-to-device copy's bytes read and written a
// second (median of 10 after 2 untimed), the bench's ceiling.
func copyBandwidth(e *cuda.Engine, allocate func(int) (cuda.DevPtr, error)) (float64, error) {
	const size = 1 << 30
	src, err := allocate(size)
	if err != nil {
		return 0, err
	}
	dst, err := allocate(size)
	if err != nil {
		return 0, err
	}
	if err := e.MemsetD32Async(src, 0x9e3779b9, size/4); err != nil {
		return 0, err
	}
	t, err := evtime.PerCall(e, 2, 10, 1, func(int) error { return e.CopyDtoDAsync(dst, src, size) })
	if err != nil {
		return 0, err
	}
	return 2 * size / t, nil
}
