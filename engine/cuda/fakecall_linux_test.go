//go:build linux && (amd64 || arm64)

// Tests whose driver functions are purego callbacks standing in for
// libcuda's, to reach error paths a real driver seldom takes.

package cuda

import (
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

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

// TestOpenStubDriver: the CUDA toolkit's stub libcuda, where this machine
// has one (Debian's nvidia-cuda-toolkit installs CUDA 11.8's, which lacks
// the CUDA 12 loader symbol), is no driver: openDriver says so, with what
// to do, and NoGPU holds, so the tests skip and the tools fall back to the
// CPU as without a library. It read as a driver too old for CUDA 12, a
// setup error.
func TestOpenStubDriver(t *testing.T) {
	var stub string
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/stubs/libcuda.so", "/usr/lib/aarch64-linux-gnu/stubs/libcuda.so",
		"/usr/local/cuda/lib64/stubs/libcuda.so"} {
		if _, err := os.Stat(p); err == nil {
			stub = p
			break
		}
	}
	if stub == "" {
		t.Skip("no CUDA toolkit stub libcuda on this machine")
	}
	d, err := openDriver(stub)
	if err == nil || d != nil || !NoGPU(err) || !strings.Contains(err.Error(), "stub") || !strings.Contains(err.Error(), "LD_LIBRARY_PATH") {
		t.Fatalf("openDriver(%s) = %v, %v (NoGPU %v); want a no-GPU error naming the stub and the library path", stub, d, err, NoGPU(err))
	}
}

// TestStubLoaderIsStub: CUDA 12's stub has the loader symbol and answers
// it, as every call, with CUDA_ERROR_STUB_LIBRARY; resolve's error keeps
// the code, which openDriver turns into its no-driver error.
func TestStubLoaderIsStub(t *testing.T) {
	d := &driver{}
	d.p.cuGetProcAddress = purego.NewCallback(func(sym, pfn, version, flags, status uintptr) uintptr { return uintptr(ErrStubLibrary) })
	if err := d.resolve(); !errors.Is(err, ErrStubLibrary) {
		t.Fatalf("resolve through a stub's loader: %v; want CUDA_ERROR_STUB_LIBRARY in the chain", err)
	}
}

// TestStubDriverIsNoGPU: a stub that let openDriver through would answer
// cuInit with CUDA_ERROR_STUB_LIBRARY; New's error then says the same.
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

// TestFailedReleaseKeepsHandle: a destroy the driver refuses leaves the
// handle tracked, for a retry or Close, as Free always did; DestroyEvent,
// DestroyGraph and DestroyGraphExec forgot it first, so a retry said
// "already destroyed" and Close never released it. The fake driver fails
// each call once, then succeeds: a retry destroys the graph and the
// executable graph, and Close the event, each once.
func TestFailedReleaseKeepsHandle(t *testing.T) {
	e := fakeEngine(t)
	fails := map[string]bool{}
	destroyed := map[string]int{}
	failOnce := func(name string) uintptr {
		return purego.NewCallback(func(h uintptr) uintptr {
			if !fails[name] {
				fails[name] = true
				return 999 // CUDA_ERROR_UNKNOWN
			}
			destroyed[name]++
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
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		release func() error
		retry   bool // else Close destroys it
	}{
		{"DestroyEvent", func() error { return e.DestroyEvent(Event(0x10)) }, false},
		{"DestroyGraph", func() error { return e.DestroyGraph(Graph(0x20)) }, true},
		{"DestroyGraphExec", func() error { return e.DestroyGraphExec(GraphExec(0x30)) }, true},
	} {
		if err := c.release(); err == nil {
			t.Errorf("%s with the driver failing: no error", c.name)
		}
		if !c.retry {
			continue
		}
		if err := c.release(); err != nil {
			t.Errorf("%s again, the driver now willing: %v; want the handle still held and destroyed", c.name, err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"event", "graph", "exec"} {
		if destroyed[n] != 1 {
			t.Errorf("%s destroyed %d times in all, want once", n, destroyed[n])
		}
	}
}

// fakeGraphs is a fake driver's graph side, for Replay and ReplaySet:
// captures whose launches become nodes 101, 102, ... (one node a launch,
// named through cuStreamGetCaptureInfo), graphs 7, 8, ..., executables
// 1001, 1002, ..., the node updates it was handed and the executables it
// destroyed; refuse makes it fail the updates.
type fakeGraphs struct {
	nodes     *[64]uintptr // the node handles, memory the driver "owns"
	captured  int          // launches captured so far
	graphs    uintptr
	execs     uintptr
	updates   []fakeUpdate
	destroyed []uintptr // executables
	refuse    bool
}

// fakeUpdate is one cuGraphExecKernelNodeSetParams call, as read from its
// CUDA_KERNEL_NODE_PARAMS.
type fakeUpdate struct {
	exec, node  uintptr
	grid, block [3]uint32
	shared      uint32
	args        []uint64 // the first two
	extra       bool     // extra was not nil
}

func newFakeGraphs(t *testing.T, e *Engine) *fakeGraphs {
	t.Helper()
	f := &fakeGraphs{nodes: new([64]uintptr), graphs: 6, execs: 1000}
	info := purego.NewCallback(func(stream uintptr, st *int32, id *uint64, g *uintptr, deps *unsafe.Pointer, nd *uint64) uintptr {
		f.nodes[f.captured] = uintptr(101 + f.captured)
		*st, *deps, *nd = 1, unsafe.Pointer(&f.nodes[f.captured]), 1 // CU_STREAM_CAPTURE_STATUS_ACTIVE
		f.captured++
		return 0
	})
	endCapture := purego.NewCallback(func(stream uintptr, g *uintptr) uintptr { f.graphs++; *g = f.graphs; return 0 })
	instantiate := purego.NewCallback(func(x *uintptr, g, flags uintptr) uintptr { f.execs++; *x = f.execs; return 0 })
	setParams := purego.NewCallback(func(x, node uintptr, kp *kernelNodeParams) uintptr {
		if f.refuse {
			return 1 // CUDA_ERROR_INVALID_VALUE
		}
		u := fakeUpdate{exec: x, node: node, grid: [3]uint32{kp.gridX, kp.gridY, kp.gridZ},
			block: [3]uint32{kp.blockX, kp.blockY, kp.blockZ}, shared: kp.sharedMem, extra: kp.extra != nil}
		for _, a := range unsafe.Slice(kp.kernelParams, 2) {
			u.args = append(u.args, *(*uint64)(a))
		}
		f.updates = append(f.updates, u)
		return 0
	})
	execDestroy := purego.NewCallback(func(x uintptr) uintptr { f.destroyed = append(f.destroyed, x); return 0 })
	if err := e.Do(func() error {
		d := &e.d.p
		d.cuStreamGetCaptureInfo, d.cuStreamEndCapture, d.cuGraphInstantiateWithFlags = info, endCapture, instantiate
		d.cuGraphExecKernelNodeSetParams, d.cuGraphExecDestroy, d.cuGraphDestroy = setParams, execDestroy, d.cuLaunchKernel
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

// fakeRecord records n launches of kernel 1 on e, launch i with the
// arguments (i, a[i]) and a grid of grid[i] blocks (4 where not given).
func fakeRecord(t *testing.T, e *Engine, r *Recording, n int, a map[int]int32, grid map[int]uint32) {
	t.Helper()
	p := NewParams(2)
	err := e.RecordLaunches(r, func() error {
		for i := range n {
			p.SetI32(0, int32(i))
			p.SetI32(1, a[i])
			g := uint32(4)
			if v, ok := grid[i]; ok {
				g = v
			}
			if err := e.LaunchParams(Function(1), [3]uint32{g, 1, 1}, [3]uint32{128, 1, 1}, 0, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplayUpdatesNodes runs a Replay on a fake driver: the capture names
// each launch's node from cuStreamGetCaptureInfo, a recording with one
// argument and one grid changed updates exactly those two nodes with the
// new values (read back through the kernelParams the driver is handed),
// and an update the driver refuses leaves the replay refusing every later
// launch, since its node may hold either launch's values.
func TestReplayUpdatesNodes(t *testing.T) {
	e := fakeEngine(t)
	f := newFakeGraphs(t, e)
	var r Recording
	fakeRecord(t, e, &r, 3, map[int]int32{0: 5, 1: 5, 2: 5}, nil)
	rp, err := e.NewReplay(&r)
	if err != nil {
		t.Fatal(err)
	}
	if f.captured != 3 || !slices.Equal(rp.nodes, []graphNode{101, 102, 103}) {
		t.Fatalf("captured %d launches as nodes %v, want 101, 102, 103", f.captured, rp.nodes)
	}
	fakeRecord(t, e, &r, 3, map[int]int32{0: 5, 1: 6, 2: 5}, map[int]uint32{2: 2})
	if err := rp.Launch(&r); err != nil {
		t.Fatal(err)
	}
	block := [3]uint32{128, 1, 1}
	want := []fakeUpdate{
		{exec: 1001, node: 102, grid: [3]uint32{4, 1, 1}, block: block, args: []uint64{1, 6}},
		{exec: 1001, node: 103, grid: [3]uint32{2, 1, 1}, block: block, args: []uint64{2, 5}},
	}
	if !reflect.DeepEqual(f.updates, want) {
		t.Fatalf("node updates %+v, want %+v", f.updates, want)
	}
	f.refuse = true
	fakeRecord(t, e, &r, 3, map[int]int32{0: 5, 1: 7, 2: 5}, map[int]uint32{2: 2})
	if err := rp.Launch(&r); err == nil || !strings.Contains(err.Error(), "update launch 2") {
		t.Fatalf("a refused update: %v", err)
	}
	f.refuse = false
	if rp.Matches(&r) || rp.Launch(&r) == nil {
		t.Fatal("a replay whose update failed launched again")
	}
}

// TestReplaySetDropsLeastRecent: a set of two graphs captures a recording
// that matches neither, dropping (destroying) the least recently used, and
// drops a graph whose update failed.
func TestReplaySetDropsLeastRecent(t *testing.T) {
	e := fakeEngine(t)
	f := newFakeGraphs(t, e)
	s := e.NewReplaySet(2)
	var a, b, c Recording // 1, 2 and 3 launches: three sequences
	fakeRecord(t, e, &a, 1, nil, nil)
	fakeRecord(t, e, &b, 2, nil, nil)
	fakeRecord(t, e, &c, 3, nil, nil)
	execs := func() []GraphExec {
		var x []GraphExec
		for _, p := range s.Replays() {
			x = append(x, p.x)
		}
		return x
	}
	for _, r := range []*Recording{&a, &b, &a} { // a: 1001, b: 1002; a used last
		if err := s.Launch(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := execs(); !slices.Equal(got, []GraphExec{1001, 1002}) || len(f.destroyed) != 0 {
		t.Fatalf("graphs %v (most recent first), destroyed %v; want [1001 1002], none", got, f.destroyed)
	}
	if err := s.Launch(&c); err != nil { // c: 1003, b dropped
		t.Fatal(err)
	}
	if got := execs(); !slices.Equal(got, []GraphExec{1003, 1001}) || !slices.Equal(f.destroyed, []uintptr{1002}) {
		t.Fatalf("graphs %v, destroyed %v; want [1003 1001], [1002]", got, f.destroyed)
	}
	f.refuse = true
	fakeRecord(t, e, &a, 1, map[int]int32{0: 9}, nil) // a's node needs an update, which fails
	if err := s.Launch(&a); err == nil {
		t.Fatal("a refused update launched")
	}
	if got := execs(); !slices.Equal(got, []GraphExec{1003}) || !slices.Equal(f.destroyed, []uintptr{1002, 1001}) {
		t.Fatalf("after a failed update: graphs %v, destroyed %v; want [1003], [1002 1001]", got, f.destroyed)
	}
	f.refuse = false
	if err := s.Launch(&a); err != nil || s.Len() != 2 || f.captured != 1+2+3+1 {
		t.Fatalf("a again: %v, %d graphs, %d launches captured; want a new capture beside c's", err, s.Len(), f.captured)
	}
	if err := s.Close(); err != nil || s.Len() != 0 || len(f.destroyed) != 4 {
		t.Fatalf("Close: %v, %d graphs left, destroyed %v", err, s.Len(), f.destroyed)
	}
}
