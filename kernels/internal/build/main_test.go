package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memra-ai/memra/kernels/internal/kbuild"
)

// TestReplacePair: the new fatbin and manifest replace the old pair, and
// when the manifest cannot be put in place the old fatbin comes back, so
// the committed pair never disagrees.
func TestReplacePair(t *testing.T) {
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		for name, s := range map[string]string{kbuild.FatbinName: "old fat", kbuild.ManifestName: "old man", "fat.new": "new fat", "man.new": "new man"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	read := func(t *testing.T, dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dir := setup(t)
	if err := replacePair(dir, filepath.Join(dir, "fat.new"), filepath.Join(dir, "man.new")); err != nil {
		t.Fatal(err)
	}
	if f, m := read(t, dir, kbuild.FatbinName), read(t, dir, kbuild.ManifestName); f != "new fat" || m != "new man" {
		t.Errorf("replaced: %q, %q", f, m)
	}
	if _, err := os.Stat(filepath.Join(dir, kbuild.FatbinName+".old")); err == nil {
		t.Error("the old fatbin was left beside the new one")
	}

	dir = setup(t)
	if err := replacePair(dir, filepath.Join(dir, "fat.new"), filepath.Join(dir, "missing.new")); err == nil {
		t.Fatal("a missing manifest was not an error")
	}
	if f, m := read(t, dir, kbuild.FatbinName), read(t, dir, kbuild.ManifestName); f != "old fat" || m != "old man" {
		t.Errorf("after a failed manifest: %q, %q; want the old pair", f, m)
	}
}
