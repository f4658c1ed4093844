package convert

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteFileAtomicFull: a write that runs out of room (here a file size
// limit, which fails writes as a full disk does; Go ignores SIGXFSZ) removes
// its temporary file and says so, naming the output rather than the
// temporary file, which no longer exists when the user reads the message.
func TestWriteFileAtomicFull(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.gguf")
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = 1 << 20
	if old.Cur < lim.Cur {
		t.Skipf("file size limit %d already below 1 MiB", old.Cur)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	err := WriteFileAtomic(t.Context(), out, func(w io.Writer) error {
		chunk := make([]byte, 64<<10)
		for range 128 { // 8 MiB
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err == nil {
		t.Fatal("8 MiB written under a 1 MiB file size limit")
	}
	msg := err.Error()
	if !errors.Is(err, syscall.EFBIG) || !strings.HasPrefix(msg, "write "+out+": ") || strings.Contains(msg, ".tmp") ||
		!strings.Contains(msg, "1.0 MB") || !strings.Contains(msg, "removed") {
		t.Errorf("error %q: want EFBIG, naming %s (not its removed temporary file), how far it got and that nothing is left", msg, out)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind (stat: %v)", out, err)
	}
	if tmps := tempsOf(t, out); len(tmps) > 0 {
		t.Errorf("%v left behind", tmps)
	}
}
