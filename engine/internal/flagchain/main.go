// Command flagchain times a chain of all-to-all nodes captured in a graph, as
// a decode step runs them, with two hand-offs between nodes: the engine's
// griddepcontrol.wait (PDL) and a counter that each producer block releases
// and the consumer's blocks poll (flagchain.cu). It is the record behind
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
	"strconv"
	"strings"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/evtime"
)

// fc_node's modes (flagchain.cu).
const (
	modePDL    = 0
	modeFlag   = 1
	modeNoWait = 2
)

// fc_node's opts bits for modeFlag (flagchain.cu).
const (
	optLate    = 1 // launch dependents after the wait
	optRelease = 2 // post with red.release.gpu
)

var modeNames = map[int]string{modePDL: "pdl", modeFlag: "flag", modeNoWait: "nowait"}

func main() {
	cubin := flag.String("cubin", "bin/flagchain.cubin", "the compiled flagchain.cu")
	nodes := flag.Int("nodes", 64, "nodes per graph")
	grids := flag.String("grids", "1,132,264,528", "blocks per node to try")
	words := flag.String("words", "1024,4096", "x's length in 4-byte words (a multiple of 256)")
	sleeps := flag.String("sleep", "0,32", "ns between a flag node's polls")
	opts := flag.String("opts", "0,1,2,3", "flag forms to try: bit 1 launches dependents after the wait, bit 2 posts with red.release")
	flag.Parse()
	if err := run(*cubin, *nodes, ints(*grids), ints(*words), ints(*sleeps), ints(*opts)); err != nil {
		fmt.Fprintln(os.Stderr, "flagchain:", err)
		os.Exit(1)
	}
}

// ints parses a comma-separated list; a bad entry becomes -1, which run rejects.
func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			v = -1
		}
		out = append(out, v)
	}
	return out
}

// reference is the chain's output on the host: n nodes from x0, each
// y[j] = 3·x[j] + Σx (uint32, wrapping).
func reference(x0 []uint32, nodes int) []uint32 {
	x := slices.Clone(x0)
	y := make([]uint32, len(x))
	for range nodes {
		var s uint32
		for _, v := range x {
			s += v
		}
		for j, v := range x {
			y[j] = 3*v + s
		}
		x, y = y, x
	}
	return x
}

// plan is one graph's shape: the mode, blocks per node, x's words and the
// flag nodes' poll spacing and opts.
type plan struct{ mode, grid, words, sleep, opts int }

func (p plan) String() string {
	s := fmt.Sprintf("%-6s grid %4d words %5d", modeNames[p.mode], p.grid, p.words)
	if p.mode == modeFlag {
		s += fmt.Sprintf(" sleep %3d ns late %-5v release %-5v", p.sleep, p.opts&optLate != 0, p.opts&optRelease != 0)
	}
	return s
}

func run(cubin string, nodes int, grids, words, sleeps, opts []int) error {
	if nodes < 3 {
		return fmt.Errorf("-nodes %d: need at least 3", nodes)
	}
	for _, w := range words {
		if w < 256 || w%256 != 0 {
			return fmt.Errorf("-words: %d is not a positive multiple of 256", w)
		}
	}
	for _, s := range sleeps {
		if s < 0 {
			return fmt.Errorf("-sleep: want ns ≥ 0, got %v", sleeps)
		}
	}
	for _, o := range opts {
		if o < 0 || o > optLate|optRelease {
			return fmt.Errorf("-opts: want 0..3, got %v", opts)
		}
	}
	e, err := cuda.New(0)
	if err != nil {
		return err
	}
	defer e.Close()
	if !e.PDL() {
		return fmt.Errorf("this device or driver runs no programmatic dependent launch (MEMRA_PDL=0, or before sm_90 / CUDA 12.3): nothing to compare")
	}
	img, err := os.ReadFile(cubin)
	if err != nil {
		return err
	}
	mod, err := e.LoadModule(img)
	if err != nil {
		return fmt.Errorf("%s: %w", cubin, err)
	}
	fn, err := e.Function(mod, "fc_node")
	if err != nil {
		return err
	}
	resident, err := e.MaxActiveBlocksPerSM(fn, 256, 0)
	if err != nil {
		return err
	}
	sms := e.Info().SMs
	for _, g := range grids {
		if g < 1 || g > resident*sms {
			return fmt.Errorf("-grids: %d blocks; want 1..%d (%d resident per SM): a flag node's blocks must all be resident, or its predecessor's may never run", g, resident*sms, resident)
		}
	}
	fmt.Printf("flagchain: %d SMs, %d blocks of 256 resident per SM, %d nodes a graph\n", sms, resident, nodes)

	var alloc []cuda.DevPtr
	defer func() {
		for _, p := range alloc {
			e.Free(p)
		}
	}()
	allocate := func(bytes int) (cuda.DevPtr, error) {
		p, err := e.Alloc(uint64(bytes))
		if err == nil {
			alloc = append(alloc, p)
		}
		return p, err
	}
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

	params := cuda.NewParams(9)
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
				params.SetPtr(3, cin)
				params.SetU32(4, uint32(p.grid))
				params.SetPtr(5, cout)
				params.SetI32(6, int32(p.mode))
				params.SetI32(7, int32(p.sleep))
				params.SetI32(8, int32(p.opts))
				lerr = e.LaunchParamsPDL(fn, [3]uint32{uint32(p.grid), 1, 1}, [3]uint32{256, 1, 1}, 0, params)
			}
			graph, err := e.EndCapture()
			if err == nil {
				defer e.DestroyGraph(graph)
			}
			if lerr != nil || err != nil {
				return fmt.Errorf("capture %v: %w", p, errors.Join(lerr, err))
			}
			x, err = e.Instantiate(graph)
			return err
		})
		return x, err
	}
	// check replays the graph from a fresh random x0 and compares the last
	// node's output with the host's: the number of words that differ.
	check := func(x cuda.GraphExec, p plan) (int, error) {
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
		for j, v := range reference(x0, nodes) {
			if got[j] != v {
				bad++
			}
		}
		return bad, nil
	}

	var plans []plan
	for _, w := range words {
		for _, g := range grids {
			plans = append(plans, plan{mode: modeNoWait, grid: g, words: w}, plan{mode: modePDL, grid: g, words: w})
			for _, o := range opts {
				for _, s := range sleeps {
					plans = append(plans, plan{mode: modeFlag, grid: g, words: w, sleep: s, opts: o})
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
		t, bad, err := timeAndCheck(e, x, p, check)
		t /= float64(nodes)
		e.DestroyGraphExec(x)
		if err != nil {
			return err
		}
		switch {
		case p.mode == modeNoWait:
			verdict := "the check caught it (ok)"
			if bad == 0 {
				verdict = "the check did NOT catch it: it proves little at this shape"
			}
			fmt.Printf("%v: %8.3f µs/node  no wait: %d of %d checks had wrong words, %s\n", p, t*1e6, bad, checks, verdict)
		case bad > 0:
			failed = append(failed, p.String())
			fmt.Printf("%v: %8.3f µs/node  FAILED: %d of %d checks had wrong words\n", p, t*1e6, bad, checks)
		default:
			fmt.Printf("%v: %8.3f µs/node  (%d checks ok)\n", p, t*1e6, checks)
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

// timeAndCheck checks p's graph on checks/2 fresh inputs, times it (µs per
// node: the median of 7 batches of 20 replays after 10 untimed ones), and
// checks it again; bad counts the checks with any wrong word.
func timeAndCheck(e *cuda.Engine, x cuda.GraphExec, p plan, check func(cuda.GraphExec, plan) (int, error)) (t float64, bad int, err error) {
	for i := range checks {
		if i == checks/2 {
			if t, err = evtime.PerCall(e, 10, 7, 20, func(int) error { return e.GraphLaunch(x) }); err != nil {
				return 0, 0, err
			}
		}
		n, err := check(x, p)
		if err != nil {
			return 0, 0, err
		}
		if n > 0 {
			bad++
		}
	}
	return t, bad, nil
}
