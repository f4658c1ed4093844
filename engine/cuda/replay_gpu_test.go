package cuda

import (
	"errors"
	"strings"
	"testing"
)

// TestGPURecordReplay records launches without running them, replays them
// as a graph, and replays a recording of the same kernels with other
// scalars and grids on that graph, bit for bit the eager results; a
// recording of other launches is refused, and so is any stream work
// but a Params launch while recording.
func TestGPURecordReplay(t *testing.T) {
	e := gpuEngine(t)
	const n, steps = 4096, 12
	k := newAxpb(t, e, n, 3)
	type step struct {
		a, b   float32
		n      int    // elements the launch covers: its grid
		shared uint32 // dynamic shared memory (the kernel takes none; a node update may change it)
	}
	// want is x after the steps, each over its first s.n elements.
	want := func(ss []step) []float32 {
		out := append([]float32(nil), k.host...)
		for _, s := range ss {
			for i := range s.n {
				out[i] = float32(s.a*out[i]) + s.b
			}
		}
		return out
	}
	record := func(r *Recording, ss []step) {
		t.Helper()
		err := e.RecordLaunches(r, func() error {
			for _, s := range ss {
				k.n, k.shared = s.n, s.shared
				if err := k.launch(k.y, k.y, s.a, s.b); err != nil {
					return err
				}
			}
			return nil
		})
		k.n, k.shared = n, 0
		if err != nil {
			t.Fatal(err)
		}
	}
	run := func(p *Replay, r *Recording, ss []step, what string) {
		t.Helper()
		if err := e.CopyDtoDAsync(k.y, k.x, 4*n); err != nil {
			t.Fatal(err)
		}
		if err := p.Launch(r); err != nil {
			t.Fatal(err)
		}
		sameBits(t, what, k.download(t, k.y), want(ss))
	}
	first := make([]step, steps)
	for i := range first {
		first[i] = step{0.9, 0.01 * float32(i+1), n, 0}
	}
	if err := e.CopyDtoDAsync(k.y, k.x, 4*n); err != nil {
		t.Fatal(err)
	}
	var r Recording
	record(&r, first)
	if r.Len() != steps {
		t.Fatalf("recorded %d launches, want %d", r.Len(), steps)
	}
	sameBits(t, "y after recording", k.download(t, k.y), k.host) // nothing ran
	p, err := e.NewReplay(&r)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Destroy()
	run(p, &r, first, "first replay")
	if p.Updates != 0 {
		t.Fatalf("the captured recording updated %d nodes", p.Updates)
	}

	// Four launches differ: two in a scalar, one in its grid too, one in
	// its shared memory alone.
	second := append([]step(nil), first...)
	second[2].a = 0.5
	second[7].b = -0.25
	second[9] = step{0.75, 0.125, 300, 0} // 2 blocks instead of 16
	second[11].shared = 1024
	record(&r, second)
	if !p.Matches(&r) {
		t.Fatal("a recording of the same kernels does not match")
	}
	run(p, &r, second, "updated replay")
	if p.Updates != 4 {
		t.Fatalf("updated %d nodes, want 4", p.Updates)
	}
	run(p, &r, second, "replay again")
	if p.Updates != 4 {
		t.Fatalf("an unchanged recording updated %d more nodes", p.Updates-4)
	}

	record(&r, first[:steps-1])
	if p.Matches(&r) {
		t.Fatal("a recording of fewer launches matches")
	}
	if err := p.Launch(&r); err == nil {
		t.Fatal("a replay launched a recording of other launches")
	}

	// Other stream work fails the recording, even where fn drops the error.
	var inner Recording
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"cuMemsetD8Async", func() error { return e.MemsetD8Async(k.y, 0, 4) }},
		{"cuMemcpyDtoDAsync", func() error { return e.CopyDtoDAsync(k.y, k.x, 4) }},
		{"Synchronize", e.Synchronize},
		{"alloc", func() error { _, err := e.Alloc(256); return err }},
		{"a graph launch", func() error { return e.GraphLaunch(p.x) }},
		{"Replay.Launch", func() error { return p.Launch(&r) }},
		{"BeginCapture", e.BeginCapture},
		{"RecordLaunches", func() error { return e.RecordLaunches(&inner, func() error { return k.launch(k.y, k.y, 1, 0) }) }},
		{"a launch without a Params block", func() error {
			return e.Launch(k.fn, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, k.p.ptrs)
		}},
	} {
		err := e.RecordLaunches(&r, func() error { _ = c.do(); return nil })
		if err == nil || !strings.Contains(err.Error(), c.what) {
			t.Errorf("%s while recording: %v", c.what, err)
		}
		if _, err := e.NewReplay(&r); err == nil {
			t.Errorf("%s while recording: a replay of the failed recording was made", c.what)
		}
	}
	if inner.Len() != 0 {
		t.Errorf("a recording within a recording noted %d launches", inner.Len())
	}
	// Nor is there recording inside a capture.
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	err = e.RecordLaunches(&r, func() error { return nil })
	if g, cerr := e.EndCapture(); cerr == nil {
		_ = e.DestroyGraph(g)
	}
	if err == nil {
		t.Error("RecordLaunches during a capture succeeded")
	}
	// The engine is itself again: launches run.
	run(p, func() *Recording { record(&r, second); return &r }(), second, "replay after refusals")
	if err := k.launch(k.y, k.x, 1, 0); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "an eager launch after recording", k.download(t, k.y), k.host)
	if err := e.RecordLaunches(&r, func() error { return errors.New("fn failed") }); err == nil {
		t.Fatal("RecordLaunches dropped fn's error")
	}
}
