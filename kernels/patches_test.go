package kernels

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreparedPatchesApply: the kernel work prepared without a GPU, kept as
// patches in scripts/gpu/patches (branches do not outlive a session's
// checkout), must still apply to HEAD, one after another in name order, as
// scripts/gpu/bins.sh NAME=REV+PATCH+PATCH applies them for the GPU session
// that measures them. A change that breaks one rebases it (git apply -3,
// then git diff) or drops it with a line in docs/perf.md; landing one
// deletes it. They are applied to a throwaway index read from HEAD, which
// takes created, deleted and renamed files as a worktree would (one `git
// apply --check` of several checks each against the tree as it is, not as
// the ones before it leave it). Uncommitted changes are not seen.
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
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GIT_DIR=") && !strings.HasPrefix(e, "GIT_INDEX_FILE=") && !strings.HasPrefix(e, "GIT_WORK_TREE=") {
			env = append(env, e)
		}
	}
	env = append(env, "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = root, env
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
	}
	run("read-tree", "HEAD")
	for _, p := range patches {
		run("apply", "--cached", p)
	}
}
