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

// TestReplayUpdatesNodes runs a Replay on a fake driver: the capture names
// each launch's node from cuStreamGetCaptureInfo, a recording with one
// argument and one grid changed updates exactly those two nodes with the
// new values (read back through the kernelParams the driver is handed),
// and an update the driver refuses leaves the replay refusing every later
// launch, since its node may hold either launch's values.
func TestReplayUpdatesNodes(t *testing.T) {
	e := fakeEngine(t)
	nodes := new([3]uintptr) // the fake capture's node handles, heap memory the driver "owns"
	captured := 0
	info := purego.NewCallback(func(stream uintptr, st *int32, id *uint64, g *uintptr, deps *unsafe.Pointer, nd *uint64) uintptr {
		nodes[captured] = uintptr(101 + captured)
		*st, *deps, *nd = 1, unsafe.Pointer(&nodes[captured]), 1 // CU_STREAM_CAPTURE_STATUS_ACTIVE
		captured++
		return 0
	})
	endCapture := purego.NewCallback(func(stream uintptr, g *uintptr) uintptr { *g = 7; return 0 })
	instantiate := purego.NewCallback(func(x *uintptr, g, flags uintptr) uintptr { *x = 9; return 0 })
	type update struct {
		node        uintptr
		grid, block [3]uint32
		shared      uint32
		args        []uint64
		exec, extra bool // the graph exec given is NewReplay's; extra is not nil
	}
	var updates []update
	refuse := false
	setParams := purego.NewCallback(func(x, node uintptr, kp *kernelNodeParams) uintptr {
		if refuse {
			return 1 // CUDA_ERROR_INVALID_VALUE
		}
		u := update{node: node, grid: [3]uint32{kp.gridX, kp.gridY, kp.gridZ}, block: [3]uint32{kp.blockX, kp.blockY, kp.blockZ},
			shared: kp.sharedMem, exec: x == 9, extra: kp.extra != nil}
		args := unsafe.Slice(kp.kernelParams, 2)
		for _, a := range args {
			u.args = append(u.args, *(*uint64)(a))
		}
		updates = append(updates, u)
		return 0
	})
	yield := e.d.p.cuLaunchKernel
	if err := e.Do(func() error {
		d := &e.d.p
		d.cuStreamGetCaptureInfo, d.cuStreamEndCapture, d.cuGraphInstantiateWithFlags = info, endCapture, instantiate
		d.cuGraphExecKernelNodeSetParams, d.cuGraphExecDestroy, d.cuGraphDestroy = setParams, yield, yield
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := NewParams(2)
	block := [3]uint32{128, 1, 1}
	record := func(r *Recording, a1 int32, grid2 uint32) {
		t.Helper()
		err := e.RecordLaunches(r, func() error {
			for i := range 3 {
				v := int32(5)
				if i == 1 {
					v = a1
				}
				p.SetI32(0, int32(i))
				p.SetI32(1, v)
				grid := [3]uint32{4, 1, 1}
				if i == 2 {
					grid[0] = grid2
				}
				if err := e.LaunchParams(Function(1), grid, block, 0, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var r Recording
	record(&r, 5, 4)
	rp, err := e.NewReplay(&r)
	if err != nil {
		t.Fatal(err)
	}
	if captured != 3 || !slices.Equal(rp.nodes, []graphNode{101, 102, 103}) {
		t.Fatalf("captured %d launches as nodes %v, want 101, 102, 103", captured, rp.nodes)
	}
	record(&r, 6, 2)
	if err := rp.Launch(&r); err != nil {
		t.Fatal(err)
	}
	want := []update{
		{node: 102, grid: [3]uint32{4, 1, 1}, block: block, args: []uint64{1, 6}, exec: true},
		{node: 103, grid: [3]uint32{2, 1, 1}, block: block, args: []uint64{2, 5}, exec: true},
	}
	if !reflect.DeepEqual(updates, want) {
		t.Fatalf("node updates %+v, want %+v", updates, want)
	}
	refuse = true
	record(&r, 7, 2)
	if err := rp.Launch(&r); err == nil || !strings.Contains(err.Error(), "update launch 2") {
		t.Fatalf("a refused update: %v", err)
	}
	refuse = false
	if rp.Matches(&r) || rp.Launch(&r) == nil {
		t.Fatal("a replay whose update failed launched again")
	}
}
