package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConvertCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"dir"},
		{"-o", "x.gguf"},
		{"dir", "-o", "x.gguf", "--type", "q2_k"}, // not a type convert writes
		{"dir", "extra", "-o", "x.gguf"},
	} {
		err := runConvert(args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errUsage) {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
}

func TestConvertCommandMissingDir(t *testing.T) {
	dir := t.TempDir()
	err := runConvert([]string{dir, "-o", dir + "/x.gguf", "--type", "f32"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("err %v, want one naming config.json", err)
	}
	// Flags first, directory last, works too.
	err = runConvert([]string{"-o", dir + "/x.gguf", dir}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("err %v, want one naming config.json", err)
	}
}

// TestConvertCommandNotADir: a file given for HF_DIR, and a directory that
// is not there, are said as such, not as a config.json that cannot be
// opened; a second positional argument is named.
func TestConvertCommandNotADir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.gguf")
	_, missing := os.Stat(filepath.Join(dir, "nope")) // the system's words: "stat DIR/nope: no such file or directory" on Unix
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{file, "-o", out}, file + " is a file: HF_DIR is the checkpoint's directory"},
		{[]string{filepath.Join(dir, "nope"), "-o", out}, "checkpoint directory: " + missing.Error()},
		{[]string{dir, "extra", "-o", out}, `unexpected argument "extra"`},
	} {
		err := runConvert(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), string(filepath.Separator)+"config.json") {
			t.Errorf("%q: err %v, want one containing %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
}
