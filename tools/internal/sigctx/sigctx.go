// Package sigctx gives the tools' long writes (convert, synth, bench's and
// gate's model files) a context that SIGINT, SIGTERM, SIGHUP and SIGPIPE
// cancel, so that they stop at their next buffer and remove their temporary
// file rather than die with it in place.
package sigctx

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Watch is a context cancelled by the first SIGINT, SIGTERM, SIGHUP or
// SIGPIPE (stdout's or stderr's reader gone: memra convert --progress 2>&1 |
// head).
type Watch struct {
	context.Context
	stop   context.CancelFunc
	ch     chan os.Signal
	once   sync.Once
	mu     sync.Mutex
	signal os.Signal
}

// New starts watching. After the first signal the signals have their
// default meaning again, so a second ^C ends a process whose write is stuck
// (a full disk, a hung network file system). A signal the process started
// with ignored stays ignored: nohup's SIGHUP, or SIGINT for a shell
// script's background job (Notify would install a handler for it). SIGPIPE
// stays off after it came: its default would end the process at its next
// write to the closed pipe (a progress bar's), before the cleanup.
func New() *Watch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watch{Context: ctx, stop: cancel, ch: make(chan os.Signal, 1)}
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) > 0 {
		signal.Notify(w.ch, sigs...)
	}
	go func() {
		select {
		case s := <-w.ch:
			if s == syscall.SIGPIPE {
				signal.Ignore(s) // writes to the pipe now fail with EPIPE
			}
			w.mu.Lock()
			w.signal = s
			w.mu.Unlock()
			w.Stop()
		case <-ctx.Done():
		}
	}()
	return w
}

// Stop stops watching (the signals' default meaning is back) and cancels
// the context if no signal has.
func (w *Watch) Stop() {
	w.once.Do(func() {
		signal.Stop(w.ch)
		w.stop()
	})
}

// Signal is the signal that cancelled the context, or nil.
func (w *Watch) Signal() os.Signal {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.signal
}

// Interrupted is work stopped by a signal after it cleaned up.
type Interrupted struct {
	What   string // what was left undone, e.g. "x.gguf not written"
	Signal os.Signal
	Code   int // the shell's exit status for Signal
}

func (e *Interrupted) Error() string { return fmt.Sprintf("interrupted (%v): %s", e.Signal, e.What) }

// Interrupted is an *Interrupted saying what was left undone when a signal
// cancelled w, else nil.
func (w *Watch) Interrupted(what string) error {
	if w.Signal() == nil {
		return nil
	}
	return &Interrupted{What: what, Signal: w.Signal(), Code: w.ExitCode()}
}

// ExitCode is the shell's exit status for a process ended by Signal: 128 +
// its number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 141 for
// SIGPIPE), or 1 when no signal came.
func (w *Watch) ExitCode() int {
	if s, ok := w.Signal().(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
