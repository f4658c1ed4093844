package cuda

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestGoexitInsideDoIsAnError: fn calling runtime.Goexit on the engine
// thread (t.Fatal, t.FailNow or t.Skip inside Do) comes back to the caller
// as an error, as a panic does, and the engine serves on. The engine
// goroutine ended instead: the caller waited for an answer forever, and so
// did every later call, Close included. Inside a capture the capture is
// abandoned; in a launch observer behind a Launch from another goroutine,
// the Launch gets the error.
func TestGoexitInsideDoIsAnError(t *testing.T) {
	e, err := start(fakeDriver(t), nil) // no Close in a cleanup: it would hang without the fix
	if err != nil {
		t.Fatal(err)
	}
	var tid int
	if err := within(t, "Do", func() error { return e.Do(func() error { tid = gettid(); return nil }) }); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // twice: the second Goexit runs where the first left the engine
		err := within(t, "Do whose fn calls runtime.Goexit", func() error {
			return e.Do(func() error { runtime.Goexit(); return nil })
		})
		if err == nil || !strings.Contains(err.Error(), "runtime.Goexit on the engine thread") {
			t.Fatalf("Goexit %d inside Do: %v", i+1, err)
		}
	}
	var again int
	if err := within(t, "Do after the Goexits", func() error { return e.Do(func() error { again = gettid(); return nil }) }); err != nil || again != tid {
		t.Fatalf("Do after the Goexits: thread %d (%v), want the engine's %d", again, err, tid)
	}

	err = within(t, "Goexit inside a capture", func() error {
		return e.Do(func() error {
			if err := e.BeginCapture(); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		})
	})
	if err == nil || !strings.Contains(err.Error(), "runtime.Goexit") || !strings.Contains(err.Error(), "capture was abandoned") {
		t.Fatalf("Goexit inside a capture: %v", err)
	}
	if err := within(t, "Synchronize", e.Synchronize); err != nil {
		t.Fatalf("Synchronize after the Goexit in a capture: %v", err)
	}

	e.SetLaunchObserver(func(Function) { runtime.Goexit() })
	err = within(t, "Launch with an observer that calls runtime.Goexit", func() error {
		return e.LaunchParams(1, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil)
	})
	if err == nil || !strings.Contains(err.Error(), "runtime.Goexit") {
		t.Fatalf("Launch with a Goexit in the observer: %v", err)
	}
	e.SetLaunchObserver(nil)
	if err := within(t, "Close", e.Close); err != nil {
		t.Fatal(err)
	}
	if got := e.tid.Load(); got != 0 {
		t.Fatalf("engine thread id after Close = %d, want 0", got)
	}
}

// within runs f on a goroutine of its own and returns its error, failing
// the test if f has not returned in 10 seconds.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer in 10 s", what)
		return nil
	}
}
