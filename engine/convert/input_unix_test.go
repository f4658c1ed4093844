//go:build unix

package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInputSpecialFiles: a checkpoint file that is a named pipe (or, for
// the shard, a device) is refused with an error naming it, before it is
// opened; opening a pipe waits for a writer, so the conversion hung on
// config.json, the index, the tokenizer files, the chat template and the
// shards. Each file is replaced in turn in a checkpoint that converts.
func TestInputSpecialFiles(t *testing.T) {
	d := qwen35Dims()
	ts := hfTensors(d, 1, DTypeBF16)
	for _, c := range []struct {
		name, kind string
		device     bool // /dev/zero linked in its place
	}{
		{"config.json", "a named pipe", false},
		{"model.safetensors.index.json", "a named pipe", false},
		{"model.safetensors", "a named pipe", false},
		{"model.safetensors", "a device", true},
		{"tokenizer.json", "a named pipe", false},
		{"tokenizer_config.json", "a named pipe", false},
		{"chat_template.jinja", "a named pipe", false},
		{"chat_template.json", "a named pipe", false},
	} {
		dir := t.TempDir()
		writeCheckpoint(t, dir, d, ts)
		if strings.HasPrefix(c.name, "chat_template") {
			// tokenizer_config.json's own template would be taken first.
			writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), map[string]any{"eos_token": "<|im_start|>"})
		}
		path := filepath.Join(dir, c.name)
		os.Remove(path)
		var err error
		if c.device {
			err = os.Symlink("/dev/zero", path)
		} else {
			err = unix.Mkfifo(path, 0o666)
		}
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- ConvertFile(t.Context(), dir, filepath.Join(t.TempDir(), "out.gguf"), Options{}) }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			// Unblock the waiting open so the goroutine ends with the test.
			if f, e := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0); e == nil {
				f.Close()
			}
			t.Fatalf("%s as %s: the conversion still waits after 20 s", c.name, c.kind)
		}
		want := path + " is " + c.kind + ": the converter reads a checkpoint's files, so save it to a file first"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s as %s: %v\nwant an error containing %q", c.name, c.kind, err, want)
		}
	}
}
