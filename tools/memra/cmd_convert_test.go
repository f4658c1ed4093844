package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestConvertCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"dir"},
		{"-o", "x.gguf"},
		{"dir", "-o", "x.gguf", "--type", "q3_k"},
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
