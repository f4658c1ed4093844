//go:build unix

package convert

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckOutputSpecialFiles: a named pipe or a socket as the output is
// refused before any work (opening the pipe would wait for a reader, and
// the final rename would replace either), with an error that names the
// path, says what it is and asks for a file path; the node is left as it
// was.
func TestCheckOutputSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.gguf")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.gguf")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct {
		path, kind string
		mode       os.FileMode
	}{
		{fifo, "a named pipe", os.ModeNamedPipe},
		{sock, "not a regular file", os.ModeSocket},
	} {
		err := SynthFile(t.Context(), c.path, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1})
		want := "output " + c.path + " is " + c.kind + ": give a file path"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v; want an error containing %q", err, want)
		}
		if st, err := os.Lstat(c.path); err != nil || st.Mode().Type() != c.mode {
			t.Errorf("%s was replaced: %v, %v", c.path, st.Mode(), err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left in the output directory: %v", ents)
	}
}
