package cuda

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// TestLaunchObserverPanicIsAnError: a launch observer that panics, behind a
// Launch from a goroutine other than the engine's (opLaunch, which had no
// recover), comes back to the caller as an error; it killed the process
// from the engine thread. The engine stays usable. During a capture the
// capture stays open (the caller will end it) but is discarded at
// EndCapture: the graph lacks what the observer would have added.
func TestLaunchObserverPanicIsAnError(t *testing.T) {
	e := fakeEngine(t)
	grid, block := [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}
	e.SetLaunchObserver(func(Function) { panic("observer bug") })
	err := e.Launch(1, grid, block, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "panic on the engine thread") || !strings.Contains(err.Error(), "observer bug") {
		t.Fatalf("Launch with a panicking observer: %v", err)
	}
	// The same inside Do, where the launch runs directly.
	if err := e.Do(func() error { return e.Launch(1, grid, block, 0, nil) }); err == nil || !strings.Contains(err.Error(), "observer bug") {
		t.Fatalf("Launch inside Do with a panicking observer: %v", err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatalf("Synchronize after the panic: %v", err)
	}

	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	err = e.LaunchParams(1, grid, block, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "EndCapture will discard it") {
		t.Fatalf("Launch in a capture with a panicking observer: %v", err)
	}
	e.SetLaunchObserver(nil)
	if err := e.LaunchParams(1, grid, block, 0, nil); err != nil {
		t.Fatalf("a later launch in the capture: %v", err)
	}
	if g, err := e.EndCapture(); g != 0 || err == nil || !strings.Contains(err.Error(), "capture discarded") || !strings.Contains(err.Error(), "observer bug") {
		t.Fatalf("EndCapture after the panic: %v, %v; want the capture discarded", g, err)
	}
	if err := e.LaunchParams(1, grid, block, 0, nil); err != nil {
		t.Fatalf("Launch after the capture: %v", err)
	}
}

// TestHostBufFailedFreeKeepsIt: a free the driver refuses (here
// cuMemFreeHost is not resolved) leaves the buffer tracked, as Engine.Free
// leaves device memory: a second Free tries again and Close frees it. The
// buffer was untracked first, so a second Free returned nil and Close never
// freed it.
func TestHostBufFailedFreeKeepsIt(t *testing.T) {
	e := fakeEngine(t)
	back := make([]byte, 64) // stands for pinned memory; never handed to the driver
	ptr := unsafe.Pointer(&back[0])
	if err := e.Do(func() error { e.hosts[ptr] = 64; return nil }); err != nil {
		t.Fatal(err)
	}
	h := &HostBuf{e: e, ptr: ptr, n: 64}
	for i := range 2 {
		if err := h.Free(); err == nil || !strings.Contains(err.Error(), "cuMemFreeHost") {
			t.Fatalf("Free %d without cuMemFreeHost: %v", i+1, err)
		}
	}
	var kept bool
	_ = e.Do(func() error { _, kept = e.hosts[ptr]; return nil })
	if !kept || h.Bytes() == nil {
		t.Fatalf("a failed free forgot the buffer: tracked %v, bytes %v", kept, h.Bytes() != nil)
	}
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), "cuMemFreeHost") {
		t.Fatalf("Close with the buffer left: %v, want it to try cuMemFreeHost", err)
	}
	if err := h.Free(); err != nil || h.Bytes() != nil {
		t.Fatalf("Free after Close: %v (released by Close: want nil)", err)
	}
}

// TestThreadIDClearedAtClose: once the engine thread ends, no thread
// passes for it (onThread): its id is cleared, so a later thread given the
// same id by the kernel takes the closed check like any other caller.
func TestThreadIDClearedAtClose(t *testing.T) {
	e := fakeEngine(t)
	var tid int
	if err := e.Do(func() error { tid = gettid(); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := e.tid.Load(); got != int64(tid) || tid <= 0 {
		t.Fatalf("engine thread id %d, want the thread's %d", got, tid)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.tid.Load(); got != 0 {
		t.Fatalf("engine thread id after Close = %d, want 0 (cleared)", got)
	}
	if err := e.Do(func() error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close = %v", err)
	}
}
