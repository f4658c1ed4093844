package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestNewWithoutGPU checks the error of New on a machine without a GPU:
// exact text without a driver, ordinal and device count with a driver but
// no device.
func TestNewWithoutGPU(t *testing.T) {
	e, err := New(0)
	switch {
	case err == nil:
		e.Close()
		t.Skip("a GPU is present")
	case errors.Is(err, ErrNoDriver):
		if got, want := err.Error(), noDriverWant(); got != want {
			t.Fatalf("New(0) error = %q, want %q", got, want)
		}
	case errors.Is(err, ErrNoDevice):
		if !strings.HasPrefix(err.Error(), "no CUDA GPU: device 0 requested, 0 devices found") {
			t.Fatalf("New(0) without a device: %q", err)
		}
	default:
		t.Fatalf("New(0) failed in an unexpected way: %v", err)
	}
	if !NoGPU(err) { // the gate and bench fall back to the CPU on these alone
		t.Errorf("NoGPU(%v) = false", err)
	}
	t.Log(err)
}

// noDriverWant is New's whole error text without a driver on this platform.
func noDriverWant() string {
	if runtime.GOOS == "windows" {
		return "no CUDA driver: the CUDA backend runs on Linux (libcuda.so.1); Windows's nvcuda.dll is not supported"
	}
	return "no CUDA driver: libcuda.so.1 not found"
}

// TestResolveInstalledDriver resolves every entry point of the table from the
// machine's libcuda.so.1 when there is one (no GPU needed): each name must
// exist at its ABI version.
func TestResolveInstalledDriver(t *testing.T) {
	d, err := openDriver(driverLibrary)
	if errors.Is(err, ErrNoDriver) {
		t.Skip("no libcuda.so.1 here")
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range driverABI()[1:] { // [0] is the loader, found with dlsym
		fn, err := d.proc(a.name, a.version, a.optional)
		if err != nil || (fn == 0 && !a.optional) {
			t.Errorf("%s at CUDA %s ABI: %#x, %v", a.name, versionString(int(a.version)), fn, err)
		}
		n++
	}
	// The driver's own error text comes through.
	if got := d.check("cuX", 100).Error(); !strings.HasPrefix(got, "cuX: CUDA_ERROR_NO_DEVICE (") {
		t.Fatalf("driver error text: %q", got)
	}
	t.Logf("resolved %d entry points", n)
}

func TestOpenDriverMissingLibrary(t *testing.T) {
	_, err := openDriver("libmemra-no-such-driver.so.1")
	if err == nil {
		t.Fatal("openDriver of a missing library succeeded")
	}
	if got, want := err.Error(), noDriverWant(); got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Fatal("error does not match ErrNoDriver")
	}
	if !dlopenDetail(err) {
		t.Fatalf("the dlopen detail is not kept in the chain: %#v", err)
	}
}

// TestNoGPU: NoGPU tells a machine without a GPU (no driver library, no
// device) from a driver that is there and unusable. The errors of New's own
// paths are checked in TestNewWithoutGPU (on this machine's) and
// tools/gate's TestBrokenDriverIsSetupError (a library without the loader);
// here, one of each kind as New wraps them.
func TestNoGPU(t *testing.T) {
	_, missing := openDriver("libmemra-no-such-driver.so.1")
	noDevice := fmt.Errorf("no CUDA GPU: device 0 requested, 0 devices found: %w", (*driver)(nil).fail("cuInit", ErrNoDevice))
	tooOld := fmt.Errorf("cuda: the driver supports CUDA 11.4; memra needs a CUDA 12.0 or newer driver")
	ctxFail := fmt.Errorf("cuda: device 0: retain primary context: %w", (*driver)(nil).fail("cuDevicePrimaryCtxRetain", ErrOutOfMemory))
	for _, c := range []struct {
		err  error
		want bool
	}{{missing, true}, {noDevice, true}, {tooOld, false}, {ctxFail, false}} {
		if got := NoGPU(c.err); got != c.want {
			t.Errorf("NoGPU(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestL2WindowFromEnv: MEMRA_L2WINDOW is 1 or unset (on) or 0; New refuses
// any other value before it opens the driver.
func TestL2WindowFromEnv(t *testing.T) {
	for v, want := range map[string]bool{"": true, "0": false, "1": true} {
		t.Setenv("MEMRA_L2WINDOW", v)
		if got, err := L2WindowFromEnv(); err != nil || got != want {
			t.Errorf("MEMRA_L2WINDOW=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	t.Setenv("MEMRA_L2WINDOW", "yes")
	if _, err := L2WindowFromEnv(); err == nil || !strings.Contains(err.Error(), `MEMRA_L2WINDOW="yes"`) {
		t.Errorf("MEMRA_L2WINDOW=yes: %v", err)
	}
	e, err := New(0)
	if err == nil {
		e.Close()
	}
	if err == nil || !strings.Contains(err.Error(), `MEMRA_L2WINDOW="yes"`) || NoGPU(err) {
		t.Errorf("New with MEMRA_L2WINDOW=yes: %v", err)
	}
}

// TestPDLFromEnv: MEMRA_PDL is 0, 1 or unset; New refuses any other value
// before it opens the driver, so the error is the same with or without a GPU.
func TestPDLFromEnv(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "0": false} {
		t.Setenv("MEMRA_PDL", v)
		if got, err := PDLFromEnv(); err != nil || got != want {
			t.Errorf("MEMRA_PDL=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	t.Setenv("MEMRA_PDL", "off")
	if _, err := PDLFromEnv(); err == nil || !strings.Contains(err.Error(), `MEMRA_PDL="off"`) {
		t.Errorf("MEMRA_PDL=off: %v", err)
	}
	e, err := New(0)
	if err == nil {
		e.Close()
	}
	if err == nil || !strings.Contains(err.Error(), `MEMRA_PDL="off"`) || NoGPU(err) {
		t.Errorf("New with MEMRA_PDL=off: %v", err)
	}
}

// The ABI facts below come from cudaTypedefs.h (PFN_<name>_v<version>) of
// CUDA 12/13, not from the generator.
func TestDriverABIFacts(t *testing.T) {
	want := map[string]struct {
		symbol  string
		version int32
		params  int
	}{
		"cuGetProcAddress":            {"cuGetProcAddress_v2", 12000, 5},
		"cuStreamBeginCapture":        {"cuStreamBeginCapture_v2", 10010, 2},
		"cuMemAlloc":                  {"cuMemAlloc_v2", 3020, 2},
		"cuMemFree":                   {"cuMemFree_v2", 3020, 1},
		"cuMemGetInfo":                {"cuMemGetInfo_v2", 3020, 2},
		"cuMemcpyHtoDAsync":           {"cuMemcpyHtoDAsync_v2", 3020, 4},
		"cuMemcpyDtoHAsync":           {"cuMemcpyDtoHAsync_v2", 3020, 4},
		"cuMemcpyDtoDAsync":           {"cuMemcpyDtoDAsync_v2", 3020, 4},
		"cuDeviceTotalMem":            {"cuDeviceTotalMem_v2", 3020, 2},
		"cuDevicePrimaryCtxRelease":   {"cuDevicePrimaryCtxRelease_v2", 11000, 1},
		"cuStreamDestroy":             {"cuStreamDestroy_v2", 4000, 1},
		"cuEventDestroy":              {"cuEventDestroy_v2", 4000, 1},
		"cuGraphInstantiateWithFlags": {"cuGraphInstantiateWithFlags", 11040, 3},
		"cuGraphExecUpdate":           {"cuGraphExecUpdate_v2", 12000, 3},
		"cuLaunchKernel":              {"cuLaunchKernel", 4000, 11},
		"cuGraphGetNodes":             {"cuGraphGetNodes", 10000, 3},
	}
	got := map[string]abiEntry{}
	for _, a := range driverABI() {
		got[a.name] = a
	}
	for name, w := range want {
		a, ok := got[name]
		if !ok {
			t.Errorf("%s is not bound", name)
			continue
		}
		if a.symbol != w.symbol || a.version != w.version || a.params != w.params {
			t.Errorf("%s bound as %s@%d with %d params, want %s@%d with %d", name, a.symbol, a.version, a.params, w.symbol, w.version, w.params)
		}
	}
	if driverLoaderSymbol != "cuGetProcAddress_v2" || driverLibrary != "libcuda.so.1" {
		t.Errorf("loader %s from %s, want cuGetProcAddress_v2 from libcuda.so.1", driverLoaderSymbol, driverLibrary)
	}
}

func TestErrorText(t *testing.T) {
	var d driver // no entry points: the text comes from the generated table
	err := d.check("cuMemAlloc", 2)
	if got, want := err.Error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrOutOfMemory) || errors.Is(err, ErrInvalidValue) {
		t.Fatal("errors.Is does not match the code exactly")
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != 2 || ce.Func != "cuMemAlloc" {
		t.Fatalf("errors.As: %#v", ce)
	}
	var r Result
	if !errors.As(err, &r) || r != ErrOutOfMemory {
		t.Fatalf("errors.As Result = %v", r)
	}
	if got := d.check("cuX", 12345).Error(); got != "cuX: CUresult(12345) (no description)" {
		t.Fatalf("unknown code text = %q", got)
	}
}

func TestCheckReadsOnlyLow32Bits(t *testing.T) {
	var d driver
	// CUresult is a C enum returned in eax; the upper half of rax is undefined.
	if err := d.check("cuX", 0xdeadbeef_00000000); err != nil {
		t.Fatalf("garbage in the upper half made success an error: %v", err)
	}
	if err := d.check("cuX", 0xdeadbeef_00000001); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("got %v, want CUDA_ERROR_INVALID_VALUE", err)
	}
}

func TestUnresolvedCallIsAnError(t *testing.T) {
	var d driver
	var p DevPtr
	err := d.cuMemAlloc(&p, 1024)
	if err == nil || !strings.Contains(err.Error(), "cuMemAlloc") || !strings.Contains(err.Error(), "not resolved") {
		t.Fatalf("call through a nil entry point: %v", err)
	}
}

func TestParamsLayout(t *testing.T) {
	p := NewParams(5)
	p.SetPtr(0, 0x7f12_3456_7890)
	p.SetI32(1, -7)
	p.SetU32(2, 0xfedc_ba98)
	p.SetF32(3, -1.25)
	p.SetU64(4, 1<<40+3)
	// The kernel reads each parameter through its pointer with its C width.
	if v := *(*uint64)(p.ptrs[0]); v != 0x7f12_3456_7890 {
		t.Errorf("ptr slot = %#x", v)
	}
	if v := *(*int32)(p.ptrs[1]); v != -7 {
		t.Errorf("int slot = %d", v)
	}
	if v := *(*uint32)(p.ptrs[2]); v != 0xfedc_ba98 {
		t.Errorf("uint slot = %#x", v)
	}
	if v := *(*float32)(p.ptrs[3]); v != -1.25 {
		t.Errorf("float slot = %v", v)
	}
	if v := *(*uint64)(p.ptrs[4]); v != 1<<40+3 {
		t.Errorf("u64 slot = %d", v)
	}
	for i := range p.ptrs {
		if uintptr(p.ptrs[i])%8 != 0 {
			t.Errorf("slot %d not 8-byte aligned", i)
		}
	}
}

func TestArenaCarving(t *testing.T) {
	a := &Arena{base: 0x10000, size: 4096}
	p1, err := a.Alloc(100)
	if err != nil || p1 != 0x10000 {
		t.Fatalf("first = %#x, %v", p1, err)
	}
	p2, err := a.Alloc(1)
	if err != nil || p2 != 0x10000+256 {
		t.Fatalf("second = %#x, %v; want base+256 (aligned)", p2, err)
	}
	if _, err := a.Alloc(4096); err == nil || !strings.Contains(err.Error(), "arena full") || !strings.Contains(err.Error(), "4.00 KiB") {
		t.Fatalf("overflow: %v", err)
	}
	a.Reset()
	if p, _ := a.Alloc(4096); p != 0x10000 {
		t.Fatalf("after Reset = %#x", p)
	}
	if _, err := a.Alloc(1); err == nil {
		t.Fatal("a full arena handed out memory")
	}
}

func TestAsBytes(t *testing.T) {
	f := []float32{1, -2}
	b := AsBytes(f)
	if len(b) != 8 || b[3] != 0x3f || b[7] != 0xc0 { // 1.0 = 0x3f800000, -2.0 = 0xc0000000, little-endian
		t.Fatalf("AsBytes = % x", b)
	}
}

// fakeEngine starts an engine whose hot driver entry points are libc's
// sched_yield (returns 0, ignores arguments): enough to exercise threading,
// capture bookkeeping and allocation counts without a GPU.
func fakeEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := start(fakeDriver(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// fakeDriver is fakeEngine's driver, for a test that starts the engine
// itself.
func fakeDriver(t *testing.T) *driver {
	t.Helper()
	libc, err := dlopen("libc.so.6")
	if err != nil {
		t.Skipf("no libc.so.6 to fake the driver with: %v", err)
	}
	yield, err := dlsym(libc, "sched_yield")
	if err != nil {
		t.Skipf("no sched_yield: %v", err)
	}
	d := &driver{}
	d.p.cuLaunchKernel = yield
	d.p.cuGraphLaunch = yield
	d.p.cuStreamSynchronize = yield
	d.p.cuStreamBeginCapture = yield
	d.p.cuStreamEndCapture = yield
	d.p.cuMemcpyDtoHAsync = yield
	d.p.cuMemcpyHtoDAsync = yield
	return d
}

func TestLaunchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: its runtime allocates on its own (1 in 3 runs here); the count is checked without it")
	}
	e := fakeEngine(t)
	p := NewParams(3)
	grid, block := [3]uint32{4, 1, 1}, [3]uint32{128, 1, 1}
	buf := make([]byte, 4)
	off := testing.AllocsPerRun(200, func() {
		p.SetI32(0, 3)
		if err := e.LaunchParams(1, grid, block, 0, p); err != nil {
			t.Fatal(err)
		}
		if err := e.GraphLaunch(1); err != nil {
			t.Fatal(err)
		}
		if err := e.CopyDtoH(buf, 0x1000); err != nil {
			t.Fatal(err)
		}
	})
	if off != 0 {
		t.Errorf("launch from another goroutine: %v allocations per run, want 0", off)
	}
	var on float64
	launchOnThread := func() error {
		if err := e.LaunchParams(1, grid, block, 0, p); err != nil {
			return err
		}
		if err := e.GraphLaunch(1); err != nil {
			return err
		}
		return e.Synchronize()
	}
	if err := e.Do(func() error {
		on = testing.AllocsPerRun(200, func() {
			if err := launchOnThread(); err != nil {
				t.Error(err)
			}
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if on != 0 {
		t.Errorf("launch inside Do: %v allocations per run, want 0", on)
	}
}

func TestDoRunsOnOneLockedThread(t *testing.T) {
	e := fakeEngine(t)
	var first int
	if err := e.Do(func() error { first = gettid(); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		runtime.Gosched()
		var tid int
		// Nested calls run directly instead of deadlocking on the channel.
		if err := e.Do(func() error { return e.Do(func() error { tid = gettid(); return nil }) }); err != nil {
			t.Fatal(err)
		}
		if tid != first {
			t.Fatalf("call %d ran on thread %d, want %d", i, tid, first)
		}
	}
	if err := e.Do(func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panic on the engine thread: %v", err)
	}
}

func TestSyncInsideCaptureFailsAndDiscardsCapture(t *testing.T) {
	e := fakeEngine(t)
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := e.LaunchParams(1, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil); err != nil {
		t.Fatal(err)
	}
	err := e.Synchronize()
	if !errors.Is(err, ErrSyncInCapture) {
		t.Fatalf("Synchronize in capture = %v, want ErrSyncInCapture", err)
	}
	if err := e.CopyDtoH(make([]byte, 4), 0x1000); !errors.Is(err, ErrSyncInCapture) {
		t.Fatalf("CopyDtoH in capture = %v", err)
	}
	if _, err := e.Alloc(16); !errors.Is(err, ErrSyncInCapture) {
		t.Fatalf("Alloc in capture = %v", err)
	}
	g, err := e.EndCapture()
	if err == nil || g != 0 || !strings.Contains(err.Error(), "capture discarded") || !errors.Is(err, ErrSyncInCapture) {
		t.Fatalf("EndCapture after a sync = %v, %v", g, err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatalf("Synchronize after the capture ended: %v", err)
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	e := fakeEngine(t)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := e.Synchronize(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Synchronize after Close = %v", err)
	}
	if err := e.LaunchParams(1, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("launch after Close = %v", err)
	}
	if _, err := e.Alloc(16); !errors.Is(err, ErrClosed) {
		t.Fatalf("Alloc after Close = %v", err)
	}
}

// TestReleaseAfterClose: Close released everything, so a free, destroy or
// unload after it (a model or cache closed after its engine) returns nil,
// as HostBuf.Free does, where it returned ErrClosed.
func TestReleaseAfterClose(t *testing.T) {
	e := fakeEngine(t) // resolves no allocation entry point: the handles stand for ones Close released
	a := &Arena{e: e, base: 1 << 20}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Free":             e.Free(1 << 20),
		"Arena.Free":       a.Free(),
		"DestroyGraph":     e.DestroyGraph(1),
		"DestroyGraphExec": e.DestroyGraphExec(1),
		"DestroyEvent":     e.DestroyEvent(1),
		"UnloadModule":     e.UnloadModule(1),
	} {
		if err != nil {
			t.Errorf("%s after Close: %v", what, err)
		}
	}
}

var _ = unsafe.Pointer(nil)

// TestLaunchStructLayout pins launchConfig and launchAttribute to the byte
// layout of cuda.h's CUlaunchConfig (56 bytes: stream at 32, attrs at 40,
// numAttrs at 48) and CUlaunchAttribute (72 bytes: value union at 8), which
// cuLaunchKernelEx reads through a pointer, and accessPolicyWindow to
// CUaccessPolicyWindow (base_ptr, num_bytes, hitRatio at 16, hitProp at 20,
// missProp at 24; 32 bytes with padding), which lies in the value union.
func TestLaunchStructLayout(t *testing.T) {
	var c launchConfig
	var a launchAttribute
	var w accessPolicyWindow
	for _, f := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(CUlaunchConfig)", unsafe.Sizeof(c), 56},
		{"offsetof(hStream)", unsafe.Offsetof(c.stream), 32},
		{"offsetof(attrs)", unsafe.Offsetof(c.attrs), 40},
		{"offsetof(numAttrs)", unsafe.Offsetof(c.numAttrs), 48},
		{"sizeof(CUlaunchAttribute)", unsafe.Sizeof(a), 72},
		{"offsetof(value)", unsafe.Offsetof(a.value), 8},
		{"sizeof(CUaccessPolicyWindow)", unsafe.Sizeof(w), 32},
		{"offsetof(num_bytes)", unsafe.Offsetof(w.bytes), 8},
		{"offsetof(hitRatio)", unsafe.Offsetof(w.hitRatio), 16},
		{"offsetof(hitProp)", unsafe.Offsetof(w.hitProp), 20},
		{"offsetof(missProp)", unsafe.Offsetof(w.missProp), 24},
	} {
		if f.got != f.want {
			t.Errorf("%s = %d, want %d", f.what, f.got, f.want)
		}
	}
}

// TestHostSlice: views at offsets within the buffer alias its bytes; views
// past its end, at negative offsets or of a freed buffer are nil. (The
// memory here is Go's: HostSlice only reads ptr and n.)
func TestHostSlice(t *testing.T) {
	back := make([]uint32, 8)
	h := &HostBuf{ptr: unsafe.Pointer(&back[0]), n: 32}
	v := HostSlice[uint32](h, 8, 6)
	if len(v) != 6 {
		t.Fatalf("len %d, want 6", len(v))
	}
	v[0], v[5] = 7, 9
	if back[2] != 7 || back[7] != 9 {
		t.Fatalf("view at byte 8 does not alias the buffer: %v", back)
	}
	if f := HostSlice[float32](h, 0, 8); len(f) != 8 {
		t.Fatalf("whole buffer: len %d", len(f))
	}
	// The last two: n·4 wraps to 0 and to 32 in int, and off+n·4 to 0.
	for _, c := range []struct{ off, n int }{{8, 7}, {-4, 1}, {0, 9}, {0, -1}, {0, 1 << 62}, {0, 1<<62 + 8}, {math.MaxInt, 1}} {
		if v := HostSlice[uint32](h, c.off, c.n); v != nil {
			t.Errorf("off %d n %d: view of %d values past the buffer", c.off, c.n, len(v))
		}
	}
	h.ptr = nil // as after Free
	if v := HostSlice[uint32](h, 0, 1); v != nil {
		t.Error("view of a freed buffer")
	}
}

// TestPanicInsideCaptureEndsIt: a panic in Do between BeginCapture and
// EndCapture (a bug in the step code being captured) comes back as an error
// and leaves the stream out of capture, so the engine stays usable; left
// capturing, every later sync and allocation would fail with
// ErrSyncInCapture and every capture with "already capturing".
func TestPanicInsideCaptureEndsIt(t *testing.T) {
	e := fakeEngine(t)
	err := e.Do(func() error {
		if err := e.BeginCapture(); err != nil {
			return err
		}
		panic("bug in the captured step")
	})
	if err == nil || !strings.Contains(err.Error(), "bug in the captured step") || !strings.Contains(err.Error(), "capture was abandoned") {
		t.Fatalf("panic inside a capture: %v", err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatalf("Synchronize after the panic: %v", err)
	}
	if err := e.BeginCapture(); err != nil {
		t.Fatalf("BeginCapture after the panic: %v", err)
	}
	if _, err := e.EndCapture(); err != nil {
		t.Fatalf("EndCapture: %v", err)
	}
}

// TestNewArenaTooLarge: a size that rounding up to ArenaAlign would wrap
// past 2^64 is refused naming it, not rounded to an "alloc of 0 bytes".
func TestNewArenaTooLarge(t *testing.T) {
	e := fakeEngine(t)
	_, err := e.NewArena(math.MaxUint64 - 10)
	if err == nil || !strings.Contains(err.Error(), "18446744073709551605 bytes") {
		t.Fatalf("NewArena(2^64-11): %v", err)
	}
}
