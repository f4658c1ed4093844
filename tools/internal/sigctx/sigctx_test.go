package sigctx

import (
	"syscall"
	"testing"
	"time"
)

// TestWatch: a signal to the process cancels the context and names itself,
// with the shell's exit status; Stop without a signal cancels with none.
func TestWatch(t *testing.T) {
	w := New()
	defer w.Stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP did not cancel the context")
	}
	if w.Signal() != syscall.SIGHUP || w.ExitCode() != 129 {
		t.Errorf("signal %v, exit code %d; want hangup, 129", w.Signal(), w.ExitCode())
	}

	q := New()
	q.Stop()
	<-q.Done()
	if q.Signal() != nil || q.ExitCode() != 1 {
		t.Errorf("stopped without a signal: %v, %d", q.Signal(), q.ExitCode())
	}
}
