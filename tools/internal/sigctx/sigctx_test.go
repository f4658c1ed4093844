//go:build unix

// The tests signal the process with syscall.Kill, which is Unix's.

package sigctx

import (
	"errors"
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
	var ie *Interrupted
	if err := w.Interrupted("x not written"); !errors.As(err, &ie) || ie.Code != 129 || err.Error() != "interrupted (hangup): x not written" {
		t.Errorf("Interrupted: %v", err)
	}

	q := New()
	q.Stop()
	<-q.Done()
	if q.Signal() != nil || q.ExitCode() != 1 || q.Interrupted("x") != nil {
		t.Errorf("stopped without a signal: %v, %d, %v", q.Signal(), q.ExitCode(), q.Interrupted("x"))
	}
}
