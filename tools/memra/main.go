// Command memra is the user CLI: inspect, tokenize, convert, synthesize and run
// hybrid models from GGUF files. "memra help" lists the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/memra-ai/memra/tools/internal/flagx"
	"github.com/memra-ai/memra/tools/internal/sigctx"
)

// command is one subcommand. Each lives in its own cmd_*.go file and is listed
// in commands below.
type command struct {
	name    string
	summary string // one line for "memra help"
	usage   string // argument synopsis, e.g. "[--json] FILE.gguf"
	// run parses args with its own FlagSet and does the work. It writes
	// results to stdout and diagnostics to stderr.
	run func(args []string, stdout, stderr io.Writer) error
}

// commands returns the subcommand table.
func commands() []command {
	cmds := []command{
		// Each cmd_*.go file contributes one entry here.
		convertCmd(),
		infoCmd(),
		synthCmd(),
		runCmd(),
		tokenizeCmd(),
		detokenizeCmd(),
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

// errUsage marks an error caused by bad arguments: the caller prints usage.
var errUsage = errors.New("usage")

// writeFile runs a long file write (convert, synth) under a context that
// SIGINT, SIGTERM and SIGHUP cancel (sigctx), so that a ^C stops it at its
// next buffer and its temporary file is removed, instead of the process
// dying with the partial file in place. Temporary files of other writes to
// out are named first: one running now, or one killed outright (SIGKILL, out
// of memory), which left its file for the user to remove.
func writeFile(out string, stderr io.Writer, write func(context.Context) error) error {
	if old := tempFiles(out); len(old) > 0 {
		fmt.Fprintf(stderr, "memra: %s: temporary files of another write to %s, running or killed (then remove them to free the space)\n", strings.Join(old, ", "), out)
	}
	w := sigctx.New()
	defer w.Stop()
	err := write(w)
	if err != nil {
		if ie := w.Interrupted(out + " not written (its partial temporary file was removed)"); ie != nil {
			return ie
		}
	}
	return err
}

// tempFiles lists the temporary files of writes to out (out.PID-N.tmp,
// convert.WriteFileAtomic's), matched literally: out may hold *, ? or [,
// which a glob pattern would read as its own.
func tempFiles(out string) []string {
	dir, base := filepath.Split(out)
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil
	}
	var old []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, base+".") && strings.HasSuffix(n, ".tmp") && len(n) > len(base)+len(".tmp") {
			old = append(old, filepath.Join(dir, n))
		}
	}
	return old
}

// newFlagSet is command name's FlagSet. Its -h prints the synopsis, about
// (what the command does, with a trailing newline), the flags and examples,
// to out (the commands pass stdout: help asked for, as with memra help
// COMMAND, pipes into less); parseFlags keeps the flag package's own report
// of a bad flag off it.
func newFlagSet(name, synopsis, about, examples string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: memra %s %s\n\n%s\nFlags:\n", name, synopsis, about)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), "\nExamples:\n%s", examples)
	}
	return fs
}

// parseFlags parses args into fs. A flag it rejects becomes a usage error,
// which run prints once with the synopsis and exit status 2; the flag
// package would print the error and every flag first and leave run to print
// the error again with status 1. -h prints fs's help and returns
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	}
	return fmt.Errorf("%w: %v", errUsage, err)
}

// parseInterspersed parses fs's flags wherever they stand among args and
// returns the other arguments in order, so that "memra info model.gguf
// --json" works as "memra info --json model.gguf" does.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	return flagx.Interspersed(fs, args, func(a []string) error { return parseFlags(fs, a) })
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command args names. Output that could not be written (a
// full disk, a quota) is a failure even when the command succeeded, so that
// memra info --json > full/x.json does not exit 0 with x.json cut. Output
// whose reader went away (memra info x.gguf | head) ends memra quietly with
// exit status 141, as SIGPIPE does on Unix (where Go exits on it before
// this sees the write, and memra stops it during a model write): on
// Windows, which has no SIGPIPE, the write fails and comes here.
func run(args []string, stdout, stderr io.Writer) int {
	out := &recordingWriter{w: stdout}
	code := dispatch(args, out, stderr)
	switch {
	case out.err == nil || code != 0:
		return code
	case errors.Is(out.err, errStdoutGone):
		return exitReaderGone
	}
	fmt.Fprintf(stderr, "memra: write output: %v\n", out.err)
	return 1
}

// errStdoutGone marks a write to stdout that failed because its reader
// closed the pipe, so that dispatch does not report it as the command's
// failure.
var errStdoutGone = errors.New("standard output's reader closed the pipe")

// exitReaderGone is the shell's status for a process ended by SIGPIPE.
const exitReaderGone = 141

// recordingWriter passes writes on and keeps the first error.
type recordingWriter struct {
	w   io.Writer
	err error
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil && sigctx.ReaderGone(err) {
		err = fmt.Errorf("%w: %w", errStdoutGone, err)
	}
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == chatCmdName { // hidden: memra run's template renderer (chat.go)
		return runRenderChat(args[1:], os.Stdin, stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		if len(args) == 2 && isHelpFlag(args[1]) { // memra COMMAND -h, as memra help offers it
			fmt.Fprintln(stdout, versionHelp)
			return 0
		}
		if len(args) > 1 {
			fmt.Fprintf(stderr, "memra version: takes no arguments, got %q\nusage: memra version\n", args[1:])
			return 2
		}
		fmt.Fprintln(stdout, version())
		return 0
	}
	if len(args) == 0 || args[0] == "help" || isHelpFlag(args[0]) {
		if len(args) > 2 {
			// "memra help run extra": a typo or a misplaced flag, not a request
			// to be passed over in silence.
			fmt.Fprintf(stderr, "memra help: takes one command, got %q\nusage: memra help [COMMAND]\n", args[1:])
			return 2
		}
		if len(args) > 1 && (args[1] == "help" || isHelpFlag(args[1])) {
			printHelp(stdout)
			return 0
		}
		if len(args) > 1 && args[1] == "version" {
			fmt.Fprintln(stdout, versionHelp)
			return 0
		}
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					// Asked for, so on stdout: memra help run | less.
					_ = c.run([]string{"-h"}, stdout, stdout)
					return 0
				}
			}
			fmt.Fprintf(stderr, "memra help: unknown command %q; run \"memra help\" for the list\n", args[1])
			return 2
		}
		printHelp(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var ie *sigctx.Interrupted
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errStdoutGone):
			return exitReaderGone // nobody reads the output: nothing to say (run)
		case errors.As(err, &ie):
			fmt.Fprintf(stderr, "memra %s: %v\n", c.name, err)
			return ie.Code
		case errors.Is(err, errUsage):
			msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
			fmt.Fprintf(stderr, "memra %s: %s\nusage: memra %s %s\nRun \"memra help %s\" for every flag and examples.\n", c.name, msg, c.name, c.usage, c.name)
			return 2
		default:
			fmt.Fprintf(stderr, "memra %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "memra: unknown command %q; run \"memra help\" for the list\n", args[0])
	return 2
}

// isHelpFlag reports whether a asks for help as the flag package's -h does
// (it takes -h, -help and --help).
func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// versionHelp is memra help version's text.
const versionHelp = "Usage: memra version\n\nPrints the build: the module's version, the commit and its time when recorded, and Go's version."

// version is "memra VERSION (commit C, time[, modified], goX)" from the build
// information Go records: the module's version when installed with go
// install, the VCS commit when built in a checkout.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "memra (no build information)"
	}
	return versionOf(bi)
}

// versionOf is version's line for the build information bi (a test binary
// records no commit, so the commit's part is tested through this).
func versionOf(bi *debug.BuildInfo) string {
	var parts []string
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	if r := s["vcs.revision"]; r != "" {
		parts = append(parts, "commit "+r[:min(12, len(r))])
	}
	if t := s["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	if s["vcs.modified"] == "true" {
		parts = append(parts, "modified")
	}
	if s["vcs.revision"] == "" && bi.Main.Version == "(devel)" {
		parts = append(parts, "no commit recorded: go build -buildvcs=true records it")
	}
	parts = append(parts, bi.GoVersion)
	return fmt.Sprintf("memra %s (%s)", bi.Main.Version, strings.Join(parts, ", "))
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "memra runs hybrid Qwen3.5 (Gated DeltaNet + attention) and plain Qwen3 models from GGUF files.")
	fmt.Fprintln(w, "\nUsage: memra COMMAND [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-11s %s\n", "version", "print the build: module version, commit, Go")
	fmt.Fprintf(w, "  %-11s %s\n", "help", "this list, or with a COMMAND its flags and examples")
	fmt.Fprintln(w, "\nRun \"memra help COMMAND\" (or \"memra COMMAND -h\") for a command's flags, \"memra version\" for the build.")
	fmt.Fprintln(w, "\nExit status: 0 done; 1 the command failed (a file, the model, the device, a write); 2 usage;")
	fmt.Fprintln(w, "130, 143, 129 on ^C, SIGTERM, SIGHUP; 141 when stdout's reader went away (memra info x.gguf | head).")
}
