//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/memra-ai/memra/tools/internal/sigctx"
)

// TestDefaultModelInterrupted: ^C while the default model is written stops
// the write with nothing left in the folder and an *sigctx.Interrupted,
// which run turns into exit status 130; it was a setup error (2) with the
// cache folder's hint.
func TestDefaultModelInterrupted(t *testing.T) {
	w := sigctx.New()
	defer w.Stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-w.Done()
	dir := t.TempDir()
	_, err := cachedModel(w, dir)
	var ie *sigctx.Interrupted
	if !errors.As(err, &ie) || ie.Code != 130 {
		t.Fatalf("interrupted write: %v, want a *sigctx.Interrupted with code 130", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in the folder: %v", ents)
	}
}
