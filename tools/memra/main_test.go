package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
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

// fullWriter fails every write, as stdout redirected to /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputWriteFails: a command whose output cannot be written exits 1
// and says so on stderr; before, memra help > /dev/full exited 0.
func TestOutputWriteFails(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "run"}, {"version"}, {"detokenize", "-h"}} {
		var stderr bytes.Buffer
		if code := run(args, fullWriter{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "write output: no space left on device") {
			t.Errorf("memra %s > full: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
		}
	}
	// A failing command keeps its own code and message.
	var stderr bytes.Buffer
	if code := run([]string{"info"}, fullWriter{}, &stderr); code != 2 || strings.Contains(stderr.String(), "write output") {
		t.Errorf("memra info (no file) > full: exit %d, stderr %q", code, stderr.String())
	}
}

// TestTempFiles: the temporary files of writes to a path are found by
// name, literally: a path with glob characters found none before.
func TestTempFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"m[1].gguf.999-0.tmp", "m[1].gguf", "m1.gguf.5-0.tmp", "m[1].gguf.tmp", "m[1].gguf.7-1.tmpx"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := tempFiles(filepath.Join(dir, "m[1].gguf"))
	if want := []string{filepath.Join(dir, "m[1].gguf.999-0.tmp")}; !slices.Equal(got, want) {
		t.Errorf("tempFiles = %q, want %q", got, want)
	}
	if got := tempFiles(filepath.Join(dir, "nodir", "x.gguf")); got != nil {
		t.Errorf("in a missing directory: %q", got)
	}
}

// TestStdoutReaderGone: output whose reader closed the pipe ends memra
// quietly with status 141, as SIGPIPE ends it on Unix; on Windows (no
// SIGPIPE; check:windows runs this under wine) it printed "write output:
// ... The pipe is being closed" and exited 1. A real pipe, its reader
// closed: info's writes fail unseen by the command, run's end it.
func TestStdoutReaderGone(t *testing.T) {
	path := tinyModel(t)
	for _, args := range [][]string{
		{"info", path},
		{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "4", "--greedy", "--device", "cpu", "--threads", "1", "--print-tokens"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var stderr bytes.Buffer
		code := run(args, w, &stderr)
		w.Close()
		if code != exitReaderGone || strings.Contains(stderr.String(), "write output") || strings.Contains(stderr.String(), "memra "+args[0]+":") {
			t.Errorf("memra %s | (closed): exit %d, stderr %q; want %d and no error", args[0], code, stderr.String(), exitReaderGone)
		}
	}
}

// TestVersionOf: the version line of a build with its commit (cut to 12
// hex digits), time and modified flag; of a checkout built without them,
// which says how to record them; and of a go install, which has none.
func TestVersionOf(t *testing.T) {
	kv := func(k, v string) debug.BuildSetting { return debug.BuildSetting{Key: k, Value: v} }
	for _, c := range []struct {
		version string
		set     []debug.BuildSetting
		want    string
	}{
		{"(devel)", []debug.BuildSetting{kv("vcs.revision", "0123456789abcdef0123"), kv("vcs.time", "2025-01-02T03:04:05Z"), kv("vcs.modified", "true")},
			"memra (devel) (commit 0123456789ab, 2025-01-02T03:04:05Z, modified, go1.26.0)"},
		{"(devel)", []debug.BuildSetting{kv("vcs.revision", "0123456789ab"), kv("vcs.modified", "false")},
			"memra (devel) (commit 0123456789ab, go1.26.0)"},
		{"(devel)", []debug.BuildSetting{kv("vcs.revision", "abc")}, "memra (devel) (commit abc, go1.26.0)"},
		{"(devel)", nil, "memra (devel) (no commit recorded: go build -buildvcs=true records it, go1.26.0)"},
		{"v0.3.0", nil, "memra v0.3.0 (go1.26.0)"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/memra-ai/memra/tools", Version: c.version}, Settings: c.set}
		if got := versionOf(bi); got != c.want {
			t.Errorf("%s %v:\n got %q\nwant %q", c.version, c.set, got, c.want)
		}
	}
}

// TestHelpSpellings: memra with no command, -h and --help print the
// command list; -version the version; help version what version does; all
// on stdout with exit status 0.
func TestHelpSpellings(t *testing.T) {
	var list bytes.Buffer
	printHelp(&list)
	for _, args := range [][]string{nil, {"-h"}, {"--help"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 || stdout.String() != list.String() || stderr.Len() != 0 {
			t.Errorf("memra %q: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-version"}, &stdout, &stderr); code != 0 || stdout.String() != version()+"\n" {
		t.Errorf("memra -version: exit %d, %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"help", "version"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "Usage: memra version\n\nPrints the build") || stderr.Len() != 0 {
		t.Errorf("memra help version: exit %d, %q, stderr %q", code, stdout.String(), stderr.String())
	}
	// Arguments past what version and help take are refused, not ignored.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "--bogus"}, "memra version: takes no arguments, got [\"--bogus\"]\nusage: memra version\n"},
		{[]string{"help", "run", "extra"}, "memra help: takes one command, got [\"run\" \"extra\"]\nusage: memra help [COMMAND]\n"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(c.args, &stdout, &stderr); code != 2 || stdout.Len() != 0 || stderr.String() != c.want {
			t.Errorf("memra %q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
}

// TestHelpFlagSpellings: "memra COMMAND -h", which memra help offers for
// every command, works for version too, and -help (which every command's
// flags take) works before a command as -version does; before, memra
// version -h and memra help -h exited 2 and memra -help was an unknown
// command.
func TestHelpFlagSpellings(t *testing.T) {
	help := func(args ...string) string {
		var out bytes.Buffer
		if code := run(args, &out, io.Discard); code != 0 {
			t.Fatalf("memra %q: exit %d", args, code)
		}
		return out.String()
	}
	list, versionHelp, runHelp := help("help"), help("help", "version"), help("help", "run")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "-h"}, versionHelp},
		{[]string{"version", "--help"}, versionHelp},
		{[]string{"version", "-help"}, versionHelp},
		{[]string{"-help"}, list},
		{[]string{"help", "-h"}, list},
		{[]string{"help", "--help"}, list},
		{[]string{"-help", "run"}, runHelp},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != 0 || stdout.String() != c.want || stderr.Len() != 0 {
			t.Errorf("memra %q: exit %d, stdout %q, stderr %q; want 0 and %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
}
