package kernels

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreparedPatchesApply: the kernel work prepared without a GPU, kept as
// patches in scripts/gpu/patches (branches do not outlive a session's
// checkout), must still apply to this tree, one after another in name
// order, so that the GPU session that measures them can build them
// (scripts/gpu/bins.sh NAME=REV+PATCH+PATCH). A change that breaks one
// rebases it (git apply -3, then git diff) or drops it with a line in
// docs/perf.md; landing one deletes it. The patches are applied to copies
// of the files they touch: one `git apply --check` of several checks each
// against the tree as it is, not as the ones before it leave it.
func TestPreparedPatchesApply(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on this machine")
	}
	out, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	root := strings.TrimSpace(string(out))
	patches, err := filepath.Glob(filepath.Join(root, "scripts", "gpu", "patches", "*.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) == 0 {
		t.Skip("no prepared patches")
	}
	tmp := t.TempDir()
	for _, p := range patches {
		for _, f := range patchFiles(t, p) {
			dst := filepath.Join(tmp, f)
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(root, f))
			if os.IsNotExist(err) {
				continue // a file the patch creates
			} else if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(git, "apply", p)
		cmd.Dir = tmp
		// Outside any repository, so that git apply patches the copies.
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(tmp))
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply %s, after the patches before it: %v\n%s", filepath.Base(p), err, msg)
		}
	}
}

// patchFiles lists the paths a git diff touches.
func patchFiles(t *testing.T, patch string) []string {
	b, err := os.ReadFile(patch)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f, ok := strings.CutPrefix(sc.Text(), "--- a/"); ok {
			files = append(files, f)
		}
	}
	return files
}
