package convert

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memra-ai/memra/gguf"
	"golang.org/x/sys/unix"
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

// TestWriteFileAtomicReserves: WriteFileAtomic's output claims a GGUF's
// whole size before its first byte, so a file the disk cannot hold fails at
// once, naming the output and its size, with nothing left behind. No disk
// holds 2^60 bytes (1.15 EB). A file system without fallocate reserves
// nothing, and the test skips there.
func TestWriteFileAtomicReserves(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.gguf")
	probe, err := os.Create(out + ".probe")
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Fallocate(int(probe.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 4096)
	probe.Close()
	os.Remove(probe.Name())
	if err != nil { // reserve passes over any failure but a lack of room
		t.Skipf("%s: no fallocate here: %v", filepath.Dir(out), err)
	}
	wrote := false
	err = WriteFileAtomic(t.Context(), out, func(w io.Writer) error {
		r, ok := w.(gguf.Reserver)
		if !ok {
			t.Fatalf("WriteFileAtomic's writer %T is not a gguf.Reserver", w)
		}
		if err := r.Reserve(1 << 60); err != nil {
			return err
		}
		wrote = true
		_, err := w.Write([]byte("GGUF"))
		return err
	})
	if wrote || err == nil {
		t.Fatalf("wrote after the reservation failed (err %v)", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "write "+out+": the file is 1152921504.61 GB and ") || !strings.Contains(msg, "nothing was written") {
		t.Errorf("error %q: want it to name %s, the size and that nothing was written", msg, out)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind (stat: %v)", out, err)
	}
	if tmps := tempsOf(t, out); len(tmps) > 0 {
		t.Errorf("%v left behind", tmps)
	}
}

// TestReserveErrors: only a file system out of room (full, over a quota,
// past its largest file) refuses the reservation. Any other failure of
// fallocate (EOPNOTSUPP, and EINVAL or EPERM, which some file systems and
// seccomp filters give) reserves nothing and lets the write go ahead, as it
// went before WriteFileAtomic reserved. (TestWriteFileAtomicReserves checks
// a refusal's message through WriteFileAtomic on a real file system.)
func TestReserveErrors(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		errno  unix.Errno
		refuse bool
	}{
		{unix.ENOSPC, true}, {unix.EDQUOT, true}, {unix.EFBIG, true},
		{unix.EOPNOTSUPP, false}, {unix.ENOSYS, false}, {unix.EINVAL, false}, {unix.EPERM, false}, {unix.EACCES, false},
	} {
		calls := 0
		err := reserveWith(func(int, uint32, int64, int64) error {
			if calls++; calls == 1 {
				return unix.EINTR // interrupted once: tried again
			}
			return c.errno
		}, f, 4)
		if calls != 2 || c.refuse != errors.Is(err, c.errno) || (!c.refuse && err != nil) {
			t.Errorf("fallocate failing with %v: %d calls, error %v; want 2 calls and the reservation refused: %v", c.errno, calls, err, c.refuse)
		}
	}
}

// TestCheckOutputDevice: a device node as the output is refused before any
// work. The node is made in a temporary directory (which needs root), so
// that a regression replaces it rather than /dev/null.
func TestCheckOutputDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "null")
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("cannot make a device node: %v", err)
	}
	err := SynthFile(t.Context(), path, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "is a device") {
		t.Errorf("%s: %v; want an error saying it is a device", path, err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Errorf("the device node was replaced: %v, %v", st.Mode(), err)
	}
}
