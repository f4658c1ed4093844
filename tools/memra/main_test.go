package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for memra as memra run's chat
// template renderer (chat.go starts os.Executable with chatCmdName).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == chatCmdName {
		os.Exit(runRenderChat(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
