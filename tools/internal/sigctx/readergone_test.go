package sigctx

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// TestReaderGone: a write to a real pipe whose reader is closed is
// recognised, on Unix (EPIPE: SIGPIPE does not end a test binary for a pipe
// that is not stdout) and on Windows (check:windows runs this under wine);
// a full disk and other errors are not.
func TestReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	_, err = w.Write([]byte("x"))
	if err == nil {
		t.Fatal("write to a pipe with its reader closed succeeded")
	}
	if !ReaderGone(err) {
		t.Errorf("ReaderGone(%v) = false for a pipe whose reader closed", err)
	}
	if !ReaderGone(fmt.Errorf("write output: %w", err)) {
		t.Errorf("ReaderGone misses %v once wrapped", err)
	}
	for _, e := range []error{nil, syscall.ENOSPC, &fs.PathError{Op: "write", Path: "x", Err: syscall.EIO}, fs.ErrClosed} {
		if ReaderGone(e) {
			t.Errorf("ReaderGone(%v) = true", e)
		}
	}
}
