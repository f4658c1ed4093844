//go:build unix

// The tests signal the process with syscall.Kill, which is Unix's.

package sigctx

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
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

// child runs the test named by SIGCTX_CHILD in a copy of this test binary,
// which sets up its own signals; it returns the copy's command, not started.
func child(t *testing.T, name string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SIGCTX_CHILD="+name)
	return cmd
}

// TestSIGPIPEStaysOff: after a SIGPIPE (stdout's reader gone) the watch
// stops, yet the next write to the closed pipe fails with EPIPE rather than
// ending the process, so the cleanup after it runs.
func TestSIGPIPEStaysOff(t *testing.T) {
	if os.Getenv("SIGCTX_CHILD") == t.Name() {
		w := New()
		defer w.Stop()
		os.Stdout.Write([]byte("x")) // the pipe is closed: SIGPIPE
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			fmt.Fprintln(os.Stderr, "SIGPIPE did not cancel the context")
			os.Exit(3)
		}
		_, err := os.Stdout.Write([]byte("y"))
		fmt.Fprintf(os.Stderr, "second write: %v, exit code %d\n", err, w.ExitCode())
		if !errors.Is(err, syscall.EPIPE) || w.ExitCode() != 141 {
			os.Exit(4)
		}
		os.Exit(0)
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer wr.Close()
	cmd := child(t, t.Name())
	cmd.Stdout = wr
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("child: %v; stderr:\n%s", err, stderr.String())
	}
}

// TestAllIgnored: a process that started with all four signals ignored
// (a background job under nohup) watches none, and other signals (here
// SIGWINCH, a terminal resize) do not cancel the context either.
func TestAllIgnored(t *testing.T) {
	if os.Getenv("SIGCTX_CHILD") == t.Name() {
		signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
		w := New()
		defer w.Stop()
		seen := make(chan os.Signal, 1)
		signal.Notify(seen, syscall.SIGWINCH)
		syscall.Kill(syscall.Getpid(), syscall.SIGWINCH)
		<-seen
		select {
		case <-w.Done():
			fmt.Fprintf(os.Stderr, "cancelled by %v\n", w.Signal())
			os.Exit(3)
		case <-time.After(200 * time.Millisecond):
		}
		os.Exit(0)
	}
	cmd := child(t, t.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("child: %v\n%s", err, out)
	}
}
