// Command barwide times a grid barrier alone against the blocks that arrive
// at it: k blocks an SM (all resident), in the four forms of barwide.cu
// (flat counter, generation on two lines or on one, two-level). It is the
// record behind docs/perf.md step 84:
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/barwide.cubin engine/internal/barwide/barwide.cu
//	CGO_ENABLED=0 go build -o bin/barwide ./engine/internal/barwide
//	bin/barwide -cubin bin/barwide.cubin
//
// Every trial is checked before its time counts: the counters end where
// nbar + 1 completed barriers leave them (wantCounters), and every SM held
// the same number of blocks. Before each case's timed trials an untimed one
// checks that no block passed a barrier before its neighbour had arrived.
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
	ctlSame  = 96
	ctlGroup = 128
)

// The barrier forms (barwide.cu's kind).
const (
	kindFlat = iota
	kindGeneration
	kindTwoLevel
	kindSameLine
)

var kindNames = []string{"flat", "generation", "two-level", "generation, one line"}

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

// groups is how many groups of c.group blocks the grid makes (the last may
// be short).
func (c kase) groups() int { return (c.blocks + c.group - 1) / c.group }

// ctlWords is how many ctl words case c uses.
func ctlWords(c kase) int { return ctlGroup + c.groups()*ctlLine }

// wantCounters maps each ctl word case c leaves nonzero after nbar + 1
// barriers to its value; every other word stays zero.
func wantCounters(c kase, nbar int) map[int]uint32 {
	n := uint32(nbar + 1)
	switch c.kind {
	case kindFlat:
		return map[int]uint32{ctlTop: n * uint32(c.blocks)}
	case kindGeneration:
		return map[int]uint32{ctlGen: n} // the count is back at zero
	case kindSameLine:
		return map[int]uint32{ctlSame + 1: n}
	}
	out := map[int]uint32{ctlTop: n * uint32(c.groups())}
	for g := range c.groups() {
		out[ctlGroup+g*ctlLine] = n * uint32(min(c.group, c.blocks-g*c.group))
	}
	return out
}

type device struct {
	e                             *cuda.Engine
	fn                            cuda.Function
	sms                           int
	ctl, times, persm, epoch, bad cuda.DevPtr
}

// launch runs case c once and returns µs a barrier; with verify, the
// neighbours' epochs are checked too.
func (d *device) launch(c kase, nbar int, verify bool) (float64, error) {
	e := d.e
	words := ctlWords(c)
	for _, z := range []struct {
		p cuda.DevPtr
		n int
	}{{d.ctl, words}, {d.persm, d.sms}, {d.epoch, c.blocks}, {d.bad, 1}} {
		if err := e.MemsetD32Async(z.p, 0, uint64(z.n)); err != nil {
			return 0, err
		}
	}
	p := cuda.NewParams(10)
	p.SetPtr(0, d.ctl)
	p.SetI32(1, int32(nbar))
	p.SetI32(2, int32(c.kind))
	p.SetI32(3, int32(max(c.group, 1)))
	p.SetPtr(4, d.times)
	p.SetPtr(5, d.persm)
	p.SetI32(6, int32(d.sms))
	p.SetI32(7, b2i(verify))
	p.SetPtr(8, d.epoch)
	p.SetPtr(9, d.bad)
	if err := e.LaunchParams(d.fn, [3]uint32{uint32(c.blocks), 1, 1}, [3]uint32{threads, 1, 1}, 0, p); err != nil {
		return 0, err
	}
	if err := e.Synchronize(); err != nil {
		return 0, err
	}
	ctl := make([]uint32, words)
	times := make([]uint64, 2)
	persm := make([]uint32, d.sms)
	bad := make([]uint32, 1)
	for _, c := range []struct {
		dst []byte
		src cuda.DevPtr
	}{{cuda.AsBytes(ctl), d.ctl}, {cuda.AsBytes(times), d.times}, {cuda.AsBytes(persm), d.persm}, {cuda.AsBytes(bad), d.bad}} {
		if err := e.CopyDtoH(c.dst, c.src); err != nil {
			return 0, err
		}
	}
	if bad[0] != 0 {
		return 0, fmt.Errorf("%d times a block passed a barrier before its neighbour had arrived", bad[0])
	}
	for sm, n := range persm {
		if int(n) != c.blocks/d.sms {
			return 0, fmt.Errorf("SM %d held %d blocks, want %d", sm, n, c.blocks/d.sms)
		}
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
	sms := e.Info().SMs
	for _, g := range groups {
		if g < 2 || g > sms {
			return fmt.Errorf("-groups: %d is not in 2..%d (the SMs)", g, sms)
		}
	}
	var cases []kase
	for _, k := range perSM {
		b := k * sms
		cases = append(cases, kase{b, kindFlat, 1}, kase{b, kindGeneration, 1}, kase{b, kindSameLine, 1})
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
	d := &device{e: e, fn: fn, sms: sms}
	for _, b := range []struct {
		p     *cuda.DevPtr
		bytes int
	}{{&d.ctl, 4 * most}, {&d.times, 16}, {&d.persm, 4 * sms}, {&d.epoch, 4 * slices.Max(perSM) * sms}, {&d.bad, 4}} {
		if *b.p, err = bufs.Alloc(b.bytes); err != nil {
			return err
		}
	}
	fmt.Printf("barwide: %d SMs, blocks of %d threads, %d barriers a trial, median of %d\n", sms, threads, nbar, reps)
	for _, c := range cases {
		if _, err := d.launch(c, nbar, true); err != nil {
			return fmt.Errorf("%s (verify): %w", c, err)
		}
		var us []float64
		for range reps + 1 { // the first is a warm-up
			t, err := d.launch(c, nbar, false)
			if err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
			us = append(us, t)
		}
		us = us[1:]
		fmt.Printf("%-40s %6.3f µs a barrier (min %.3f, max %.3f)\n", c, xcmd.Median(us), slices.Min(us), slices.Max(us))
	}
	fmt.Println("checks: every counter where nbar + 1 completed barriers leave it and every SM holding k blocks, in every trial; no block through a barrier before its neighbour arrived, in an untimed trial a case: all passed")
	return nil
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
