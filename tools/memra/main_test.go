package main

import (
	"os"
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
