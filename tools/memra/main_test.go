package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// asMemra, set in a child's environment, makes the test binary run as memra
// itself (for tests that signal a whole process).
const asMemra = "MEMRA_TEST_AS_MEMRA"

// TestMain lets the test binary stand in for memra as memra run's chat
// template renderer (chat.go starts os.Executable with chatCmdName), and as
// memra when asMemra is set.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == chatCmdName {
		os.Exit(runRenderChat(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(asMemra) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestVersion: memra version (and --version) prints one line naming the
// build's Go version, which the test binary's build information holds too.
func TestVersion(t *testing.T) {
	var help bytes.Buffer
	if code := run([]string{"help", "help"}, &help, io.Discard); code != 0 || !strings.Contains(help.String(), "Commands:") {
		t.Errorf("memra help help: exit %d, %q", code, help.String())
	}
	for _, arg := range []string{"version", "--version"} {
		var out bytes.Buffer
		if code := run([]string{arg}, &out, io.Discard); code != 0 {
			t.Fatalf("%s: exit %d", arg, code)
		}
		if s := out.String(); !strings.HasPrefix(s, "memra ") || !strings.Contains(s, runtime.Version()) || strings.Count(s, "\n") != 1 {
			t.Errorf("%s: %q", arg, s)
		}
	}
}
