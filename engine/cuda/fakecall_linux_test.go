//go:build linux && (amd64 || arm64)

// Tests whose driver functions are purego callbacks standing in for
// libcuda's, to reach error paths a real driver seldom takes.

package cuda

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// TestMaxActiveBlocksPerSMRange: a block size or dynamic shared memory that
// the driver's int and size_t cannot carry is refused, naming it, as
// SetFuncAttribute refuses its value. Converted unchecked, a block of
// 2^32+128 threads reached the driver as 128 and came back as 128's
// occupancy with no error, and -1 byte of shared memory as 2^64-1. The fake
// driver (a purego callback) grants 2,048 threads an SM.
func TestMaxActiveBlocksPerSMRange(t *testing.T) {
	e := fakeEngine(t)
	var calls int
	occupancy := purego.NewCallback(func(n *int32, f, block, shared uintptr) uintptr {
		calls++
		*n = int32(2048 / max(int32(block), 1))
		return 0
	})
	if err := e.Do(func() error { e.d.p.cuOccupancyMaxActiveBlocksPerMultiprocessor = occupancy; return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := e.MaxActiveBlocksPerSM(1, 256, 1024); n != 8 || err != nil {
		t.Fatalf("MaxActiveBlocksPerSM(256 threads, 1 KiB) = %d, %v; want 8", n, err)
	}
	for _, c := range []struct {
		block, shared int
		want          string
	}{
		{1<<32 + 128, 0, "block of 4294967424 threads"},
		{math.MaxInt32 + 1, 0, "block of 2147483648 threads"},
		{-256, 0, "block of -256 threads"},
		{256, -1, "-1 bytes of dynamic shared memory"},
	} {
		calls = 0
		n, err := e.MaxActiveBlocksPerSM(1, c.block, c.shared)
		if err == nil || !strings.Contains(err.Error(), c.want) || n != 0 || calls != 0 {
			t.Errorf("MaxActiveBlocksPerSM(%d threads, %d bytes) = %d, %v (%d driver calls); want an error naming %q before the driver",
				c.block, c.shared, n, err, calls, c.want)
		}
	}
}

// TestFailWithFailingLookups: a driver whose cuGetErrorName and
// cuGetErrorString fail for every code still gets an error named from the
// table. Each failed lookup came back through d.check into fail, which
// looked the new code up again: a stack overflow, fatal to the process.
func TestFailWithFailingLookups(t *testing.T) {
	e := fakeEngine(t)
	var calls int
	refuse := purego.NewCallback(func(code, p uintptr) uintptr {
		calls++
		return 1 // CUDA_ERROR_INVALID_VALUE
	})
	var err error
	if derr := e.Do(func() error {
		e.d.p.cuGetErrorName, e.d.p.cuGetErrorString = refuse, refuse
		err = e.d.fail("cuMemAlloc", 2)
		return nil
	}); derr != nil {
		t.Fatal(derr)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != 2 || !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY") || calls > 2 {
		t.Fatalf("fail with lookups that fail: %v (%d lookups); want CUDA_ERROR_OUT_OF_MEMORY from the table, at most two lookups", err, calls)
	}
}

// TestStubDriverIsNoGPU: the CUDA toolkit's stub libcuda answers cuInit
// with CUDA_ERROR_STUB_LIBRARY. That machine has no driver to use, so New's
// error says so, with what to do, and NoGPU holds: the tests skip and the
// tools fall back to the CPU as without a library. It was a setup error.
func TestStubDriverIsNoGPU(t *testing.T) {
	e := fakeEngine(t)
	stub := purego.NewCallback(func(flags uintptr) uintptr { return uintptr(ErrStubLibrary) })
	var err error
	if derr := e.Do(func() error {
		e.d.p.cuInit = stub
		err = e.initDevice(0)
		return nil
	}); derr != nil {
		t.Fatal(derr)
	}
	if err == nil || !NoGPU(err) || !strings.Contains(err.Error(), "stub") || !strings.Contains(err.Error(), "LD_LIBRARY_PATH") {
		t.Fatalf("initDevice with a stub cuInit: %v (NoGPU %v); want a no-GPU error naming the stub and the library path", err, NoGPU(err))
	}
}

// TestFailedReleaseKeepsHandle: a destroy, free or L2 release the driver
// refuses leaves the handle tracked, for a retry or Close, as Free always
// did; DestroyEvent, DestroyGraph, DestroyGraphExec and L2Hold.Release
// forgot it first, so a retry said "already destroyed" and Close never
// released it. The fake driver fails each call once, then succeeds.
func TestFailedReleaseKeepsHandle(t *testing.T) {
	e := fakeEngine(t)
	fails := map[string]bool{}
	failOnce := func(name string) uintptr {
		return purego.NewCallback(func(h uintptr) uintptr {
			if !fails[name] {
				fails[name] = true
				return 999 // CUDA_ERROR_UNKNOWN
			}
			return 0
		})
	}
	if err := e.Do(func() error {
		e.d.p.cuEventDestroy = failOnce("event")
		e.d.p.cuGraphDestroy = failOnce("graph")
		e.d.p.cuGraphExecDestroy = failOnce("exec")
		e.events[Event(0x10)] = struct{}{}
		e.graphs[Graph(0x20)] = struct{}{}
		e.execs[GraphExec(0x30)] = struct{}{}
		var limit uint64
		calls := 0
		e.d.p.cuCtxSetLimit = purego.NewCallback(func(which, value uintptr) uintptr {
			calls++
			if calls == 2 { // the first release
				return 999
			}
			limit = uint64(value)
			return 0
		})
		e.d.p.cuCtxGetLimit = purego.NewCallback(func(p *uint64, which uintptr) uintptr { *p = limit; return 0 })
		e.l2MaxSet, e.l2MaxWindow = 8<<20, 8<<20
		e.l2Holds = map[*L2Hold]struct{}{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	hold, err := e.HoldL2(1 << 20)
	if err != nil || hold == nil {
		t.Fatalf("HoldL2: %v, %v", hold, err)
	}
	for _, c := range []struct {
		name    string
		release func() error
	}{
		{"DestroyEvent", func() error { return e.DestroyEvent(Event(0x10)) }},
		{"DestroyGraph", func() error { return e.DestroyGraph(Graph(0x20)) }},
		{"DestroyGraphExec", func() error { return e.DestroyGraphExec(GraphExec(0x30)) }},
		{"L2Hold.Release", hold.Release},
	} {
		if err := c.release(); err == nil {
			t.Errorf("%s with the driver failing: no error", c.name)
		}
		if err := c.release(); err != nil {
			t.Errorf("%s again, the driver now willing: %v; want the handle still held and released", c.name, err)
		}
	}
	if got := e.L2SetAside(); got != 0 {
		t.Errorf("L2 set aside after the retried release: %d, want 0", got)
	}
}
