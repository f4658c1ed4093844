package kernels

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreparedPatchesApply: the kernel work prepared without a GPU, kept as
// patches in scripts/gpu/patches (branches do not outlive a session's
// checkout), must still apply to this tree, all of them in name order, so
// that the GPU session that measures them can build them (scripts/gpu/bins.sh
// NAME=REV+PATCH). A change that breaks one rebases it (git apply -3, then
// git diff) or drops it with a line in docs/perf.md; landing one deletes it.
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
	// One git apply checks them in sequence, each on the tree the ones
	// before it leave.
	cmd := exec.Command(git, append([]string{"apply", "--check"}, patches...)...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("git apply --check %s: %v\n%s", strings.Join(patches, " "), err, msg)
	}
}
