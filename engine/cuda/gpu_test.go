package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// axpbPTX is y[i] = a*x[i] + b for i < n, f32, written by hand. mul.rn and
// add.rn are never contracted into an fma, so the Go reference
// float32(a*x) + b is bit-exact.
const axpbPTX = `
.version 8.0
.target sm_80
.address_size 64

.visible .entry axpb(
	.param .u64 p_y,
	.param .u64 p_x,
	.param .f32 p_a,
	.param .f32 p_b,
	.param .u32 p_n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<6>;
	.reg .b64 %rd<8>;

	ld.param.u64 %rd1, [p_y];
	ld.param.u64 %rd2, [p_x];
	ld.param.f32 %f1, [p_a];
	ld.param.f32 %f2, [p_b];
	ld.param.u32 %r1, [p_n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd3, %rd2;
	cvta.to.global.u64 %rd4, %rd1;
	mul.wide.u32 %rd5, %r5, 4;
	add.s64 %rd6, %rd3, %rd5;
	ld.global.f32 %f3, [%rd6];
	mul.rn.f32 %f4, %f1, %f3;
	add.rn.f32 %f5, %f4, %f2;
	add.s64 %rd7, %rd4, %rd5;
	st.global.f32 [%rd7], %f5;
DONE:
	ret;
}
`

// gpuEngine opens GPU 0 or skips the test when there is no driver or GPU.
func gpuEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(0)
	if err != nil {
		if !NoGPU(err) { // a driver that is there and fails is a failure, not a skip
			t.Fatal(err)
		}
		t.Skipf("no GPU: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// axpb is a loaded kernel with its device buffers.
type axpb struct {
	e      *Engine
	fn     Function
	x, y   DevPtr
	n      int
	host   []float32
	p      *Params
	shared uint32 // dynamic shared memory of each launch (0 but in TestGPURecordReplay)
}

func newAxpb(t *testing.T, e *Engine, n int, seed uint64) *axpb {
	t.Helper()
	mod, err := e.LoadModule([]byte(axpbPTX))
	if err != nil {
		t.Fatal(err)
	}
	fn, err := e.Function(mod, "axpb")
	if err != nil {
		t.Fatal(err)
	}
	k := &axpb{e: e, fn: fn, n: n, p: NewParams(5)}
	if k.x, err = e.Alloc(uint64(4 * n)); err != nil {
		t.Fatal(err)
	}
	if k.y, err = e.Alloc(uint64(4 * n)); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	k.host = make([]float32, n)
	for i := range k.host {
		k.host[i] = r.Float32()*4 - 2
	}
	if err := e.CopyHtoD(k.x, AsBytes(k.host)); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *axpb) launch(y, x DevPtr, a, b float32) error {
	k.p.SetPtr(0, y)
	k.p.SetPtr(1, x)
	k.p.SetF32(2, a)
	k.p.SetF32(3, b)
	k.p.SetU32(4, uint32(k.n))
	return k.e.LaunchParams(k.fn, [3]uint32{uint32((k.n + 255) / 256), 1, 1}, [3]uint32{256, 1, 1}, k.shared, k.p)
}

func (k *axpb) download(t *testing.T, p DevPtr) []float32 {
	t.Helper()
	out := make([]float32, k.n)
	if err := k.e.CopyDtoH(AsBytes(out), p); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantIterated is x after steps of x = float32(a*x) + b, the kernel's math.
func wantIterated(x []float32, a, b float32, steps int) []float32 {
	out := append([]float32(nil), x...)
	for s := 0; s < steps; s++ {
		for i := range out {
			out[i] = float32(a*out[i]) + b
		}
	}
	return out
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v (bit-exact: the kernel rounds each op like Go)", what, i, got[i], want[i])
		}
	}
}

func TestGPUContextAndAttributes(t *testing.T) {
	e := gpuEngine(t)
	info := e.Info()
	t.Logf("%+v", info)
	if info.Name == "" || info.SMs <= 0 || info.Major < 7 || info.TotalMem < 1<<30 || info.L2Bytes <= 0 || info.DriverVersion < 12000 {
		t.Fatalf("implausible device info: %+v", info)
	}
	sms, err := e.Attribute(AttrMultiprocessorCount)
	if err != nil || sms != info.SMs {
		t.Fatalf("Attribute(SM count) = %d, %v; Info says %d", sms, err, info.SMs)
	}
	free, total, err := e.MemInfo()
	if err != nil || free == 0 || free > total || total != info.TotalMem {
		t.Fatalf("MemInfo = %d, %d, %v (TotalMem %d)", free, total, err, info.TotalMem)
	}
	if s, err := e.CaptureStatus(); err != nil || s != CaptureNone {
		t.Fatalf("CaptureStatus = %v, %v", s, err)
	}
}

func TestGPUCopyRoundTrip(t *testing.T) {
	e := gpuEngine(t)
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 4093, 1 << 20} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		a, err := e.Alloc(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Alloc(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CopyHtoD(a, src); err != nil {
			t.Fatal(err)
		}
		if err := e.CopyDtoDAsync(b, a, uint64(n)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		if err := e.CopyDtoH(got, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: round trip differs", n)
		}
		// Pinned, asynchronous copies and memsets.
		h, err := e.HostAlloc(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.MemsetD8Async(b, 0xa5, uint64(n)); err != nil {
			t.Fatal(err)
		}
		if err := e.CopyDtoHAsync(h.Bytes(), b); err != nil {
			t.Fatal(err)
		}
		if err := e.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(h.Bytes(), bytes.Repeat([]byte{0xa5}, n)) {
			t.Fatalf("%d bytes: memset D8 readback differs", n)
		}
		copy(h.Bytes(), src)
		if err := e.CopyHtoDAsync(b, h.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := e.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if err := e.CopyDtoH(got, b); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: pinned round trip differs (%v)", n, err)
		}
		if n%4 == 0 {
			if err := e.MemsetD32Async(b, 0x01020304, uint64(n/4)); err != nil {
				t.Fatal(err)
			}
			if err := e.CopyDtoH(got, b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:8], []byte{4, 3, 2, 1, 4, 3, 2, 1}) {
				t.Fatalf("memset D32 = % x", got[:8])
			}
		}
		if err := h.Free(); err != nil {
			t.Fatal(err)
		}
		if err := e.Free(a); err != nil {
			t.Fatal(err)
		}
		if err := e.Free(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Free(0x1234); err == nil {
		t.Fatal("freeing a foreign pointer succeeded")
	}
}

func TestGPUOutOfMemoryNamesSizes(t *testing.T) {
	e := gpuEngine(t)
	_, err := e.Alloc(1 << 50) // 1 PiB
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("Alloc(1 PiB) = %v, want ErrOutOfMemory", err)
	}
	if !strings.Contains(err.Error(), "1125899906842624 bytes") || !strings.Contains(err.Error(), "free of") {
		t.Fatalf("OOM error does not name the request and free memory: %v", err)
	}
	t.Log(err)
}

func TestGPUArena(t *testing.T) {
	e := gpuEngine(t)
	a, err := e.NewArena(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := a.Alloc(1000)
	p2, err := a.Alloc(4)
	if err != nil || uint64(p2-p1) != 1024 || uint64(p1)%ArenaAlign != 0 {
		t.Fatalf("arena sub-buffers %#x, %#x, %v", p1, p2, err)
	}
	if err := e.CopyHtoD(p2, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(); err != nil {
		t.Fatalf("second Free: %v", err)
	}
}

func TestGPUModuleLaunch(t *testing.T) {
	e := gpuEngine(t)
	const n = 100_003 // not a multiple of the block: the bounds check runs
	k := newAxpb(t, e, n, 1)
	if err := k.launch(k.y, k.x, 1.5, -0.25); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y", k.download(t, k.y), wantIterated(k.host, 1.5, -0.25, 1))

	// The same launch through the raw []unsafe.Pointer path.
	a, b, nn := float32(-0.75), float32(2), uint32(n)
	y, x := k.y, k.x
	params := []unsafe.Pointer{unsafe.Pointer(&y), unsafe.Pointer(&x), unsafe.Pointer(&a), unsafe.Pointer(&b), unsafe.Pointer(&nn)}
	if err := e.Launch(k.fn, [3]uint32{(n + 255) / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, params); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y", k.download(t, k.y), wantIterated(k.host, -0.75, 2, 1))

	if regs, err := e.FuncAttribute(k.fn, FuncNumRegs); err != nil || regs <= 0 {
		t.Fatalf("NumRegs = %d, %v", regs, err)
	}
	mod, _ := e.LoadModule([]byte(axpbPTX))
	if _, err := e.Function(mod, "no_such_kernel"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no_such_kernel") {
		t.Fatalf("missing kernel: %v", err)
	}
	if err := e.UnloadModule(mod); err != nil {
		t.Fatal(err)
	}
}

func TestGPUGraphCaptureReplay(t *testing.T) {
	e := gpuEngine(t)
	const n, steps = 4096, 100
	const a, b = float32(0.9), float32(0.01) // contracting: values stay in range over the steps
	k := newAxpb(t, e, n, 2)
	if err := e.CopyDtoDAsync(k.y, k.x, 4*n); err != nil {
		t.Fatal(err)
	}
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if s, err := e.CaptureStatus(); err != nil || s != CaptureActive {
		t.Fatalf("CaptureStatus during capture = %v, %v", s, err)
	}
	for i := 0; i < steps; i++ {
		if err := k.launch(k.y, k.y, a, b); err != nil {
			t.Fatal(err)
		}
	}
	g, err := e.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := e.GraphNodeCount(g)
	if err != nil || nodes != steps {
		t.Fatalf("graph has %d nodes (%v), want %d", nodes, err, steps)
	}
	// Nothing ran during capture: y still equals x.
	sameBits(t, "y before replay", k.download(t, k.y), k.host)
	x, err := e.Instantiate(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.GraphLaunch(x); err != nil {
		t.Fatal(err)
	}
	once := wantIterated(k.host, a, b, steps)
	sameBits(t, "y after one replay", k.download(t, k.y), once)
	if err := e.GraphLaunch(x); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y after two replays", k.download(t, k.y), wantIterated(once, a, b, steps))

	// Exec update: the same topology with other scalars, applied in place.
	if err := e.CopyDtoDAsync(k.y, k.x, 4*n); err != nil {
		t.Fatal(err)
	}
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < steps; i++ {
		if err := k.launch(k.y, k.y, 0.5, -0.125); err != nil {
			t.Fatal(err)
		}
	}
	g2, err := e.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.GraphExecUpdate(x, g2); err != nil {
		t.Fatal(err)
	}
	if err := e.GraphLaunch(x); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y after updated replay", k.download(t, k.y), wantIterated(k.host, 0.5, -0.125, steps))

	// A graph of another topology cannot update it; the error says so.
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := k.launch(k.y, k.y, 1, 0); err != nil {
		t.Fatal(err)
	}
	g3, err := e.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.GraphExecUpdate(x, g3); err == nil {
		t.Fatal("updating a 100-node exec from a 1-node graph succeeded")
	} else {
		t.Log(err)
	}
	for _, gg := range []Graph{g, g2, g3} {
		if err := e.DestroyGraph(gg); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.DestroyGraphExec(x); err != nil {
		t.Fatal(err)
	}
}

func TestGPUSyncInsideCaptureFailsLoudly(t *testing.T) {
	e := gpuEngine(t)
	k := newAxpb(t, e, 1024, 3)
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := k.launch(k.y, k.x, 2, 1); err != nil {
		t.Fatal(err)
	}
	if err := e.Synchronize(); !errors.Is(err, ErrSyncInCapture) {
		t.Fatalf("Synchronize in capture = %v, want ErrSyncInCapture", err)
	}
	g, err := e.EndCapture()
	if err == nil || g != 0 || !errors.Is(err, ErrSyncInCapture) {
		t.Fatalf("EndCapture after a sync in capture = %v, %v; want the capture discarded", g, err)
	}
	if s, err := e.CaptureStatus(); err != nil || s != CaptureNone {
		t.Fatalf("after the discarded capture the stream is %v (%v)", s, err)
	}
	// The stream works normally again.
	if err := k.launch(k.y, k.x, 2, 1); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y", k.download(t, k.y), wantIterated(k.host, 2, 1, 1))
}

// TestGPUPanicInsideCaptureEndsIt: a panic in Do with a launch captured
// comes back as an error and the driver's stream is out of capture, usable
// again (TestPanicInsideCaptureEndsIt checks the bookkeeping without a GPU).
func TestGPUPanicInsideCaptureEndsIt(t *testing.T) {
	e := gpuEngine(t)
	k := newAxpb(t, e, 1024, 3)
	err := e.Do(func() error {
		if err := e.BeginCapture(); err != nil {
			return err
		}
		if err := k.launch(k.y, k.x, 2, 1); err != nil {
			return err
		}
		panic("bug in the captured step")
	})
	if err == nil || !strings.Contains(err.Error(), "capture was abandoned") {
		t.Fatalf("panic inside a capture: %v", err)
	}
	if s, err := e.CaptureStatus(); err != nil || s != CaptureNone {
		t.Fatalf("after the panic the stream is %v (%v)", s, err)
	}
	if err := k.launch(k.y, k.x, 2, 1); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y", k.download(t, k.y), wantIterated(k.host, 2, 1, 1))
}

func TestGPUEventTiming(t *testing.T) {
	e := gpuEngine(t)
	k := newAxpb(t, e, 1<<20, 4)
	start, err := e.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	end, err := e.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Record(start); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := k.launch(k.y, k.x, 1.25, 0.5); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Record(end); err != nil {
		t.Fatal(err)
	}
	if err := e.EventSynchronize(end); err != nil {
		t.Fatal(err)
	}
	d, err := e.Elapsed(start, end)
	if err != nil || d <= 0 {
		t.Fatalf("Elapsed = %v, %v; want > 0", d, err)
	}
	t.Logf("20 launches over 4 MiB: %v", d)
	if err := e.DestroyEvent(start); err != nil {
		t.Fatal(err)
	}
}

func TestGPULaunchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: its runtime allocates on its own (1 in 3 runs here); the count is checked without it")
	}
	e := gpuEngine(t)
	k := newAxpb(t, e, 1024, 5)
	allocs := testing.AllocsPerRun(100, func() {
		if err := k.launch(k.y, k.x, 1, 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per launch, want 0", allocs)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func TestGPUCloseTwice(t *testing.T) {
	e, err := New(0)
	if err != nil {
		if !NoGPU(err) { // a driver that is there and fails is a failure, not a skip
			t.Fatal(err)
		}
		t.Skipf("no GPU: %v", err)
	}
	if _, err := e.Alloc(1 << 20); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := New(1 << 20); err == nil || !strings.Contains(err.Error(), "ordinal 1048576") {
		t.Fatalf("New(huge ordinal) = %v, want an error naming the ordinal and device count", err)
	}
}

// TestGPULoadModuleFile: a PTX file loads and its kernel is found; a missing
// file and one that is no kernel image fail with errors that name the file.
func TestGPULoadModuleFile(t *testing.T) {
	e := gpuEngine(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "axpb.ptx")
	if err := os.WriteFile(good, []byte(axpbPTX), 0o644); err != nil {
		t.Fatal(err)
	}
	mod, err := e.LoadModuleFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Function(mod, "axpb"); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.cubin")
	if err := os.WriteFile(bad, []byte("not a kernel image"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing.cubin"), bad} {
		if _, err := e.LoadModuleFile(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("LoadModuleFile(%s) = %v, want an error naming the file", p, err)
		}
	}
}

// TestGPUL2Window: nothing is set aside until a hold; a hold sets aside at
// least its bytes (every GPU since sm_80 has a persisting part) and one
// larger than the device allows gets none; a launch carrying a window over
// its output computes what one without it does (the window changes where
// lines live, never values); the last release gives the L2 back.
func TestGPUL2Window(t *testing.T) {
	t.Setenv("MEMRA_L2WINDOW", "1")
	e := gpuEngine(t)
	if !e.PDL() {
		t.Skip("the window rides on the PDL launch attributes (sm_90, driver 12.3)")
	}
	if e.l2MaxSet == 0 {
		t.Fatalf("no persisting L2 on %s (sm_%d%d)", e.Info().Name, e.Info().Major, e.Info().Minor)
	}
	if got := e.L2SetAside(); got != 0 {
		t.Fatalf("%d bytes set aside before any hold", got)
	}
	if h, err := e.HoldL2(e.l2MaxSet + 1); h != nil || err != nil {
		t.Fatalf("hold of %d bytes, past the device's %d: %v, %v; want none", e.l2MaxSet+1, e.l2MaxSet, h, err)
	}
	const n = 1 << 20 // 4 MiB
	h, err := e.HoldL2(4 * n)
	if err != nil || h == nil {
		t.Fatalf("HoldL2(4 MiB) = %v, %v", h, err)
	}
	if got := e.L2SetAside(); got < 4*n {
		t.Fatalf("%d bytes set aside for a 4 MiB hold", got)
	}
	t.Logf("L2 %d bytes, most set aside %d, windows up to %d; %d set aside for 4 MiB", e.Info().L2Bytes, e.l2MaxSet, e.l2MaxWindow, e.L2SetAside())
	k := newAxpb(t, e, n, 3)
	setWindow(t, e, k.y, 4*n, 2) // the window rides beside PDL's attribute
	k.p.SetPtr(0, k.y)
	k.p.SetPtr(1, k.x)
	k.p.SetF32(2, 1.25)
	k.p.SetF32(3, 0.5)
	k.p.SetU32(4, n)
	// One launch after a synchronous copy: nothing before it for PDL to overlap.
	if err := e.LaunchParamsPDL(k.fn, [3]uint32{n / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, k.p); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "y", k.download(t, k.y), wantIterated(k.host, 1.25, 0.5, 1))
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if got := e.L2SetAside(); got != 0 {
		t.Fatalf("%d bytes still set aside after the last release", got)
	}
	setWindow(t, e, k.y, 4*n, 1) // nothing set aside: no window
}

// setWindow sets an L2 window over [p, p+bytes) on the engine thread and
// checks how many launch attributes the next PDL launch carries.
func setWindow(t *testing.T, e *Engine, p DevPtr, bytes uint64, want uint32) {
	t.Helper()
	if err := e.Do(func() error {
		e.SetL2Window(p, bytes)
		if e.lcfg.numAttrs != want {
			return fmt.Errorf("SetL2Window(%#x, %d): %d launch attributes, want %d", p, bytes, e.lcfg.numAttrs, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
