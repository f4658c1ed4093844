package gguf

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestOpenMaps: on Unix and Windows Open maps the file rather than reading
// it whole, so a byte written to the file after Open shows in TensorData
// (a mapped view shares the file cache; a copy would keep the old byte).
// A copy would hold all of a model in the process's memory before the
// first token.
func TestOpenMaps(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly", "solaris", "illumos", "aix":
	default:
		t.Skipf("%s reads the file whole (mmap_other.go)", runtime.GOOS)
	}
	data := randBytes(rand.New(rand.NewPCG(3, 4)), 4096)
	img := build(t, func(w *Writer) {
		w.SetKV("general.architecture", StringValue("test"))
		w.AddTensorReader("t", TypeF32, []uint64{1024}, bytes.NewReader(data))
	})
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.TensorData("t")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("tensor data differs from what was written")
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	at := f.DataOffset + int64(f.Tensors[0].Offset) + 100
	if _, err := w.WriteAt([]byte{^data[100]}, at); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got[100] != ^data[100] {
		t.Errorf("byte 100 of the tensor is %#x after the file changed to %#x: Open copied the file instead of mapping it", got[100], ^data[100])
	}
}
