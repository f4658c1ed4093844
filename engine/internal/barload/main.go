// Command barload times a grid barrier alone and while the other block on
// every SM streams memory from HBM or from the L2 (barload.cu): whether a
// persistent kernel's barriers can overlap its weight stream, or slow down
// under it. It is the record behind docs/perf.md step 82:
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/barload.cubin engine/internal/barload/barload.cu
//	CGO_ENABLED=0 go build -o bin/barload ./engine/internal/barload
//	bin/barload -cubin bin/barload.cubin
//
// Every trial is checked before its time counts: the barrier counter ends at
// (barriers + 1) × SMs, one barrier and one streamer block ran on every SM,
// and the XOR of what sampled streamer threads read matches the host's
// recomputation over the same words (so the streamers really read the
// buffer they were given).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/xcmd"
)

const threads = 1024 // BL_THREADS

// barload.cu's ctl words.
const (
	ctlBar   = 0
	ctlSeen  = 2
	ctlLate  = 4
	ctlBadSM = 5
	ctlPerSM = 64
)

func main() {
	cubin := flag.String("cubin", "bin/barload.cubin", "the compiled barload.cu")
	nbar := flag.Int("barriers", 2000, "timed grid barriers per trial")
	reps := flag.Int("reps", 5, "trials per case (the median is reported)")
	mib := flag.Int("mib", 1024, "the HBM case's buffer, MiB (more than the 60 MB L2)")
	l2mib := flag.Int("l2mib", 16, "the L2 case's buffer, MiB (held by the L2)")
	active := flag.String("active", "1024,256,64,16", "streaming threads per streamer block to try (1..1024)")
	flag.Parse()
	if err := run(*cubin, *nbar, *reps, *mib, *l2mib, xcmd.Ints(*active)); err != nil {
		fmt.Fprintln(os.Stderr, "barload:", err)
		os.Exit(1)
	}
}

// streamXor is what streamer thread self reads in n loads from words (16
// bytes each, as 4 little-endian uint32): words self, self + stride, ...,
// wrapping at len(words)/16, XORed together; barload.cu's loop.
func streamXor(words []byte, self, stride uint64, n uint64) [4]uint32 {
	nvec := uint64(len(words) / 16)
	var x [4]uint32
	i := self % nvec
	for range n {
		w := words[16*i : 16*i+16]
		for k := range 4 {
			x[k] ^= binary.LittleEndian.Uint32(w[4*k:])
		}
		i += stride
		if i >= nvec {
			i -= nvec
		}
	}
	return x
}

// trial is one launch's outcome.
type trial struct {
	usPerBarrier float64 // timed span / barriers
	tbs          float64 // streamers' bytes over the timed span (an upper bound: they start before it and stop after)
}

type device struct {
	e                 *cuda.Engine
	fn                cuda.Function
	sms               int
	ctl, counts, xors cuda.DevPtr
	times             cuda.DevPtr
}

// launch runs one trial over buf (nvec words; 0 words: the streamers leave
// at once) and checks it against host, the buffer's bytes.
func (d *device) launch(nbar, active int, buf cuda.DevPtr, host []byte, rng *rand.Rand) (trial, error) {
	e, sms := d.e, d.sms
	nvec := uint64(len(host) / 16)
	stream := int32(0)
	if nvec > 0 {
		stream = 1
	} else {
		nvec = 1 // never read
	}
	if err := e.MemsetD32Async(d.ctl, 0, uint64(ctlPerSM+sms)); err != nil {
		return trial{}, err
	}
	p := cuda.NewParams(10)
	p.SetPtr(0, d.ctl)
	p.SetI32(1, int32(nbar))
	p.SetI32(2, stream)
	p.SetPtr(3, buf)
	p.SetU64(4, nvec)
	p.SetPtr(5, d.counts)
	p.SetPtr(6, d.xors)
	p.SetPtr(7, d.times)
	p.SetI32(8, int32(active))
	p.SetI32(9, int32(sms))
	if err := e.LaunchParams(d.fn, [3]uint32{uint32(2 * sms), 1, 1}, [3]uint32{threads, 1, 1}, 0, p); err != nil {
		return trial{}, err
	}
	if err := e.Synchronize(); err != nil {
		return trial{}, err
	}
	ctl := make([]uint32, ctlPerSM+sms)
	times := make([]uint64, 2)
	S := sms * threads
	counts := make([]uint64, S)
	xors := make([]uint32, 4*S)
	for _, c := range []struct {
		dst []byte
		src cuda.DevPtr
	}{{cuda.AsBytes(ctl), d.ctl}, {cuda.AsBytes(times), d.times}, {cuda.AsBytes(counts), d.counts}, {cuda.AsBytes(xors), d.xors}} {
		if err := e.CopyDtoH(c.dst, c.src); err != nil {
			return trial{}, err
		}
	}
	if want := uint32((nbar + 1) * sms); ctl[ctlBar] != want {
		return trial{}, fmt.Errorf("barrier counter %d, want %d", ctl[ctlBar], want)
	}
	if ctl[ctlBadSM] != 0 {
		return trial{}, fmt.Errorf("%d blocks ran on an SM id past the %d SMs", ctl[ctlBadSM], sms)
	}
	if ctl[ctlLate] != 0 {
		return trial{}, fmt.Errorf("%d streamer blocks started after the timed barriers had begun", ctl[ctlLate])
	}
	if ctl[ctlSeen] != uint32(sms) || ctl[ctlSeen+1] != uint32(sms) {
		return trial{}, fmt.Errorf("%d barrier and %d streamer blocks, want %d of each", ctl[ctlSeen], ctl[ctlSeen+1], sms)
	}
	for sm, n := range ctl[ctlPerSM:] {
		if n != 2 {
			return trial{}, fmt.Errorf("SM %d ran %d blocks, want 2 (one of each role)", sm, n)
		}
	}
	span := float64(times[1]-times[0]) / 1e3 // µs
	if times[1] <= times[0] {
		return trial{}, fmt.Errorf("timer %d .. %d", times[0], times[1])
	}
	t := trial{usPerBarrier: span / float64(nbar)}
	if stream == 0 {
		return t, nil
	}
	var loads uint64
	for s, n := range counts {
		if (n == 0) == (s%threads < active) {
			return trial{}, fmt.Errorf("streamer thread %d (of %d active a block) read %d words", s, active, n)
		}
		loads += n
	}
	t.tbs = float64(16*loads) / span / 1e6
	for range 64 { // sampled active threads: the host recomputation reads as much as they did
		b, th := rng.IntN(sms), rng.IntN(active)
		s := b*threads + th
		want := streamXor(host, uint64(b*active+th), uint64(sms*active), counts[s])
		if got := [4]uint32(xors[4*s : 4*s+4]); got != want {
			return trial{}, fmt.Errorf("streamer thread %d: XOR of its %d loads %08x, host %08x", s, counts[s], got, want)
		}
	}
	return t, nil
}

func run(cubin string, nbar, reps, mib, l2mib int, actives []int) error {
	if nbar < 1 || nbar > 1_000_000 || reps < 1 || mib < 1 || l2mib < 1 || l2mib > mib {
		return fmt.Errorf("-barriers %d (1..1,000,000), -reps %d, -mib %d, -l2mib %d (at most -mib): each must be at least 1", nbar, reps, mib, l2mib)
	}
	for _, a := range actives {
		if a < 1 || a > threads {
			return fmt.Errorf("-active: %d is not in 1..%d", a, threads)
		}
	}
	e, _, fn, err := xcmd.Kernel(cubin, "barload")
	if err != nil {
		return err
	}
	defer e.Close()
	resident, err := e.MaxActiveBlocksPerSM(fn, threads, 0)
	if err != nil {
		return err
	}
	if resident != 2 {
		return fmt.Errorf("%d blocks of %d threads fit an SM, want exactly 2 (one barrier block and one streamer each)", resident, threads)
	}
	sms := e.Info().SMs
	S := sms * threads
	if min(mib, l2mib)<<20/16 <= S {
		return fmt.Errorf("a buffer of %d MiB holds fewer 16-byte words than the %d streamer threads", min(mib, l2mib), S)
	}
	bufs := xcmd.NewBuffers(e)
	defer bufs.Free()
	allocate := bufs.Alloc
	d := &device{e: e, fn: fn, sms: sms}
	for _, b := range []struct {
		p     *cuda.DevPtr
		bytes int
	}{{&d.ctl, 4 * (ctlPerSM + sms)}, {&d.counts, 8 * S}, {&d.xors, 16 * S}, {&d.times, 16}} {
		if *b.p, err = allocate(b.bytes); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	host := make([]byte, mib<<20)
	for i := 0; i < len(host); i += 8 {
		binary.LittleEndian.PutUint64(host[i:], rng.Uint64())
	}
	buf, err := allocate(len(host))
	if err != nil {
		return err
	}
	if err := e.CopyHtoD(buf, host); err != nil {
		return err
	}
	fmt.Printf("barload: %d SMs, one barrier and one streamer block of %d threads on each, %d barriers a trial, median of %d\n", sms, threads, nbar, reps)
	type kase struct {
		name   string
		host   []byte
		active int
	}
	cases := []kase{{"barrier alone", nil, threads}}
	for _, a := range actives {
		cases = append(cases, kase{fmt.Sprintf("beside HBM (%d MiB), %4d a block", mib, a), host, a})
	}
	for _, a := range actives {
		cases = append(cases, kase{fmt.Sprintf("beside L2 (%d MiB), %4d a block", l2mib, a), host[:l2mib<<20], a})
	}
	for _, c := range cases {
		var us, tb []float64
		for range reps + 1 { // the first is a warm-up
			t, err := d.launch(nbar, c.active, buf, c.host, rng)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			us, tb = append(us, t.usPerBarrier), append(tb, t.tbs)
		}
		us, tb = us[1:], tb[1:]
		line := fmt.Sprintf("%-38s %6.3f µs a barrier (min %.3f, max %.3f)", c.name, xcmd.Median(us), slices.Min(us), slices.Max(us))
		if c.host != nil {
			line += fmt.Sprintf(", streamers ≤ %.2f TB/s read", xcmd.Median(tb))
		}
		fmt.Println(line)
	}
	fmt.Println("checks: barrier counts, one block of each role per SM, and 64 sampled streamer threads' XOR against the host: all passed")
	return nil
}
