package convert

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCheckOutputStickyAsOtherUser: in a sticky directory, another user's
// file as the output is refused before any work, with an error naming its
// owner and what to do, and rename(2) would indeed have refused to
// replace it. The tests run as root, whom the sticky bit lets through, so
// the test takes another effective uid for the check (Go's Setresuid sets
// it on every thread) and gives root back after; elsewhere it is skipped.
func TestCheckOutputStickyAsOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make another user's file and to change the effective uid")
	}
	const me, other = 61001, 61002 // uids nobody here has
	dir, err := os.MkdirTemp("", "sticky")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "theirs.gguf")
	if err := os.WriteFile(out, []byte("keep"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, other, other); err != nil {
		t.Fatal(err)
	}
	var checkErr, renameErr error
	func() {
		if err := syscall.Setresuid(-1, me, -1); err != nil {
			t.Skipf("cannot take euid %d: %v", me, err)
		}
		defer func() {
			if err := syscall.Setresuid(-1, 0, -1); err != nil {
				panic("cannot give root back: " + err.Error())
			}
		}()
		checkErr = checkOutput(out)
		// What WriteFileAtomic's rename would meet at the end.
		tmp := filepath.Join(dir, "mine.tmp")
		if err := os.WriteFile(tmp, nil, 0o666); err != nil {
			renameErr = err
			return
		}
		renameErr = os.Rename(tmp, out)
		os.Remove(tmp)
	}()
	if !errors.Is(renameErr, syscall.EPERM) {
		t.Errorf("rename over another user's file in a sticky directory: %v, want EPERM", renameErr)
	}
	want := "output " + out + " belongs to another user (uid 61002) in " + dir + ", whose sticky bit lets only its owner replace it: remove it as that user or give another path"
	if checkErr == nil || checkErr.Error() != want {
		t.Errorf("checkOutput: %v\nwant %s", checkErr, want)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "keep" {
		t.Errorf("the file was changed: %q, %v", b, err)
	}
	// As root the same file may be replaced.
	if err := checkOutput(out); err != nil {
		t.Errorf("as root: %v", err)
	}
}
