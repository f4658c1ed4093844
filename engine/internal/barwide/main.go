// Command barwide times a grid barrier alone against the blocks that arrive
// at it: k blocks an SM (all resident), in the three forms of barwide.cu
// (flat counter, generation, two-level). It is the record behind
// docs/perf.md step 84:
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/barwide.cubin engine/internal/barwide/barwide.cu
//	CGO_ENABLED=0 go build -o bin/barwide ./engine/internal/barwide
//	bin/barwide -cubin bin/barwide.cubin
//
// Every trial is checked before its time counts: the counters end where
// nbar + 1 completed barriers leave them (wantCounters).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/xcmd"
)

const threads = 256 // BW_THREADS

// barwide.cu's ctl words.
const (
	ctlLine  = 32
	ctlTop   = 0
	ctlCount = 32
	ctlGen   = 64
	ctlGroup = 96
)

// The barrier forms (barwide.cu's kind).
const (
	kindFlat = iota
	kindGeneration
	kindTwoLevel
)

var kindNames = []string{"flat", "generation", "two-level"}

func main() {
	cubin := flag.String("cubin", "bin/barwide.cubin", "the compiled barwide.cu")
	nbar := flag.Int("barriers", 2000, "timed grid barriers per trial")
	reps := flag.Int("reps", 5, "trials per case (the median is reported)")
	perSM := flag.String("per-sm", "1,2,3,4", "blocks an SM to try")
	groups := flag.String("groups", "4,8,16", "two-level: blocks a group to try")
	flag.Parse()
	if err := run(*cubin, *nbar, *reps, xcmd.Ints(*perSM), xcmd.Ints(*groups)); err != nil {
		fmt.Fprintln(os.Stderr, "barwide:", err)
		os.Exit(1)
	}
}

// kase is one barrier form at one grid.
type kase struct {
	blocks, kind, group int
}

func (c kase) String() string {
	if c.kind == kindTwoLevel {
		return fmt.Sprintf("%4d blocks, %s (groups of %d)", c.blocks, kindNames[c.kind], c.group)
	}
	return fmt.Sprintf("%4d blocks, %s", c.blocks, kindNames[c.kind])
}

// ctlWords is how many ctl words case c uses.
func ctlWords(c kase) int {
	groups := (c.blocks + c.group - 1) / c.group
	return ctlGroup + groups*ctlLine
}

// wantCounters maps each ctl word case c leaves nonzero after nbar + 1
// barriers to its value; every other word stays zero.
func wantCounters(c kase, nbar int) map[int]uint32 {
	n := uint32(nbar + 1)
	switch c.kind {
	case kindFlat:
		return map[int]uint32{ctlTop: n * uint32(c.blocks)}
	case kindGeneration:
		return map[int]uint32{ctlGen: n} // the count is back at zero
	}
	groups := (c.blocks + c.group - 1) / c.group
	out := map[int]uint32{ctlTop: n * uint32(groups)}
	for g := range groups {
		out[ctlGroup+g*ctlLine] = n * uint32(min(c.group, c.blocks-g*c.group))
	}
	return out
}

type device struct {
	e          *cuda.Engine
	fn         cuda.Function
	ctl, times cuda.DevPtr
}

// launch runs case c once and returns µs a barrier.
func (d *device) launch(c kase, nbar int) (float64, error) {
	e := d.e
	words := ctlWords(c)
	if err := e.MemsetD32Async(d.ctl, 0, uint64(words)); err != nil {
		return 0, err
	}
	p := cuda.NewParams(5)
	p.SetPtr(0, d.ctl)
	p.SetI32(1, int32(nbar))
	p.SetI32(2, int32(c.kind))
	p.SetI32(3, int32(max(c.group, 1)))
	p.SetPtr(4, d.times)
	if err := e.LaunchParams(d.fn, [3]uint32{uint32(c.blocks), 1, 1}, [3]uint32{threads, 1, 1}, 0, p); err != nil {
		return 0, err
	}
	if err := e.Synchronize(); err != nil {
		return 0, err
	}
	ctl := make([]uint32, words)
	times := make([]uint64, 2)
	if err := e.CopyDtoH(cuda.AsBytes(ctl), d.ctl); err != nil {
		return 0, err
	}
	if err := e.CopyDtoH(cuda.AsBytes(times), d.times); err != nil {
		return 0, err
	}
	want := wantCounters(c, nbar)
	for i, v := range ctl {
		if v != want[i] {
			return 0, fmt.Errorf("ctl word %d is %d, want %d", i, v, want[i])
		}
	}
	if times[1] <= times[0] {
		return 0, fmt.Errorf("timer %d .. %d", times[0], times[1])
	}
	return float64(times[1]-times[0]) / 1e3 / float64(nbar), nil
}

func run(cubin string, nbar, reps int, perSM, groups []int) error {
	if nbar < 1 || nbar > 1_000_000 || reps < 1 {
		return fmt.Errorf("-barriers %d (1..1,000,000), -reps %d: each must be at least 1", nbar, reps)
	}
	e, _, fn, err := xcmd.Kernel(cubin, "barwide")
	if err != nil {
		return err
	}
	defer e.Close()
	resident, err := e.MaxActiveBlocksPerSM(fn, threads, 0)
	if err != nil {
		return err
	}
	for _, k := range perSM {
		if k < 1 || k > resident {
			return fmt.Errorf("-per-sm: %d is not in 1..%d (the blocks of %d threads an SM holds)", k, resident, threads)
		}
	}
	for _, g := range groups {
		if g < 2 {
			return fmt.Errorf("-groups: %d is not at least 2", g)
		}
	}
	sms := e.Info().SMs
	var cases []kase
	for _, k := range perSM {
		b := k * sms
		cases = append(cases, kase{b, kindFlat, 1}, kase{b, kindGeneration, 1})
		for _, g := range groups {
			cases = append(cases, kase{b, kindTwoLevel, g})
		}
	}
	most := 0
	for _, c := range cases {
		most = max(most, ctlWords(c))
	}
	bufs := xcmd.NewBuffers(e)
	defer bufs.Free()
	d := &device{e: e, fn: fn}
	if d.ctl, err = bufs.Alloc(4 * most); err != nil {
		return err
	}
	if d.times, err = bufs.Alloc(16); err != nil {
		return err
	}
	fmt.Printf("barwide: %d SMs, blocks of %d threads, %d barriers a trial, median of %d\n", sms, threads, nbar, reps)
	for _, c := range cases {
		var us []float64
		for range reps + 1 { // the first is a warm-up
			t, err := d.launch(c, nbar)
			if err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
			us = append(us, t)
		}
		us = us[1:]
		fmt.Printf("%-40s %6.3f µs a barrier (min %.3f, max %.3f)\n", c, xcmd.Median(us), slices.Min(us), slices.Max(us))
	}
	fmt.Println("checks: every counter where nbar + 1 completed barriers leave it, in every trial: all passed")
	return nil
}
