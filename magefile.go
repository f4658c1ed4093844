//go:build mage

// Memra's build targets. "go tool mage -l" lists them; the README names the two
// a newcomer needs: "go tool mage gate" and "go tool mage test".
package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// buildVCS is the go build flag that records the commit in a binary (memra
// version prints it, bench's reports keep it): in workspace mode Go leaves
// it out unless asked, and asking fails outside a git checkout (a copied
// tree), where the flag stays at its default.
func buildVCS() string {
	if err := exec.Command("git", "rev-parse", "--is-inside-work-tree").Run(); err != nil { // quiet: not a failure
		return "-buildvcs=auto"
	}
	return "-buildvcs=true"
}

// modules are the workspace's Go modules, in dependency order.
var modules = []string{"gguf", "kernels", "gen", "engine", "tools"}

// pkgs returns the `./mod/...` patterns of every module, for one go command.
func pkgs() []string {
	var out []string
	for _, m := range modules {
		out = append(out, "./"+m+"/...")
	}
	return out
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Gate runs the CUDA-graph gate (graph == eager, token for token) on MODEL or the built-in default model.
//
// Environment: MODEL (path to a .gguf; empty = built-in default), P (prompt
// length, 64), N (generated tokens, 256), BENCH=1 adds the speed line,
// MEMRA_KV_FP8=1 an FP8 KV cache. Without a GPU it says so and runs the CPU
// part. The exit status is the gate's: 0 PASS (or the CPU part), 1 FAIL, 2
// usage or setup error (go run would turn every failure into 1).
func Gate() error {
	var args []string
	if m := os.Getenv("MODEL"); m != "" {
		args = append(args, m)
	} else {
		args = append(args, "default")
	}
	args = append(args, env("P", "64"), env("N", "256"))
	switch v := os.Getenv("BENCH"); v {
	case "1":
		args = append(args, "bench")
	case "", "0":
	default:
		return mg.Fatalf(2, "BENCH=%q: want 1 (add the speed line) or 0 or unset", v)
	}
	return runTool("gate", args, "1 FAIL, 2 usage or setup error")
}

// runTool builds ./tools/NAME (CGO_ENABLED=0, with its commit recorded) and runs
// it with args, passing its exit status through: go run would turn every
// failure into 1. codes says what the tool's statuses mean. Neither a
// failed build nor a signal exits 1, which is the tool's own failure (the
// gate's FAIL): a build error, or a tool that does not start, is 2, a
// setup error, and a signal the shell's 128+n (130 for ^C).
//
// SIGINT, SIGTERM and SIGHUP are caught while the tool builds and runs:
// a SIGTERM or SIGHUP (a closed terminal) would end mage at once and leave
// the tool's folder behind, and a ^C that stops go build exited 2. A signal
// to the process group reaches the tool too; one to this process alone is
// passed on to it if it has not ended within 2 s.
func runTool(name string, args []string, codes string) error {
	sigs := make(chan os.Signal, 1)
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) { // nohup's SIGHUP stays ignored
			signal.Notify(sigs, s)
		}
	}
	defer signal.Stop(sigs)
	dir, err := os.MkdirTemp("", "memra-"+name+"-")
	if err != nil {
		return mg.Fatalf(2, "making a folder for %s's binary: %v (set TMPDIR to a writable folder)", name, err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, name)
	buildErr := sh.RunWith(map[string]string{"CGO_ENABLED": "0"}, "go", "build", buildVCS(), "-o", bin, "./tools/"+name)
	select {
	case s := <-sigs:
		return mg.Fatalf(128+int(s.(syscall.Signal)), "%s not run: %v while building it", name, s)
	default:
	}
	if buildErr != nil {
		return mg.Fatalf(2, "building %s: %v", name, buildErr)
	}
	// Not sh.Exec: it expands $VARS in args (a MODEL path with a $ in it)
	// and reports a killed process as one that did not start, status 1.
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return mg.Fatalf(2, "running %s: %v (a TMPDIR mounted noexec? set TMPDIR to a folder that may run programs)", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case s := <-sigs:
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
			cmd.Process.Signal(s)
			err = <-done
		}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return err // nil, or Wait failed
	}
	if code := exit.ExitCode(); code > 0 {
		return mg.Fatalf(code, "%s exited with status %d (%s)", name, code, codes)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return mg.Fatalf(128+int(ws.Signal()), "%s did not finish: %v", name, err)
	}
	return fmt.Errorf("%s did not finish: %w", name, err)
}

// Test runs every module's tests (no GPU needed; GPU tests skip), go vet, and short fuzzes of the GGUF parser and block recoder, the tokenizer, the kernel-image check, the model loader, the CPU's vector dot kernels and the converter's and CLI's input parsers.
func Test() error {
	mg.SerialDeps(Check.Vet)
	args := append([]string{"test", "-count=1"}, pkgs()...)
	if err := sh.RunWithV(map[string]string{"CGO_ENABLED": "0"}, "go", args...); err != nil {
		return err
	}
	return Fuzz{}.Short()
}

// Check holds the static checks.
type Check mg.Namespace

// ports are the platforms besides this one that the code must build and vet
// for: linux/arm64 for Grace Hopper hosts (GH200) and windows/amd64, both of
// which ship NVIDIA drivers with the CUDA driver API that engine/cuda opens.
// Neither has run the GPU path; check:arm64 and check:windows run the tests.
var ports = []struct{ goos, goarch string }{{"linux", "arm64"}, {"windows", "amd64"}}

// Vet runs go vet on every module with CGO_ENABLED=0 (the CUDA path must build without cgo), for this platform and for linux/arm64 and windows/amd64, and builds each module outside the workspace.
//
// The ports vet from a cold build cache in ~50 s each on a 2-core machine:
// they catch a platform-specific file (assembly, a syscall) that leaves
// another platform without its counterpart. The build with GOWORK=off
// catches a module whose go.mod lacks a sibling it imports, which go.work
// would otherwise hide from everyone who builds one module on its own.
func (Check) Vet() error {
	args := append([]string{"vet"}, pkgs()...)
	if err := sh.RunWithV(map[string]string{"CGO_ENABLED": "0"}, "go", args...); err != nil {
		return err
	}
	for _, m := range modules {
		fmt.Printf("go build ./... in %s with GOWORK=off\n", m)
		cmd := exec.Command("go", "build", "./...")
		cmd.Dir = m
		cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s does not build outside the workspace (does its go.mod require and replace the sibling modules it imports?): %w", m, err)
		}
	}
	for _, p := range ports {
		fmt.Printf("go vet for %s/%s\n", p.goos, p.goarch)
		if err := sh.RunWithV(map[string]string{"CGO_ENABLED": "0", "GOOS": p.goos, "GOARCH": p.goarch}, "go", args...); err != nil {
			return fmt.Errorf("vet for %s/%s: %w", p.goos, p.goarch, err)
		}
	}
	return nil
}

// Arm64 runs every module's short tests built for linux/arm64 under qemu-user (Grace Hopper hosts; no GPU, so the GPU tests skip).
//
// Needs qemu-aarch64 and an arm64 C library for the packages that open the
// driver with purego (Debian: apt-get install qemu-user libc6-arm64-cross),
// and, for the tests that start their own binary again (the CLI's and the
// gate's), qemu registered with binfmt_misc (Debian's qemu-user ships the
// entry: /usr/lib/binfmt.d/qemu-aarch64.conf). QEMU_LD_PREFIX names the C
// library's root (default /usr/aarch64-linux-gnu). Not part of test: CI's
// machine need not have qemu. About 2 minutes on a 2-core machine with a warm build cache.
func (Check) Arm64() error {
	if runtime.GOARCH == "arm64" && runtime.GOOS == "linux" {
		return testShort()
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		return errors.New("check:arm64 needs qemu-aarch64 (Debian: apt-get install qemu-user libc6-arm64-cross)")
	}
	root := env("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu")
	if _, err := os.Stat(filepath.Join(root, "lib", "ld-linux-aarch64.so.1")); err != nil {
		return fmt.Errorf("check:arm64 needs an arm64 C library under %s (Debian: apt-get install libc6-arm64-cross; or set QEMU_LD_PREFIX): %w", root, err)
	}
	if _, err := os.Stat("/proc/sys/fs/binfmt_misc/qemu-aarch64"); err != nil {
		return errors.New("check:arm64 needs qemu-aarch64 registered with binfmt_misc, for the tests that run their own binary again: as root, mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc (if it is not), then cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register")
	}
	arm := map[string]string{"CGO_ENABLED": "0", "GOARCH": "arm64", "QEMU_LD_PREFIX": root}
	args := append([]string{"test", "-short", "-count=1", "-exec", qemu}, pkgs()...)
	if err := sh.RunWithV(arm, "go", args...); err != nil {
		return err
	}
	return sameFiles("linux/arm64", arm, nil)
}

// Windows runs every module's short tests built for windows/amd64 under wine (no GPU: engine/cuda reports no driver there), and compares synth's files with this machine's.
//
// Needs wine64 (Debian: apt-get install wine64; its wine64 is
// /usr/lib/wine/wine64) of 8.13 or later: Go's runtime needs
// bcryptprimitives.dll's ProcessPrng, which older wine lacks ("fatal
// error: bcryptprimitives.dll not found"). On Debian bookworm's wine 8.0,
// apt-get install binutils-mingw-w64-x86-64 as well, and this target
// gives its prefix a bcryptprimitives.dll that forwards ProcessPrng to
// advapi32's RtlGenRandom. Wine runs in a prefix of its own in a
// temporary folder. The tests build with an overlay that has os.RemoveAll
// use the delete call older Windows needs: wine 8.0 refuses Go's newer one
// (Invalid function), which failed every test's TempDir cleanup. Not part
// of test: CI's machine need not have wine. About 80 s on a 2-core
// machine with a warm build cache.
func (Check) Windows() error {
	wine, err := exec.LookPath("wine64")
	if err != nil {
		if wine, err = exec.LookPath("/usr/lib/wine/wine64"); err != nil {
			return errors.New("check:windows needs wine64 8.13 or later (Debian: apt-get install wine64, and on bookworm's 8.0 binutils-mingw-w64-x86-64 too)")
		}
	}
	dir, err := os.MkdirTemp("", "memra-wine-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	win := map[string]string{"CGO_ENABLED": "0", "GOOS": "windows", "GOARCH": "amd64", "WINEDEBUG": "-all", "WINEPREFIX": filepath.Join(dir, "prefix")}
	if err := sh.RunWith(win, wine, "wineboot", "-i"); err != nil {
		return fmt.Errorf("wineboot: %w", err)
	}
	// Ended before the prefix is removed, or its last save makes it again.
	defer sh.RunWith(win, filepath.Join(filepath.Dir(wine), "wineserver"), "-k")
	if err := wineShims(win, dir); err != nil {
		return err
	}
	args := append([]string{"test", "-short", "-count=1", "-overlay", filepath.Join(dir, "overlay.json"), "-exec", wine}, pkgs()...)
	if err := sh.RunWithV(win, "go", args...); err != nil {
		return err
	}
	return sameFiles("windows/amd64", win, []string{wine})
}

// wineShims readies wine's prefix and dir for Go's binaries: a
// bcryptprimitives.dll where wine has none (before 8.13), and dir's
// overlay.json, which sets internal/syscall/windows's
// TestDeleteatFallback, so that os.RemoveAll deletes as on Windows before
// 10 1607 (wine 8.0 answers Go's FileDispositionInformationEx with
// ERROR_INVALID_FUNCTION, which Go does not fall back from).
func wineShims(win map[string]string, dir string) error {
	sys32 := filepath.Join(win["WINEPREFIX"], "drive_c", "windows", "system32")
	if _, err := os.Stat(filepath.Join(sys32, "bcryptprimitives.dll")); err != nil {
		if _, err := exec.LookPath("x86_64-w64-mingw32-ld"); err != nil {
			return errors.New("this wine has no bcryptprimitives.dll, which Go's runtime needs (wine 8.13 has it): install a newer wine, or binutils-mingw-w64-x86-64 (Debian) so that check:windows can give it one")
		}
		def, obj := filepath.Join(dir, "bcryptprimitives.def"), filepath.Join(dir, "empty.o")
		if err := os.WriteFile(def, []byte("LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng = advapi32.SystemFunction036\n"), 0o644); err != nil {
			return err
		}
		if err := sh.Run("x86_64-w64-mingw32-as", "-o", obj, os.DevNull); err != nil {
			return err
		}
		if err := sh.Run("x86_64-w64-mingw32-ld", "--dll", "-e", "0", "-o", filepath.Join(sys32, "bcryptprimitives.dll"), def, obj); err != nil {
			return err
		}
	}
	goroot, err := sh.Output("go", "env", "GOROOT")
	if err != nil {
		return err
	}
	at := filepath.Join(goroot, "src", "internal", "syscall", "windows", "at_windows.go")
	src, err := os.ReadFile(at)
	if err != nil {
		return err
	}
	const decl = "var TestDeleteatFallback bool"
	if !strings.Contains(string(src), decl) {
		return fmt.Errorf("%s no longer declares %q: check:windows's overlay needs updating", at, decl)
	}
	patched := filepath.Join(dir, "at_windows.go")
	if err := os.WriteFile(patched, []byte(strings.Replace(string(src), decl, "var TestDeleteatFallback = true", 1)), 0o644); err != nil {
		return err
	}
	overlay := fmt.Sprintf(`{"Replace":{%q:%q}}`, at, patched)
	return os.WriteFile(filepath.Join(dir, "overlay.json"), []byte(overlay), 0o644)
}

// sameFiles builds the quantisers' hash program and memra for this machine
// and with the environment port, runs both (port's under the command
// runner, when it has one), and fails unless the quantisers and synth at
// every type give the same bytes: Go fuses a*b+c into an FMA on arm64 and
// not on amd64, which could move a rounding.
func sameFiles(name string, port map[string]string, runner []string) error {
	dir, err := os.MkdirTemp("", "memra-port-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	host := map[string]string{"CGO_ENABLED": "0"}
	for side, env := range map[string]map[string]string{"host": host, "port": port} {
		for _, pkg := range []string{"./gguf/internal/quanthash", "./tools/memra"} {
			if err := sh.RunWith(env, "go", "build", "-o", filepath.Join(dir, side, filepath.Base(pkg)+".exe"), pkg); err != nil {
				return err
			}
		}
	}
	run := func(side string, args ...string) (string, error) {
		cmd, env := append([]string{filepath.Join(dir, side, args[0]+".exe")}, args[1:]...), host
		if side == "port" {
			cmd, env = append(append([]string(nil), runner...), cmd...), port
		}
		out, err := sh.OutputWith(env, cmd[0], cmd[1:]...)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", side, strings.Join(args, " "), err)
		}
		return out, nil
	}
	types := []string{"f32", "f16", "bf16", "q8_0", "q4_k", "q5_k", "q6_k", "q3_k", "q5_0", "q4_0", "iq4_nl", "iq4_xs"}
	for _, side := range []string{"host", "port"} {
		for _, typ := range types {
			if _, err := run(side, "memra", "synth", "--arch", "qwen35", "--preset", "tiny", "--type", typ, "-o", filepath.Join(dir, side, typ+".gguf")); err != nil {
				return err
			}
		}
	}
	want, err := run("host", "quanthash")
	if err != nil {
		return err
	}
	got, err := run("port", "quanthash")
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("the quantisers differ on %s:\nhost:\n%s\n%s:\n%s", name, want, name, got)
	}
	for _, typ := range types {
		a, err := os.ReadFile(filepath.Join(dir, "host", typ+".gguf"))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, "port", typ+".gguf"))
		if err != nil {
			return err
		}
		if sha256.Sum256(a) != sha256.Sum256(b) {
			return fmt.Errorf("memra synth --preset tiny --type %s writes another file on %s", typ, name)
		}
	}
	fmt.Printf("%s quantises as this machine does (%d lines of hashes) and synth writes the same tiny files at %d types\n", name, strings.Count(want, "\n")+1, len(types))
	return nil
}

// testShort runs the short tests on this machine (check:arm64 on an arm64 host).
func testShort() error {
	args := append([]string{"test", "-short", "-count=1"}, pkgs()...)
	return sh.RunWithV(map[string]string{"CGO_ENABLED": "0"}, "go", args...)
}

// Race runs every module's short tests under the race detector (needs cgo and a C compiler, unlike the rest).
//
// Not part of test: CI's machine need not have a C compiler. The GPU tests
// skip here; scripts/gpu/run287.sh runs them under the detector on a GPU.
func (Check) Race() error {
	// go test runs the first word of CC, which may carry flags or a
	// wrapper ("ccache gcc", "gcc -m64").
	cc := env("CC", "gcc")
	if f := strings.Fields(cc); len(f) > 0 {
		cc = f[0]
	}
	if _, err := exec.LookPath(cc); err != nil {
		return fmt.Errorf("check:race needs cgo and a C compiler (%s: %v): install gcc, or set CC", cc, err)
	}
	args := append([]string{"test", "-race", "-short"}, pkgs()...)
	return sh.RunWithV(map[string]string{"CGO_ENABLED": "1"}, "go", args...)
}

// Fmt fails when gofmt would change a file.
func (Check) Fmt() error {
	out, err := sh.Output("gofmt", "-l", ".")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("gofmt would change:\n%s", out)
	}
	return nil
}

// Fuzz holds the fuzz runs.
type Fuzz mg.Namespace

// fuzzTargets are the fuzz tests: the GGUF parser and block recoder, the tokenizer's encoder,
// the bounds check of kernel images, a model file through the loader and
// the CPU backend, and the CPU's AVX2 dot kernels against its Go ones (200,000
// executions: 5 s on a 2-core machine; a no-op without AVX2). short is Short's count of executions: the loader's
// target finds new coverage often, and minimising each new input (up to
// FUZZMINIMIZE) is most of its time, so it runs fewer (50,000: 6-8 s from
// a clean fuzz cache on a 2-core machine, where 200,000 took 133 s).
//
// The rest fuzz the parsers of untrusted input outside the GGUF path:
// safetensors headers, the shard index, config.json → Spec (as bytes and as
// fuzzed numbers), tokenizer.json, the tokenizer built from hostile GGUF
// metadata, and memra's --prompt-tokens. Their counts are sized the same
// way, to 1-9 s each from a clean fuzz cache on a 2-core machine
// (FuzzSafetensors took 15 s for 200,000); FuzzCheckpointIndex and
// FuzzReadVocab write a checkpoint directory and FuzzFromGGUF builds a
// whole tokenizer per input, a few hundred to a few thousand a second, so
// they run only 2,000-5,000.
var fuzzTargets = []struct{ pkg, name, short string }{
	{"./gguf", "FuzzOpen", "200000x"},
	{"./gguf", "FuzzRecode", "200000x"},
	{"./engine/tokenizer", "FuzzEncode", "200000x"},
	{"./engine/cuda", "FuzzCheckImage", "200000x"},
	{"./engine/cpu", "FuzzLoadDecode", "50000x"},
	{"./engine/cpu", "FuzzDotSIMD", "200000x"},
	{"./engine/convert", "FuzzSafetensors", "50000x"},
	{"./engine/convert", "FuzzCheckpointIndex", "2000x"},
	{"./engine/convert", "FuzzHFConfig", "50000x"},
	{"./engine/convert", "FuzzSpecDims", "20000x"},
	{"./engine/convert", "FuzzReadVocab", "2000x"},
	{"./engine/tokenizer", "FuzzFromGGUF", "5000x"},
	{"./tools/memra", "FuzzParseIDs", "100000x"},
}

// fuzz runs every fuzz target for d each (its short count when d is ""),
// minimising each new input for at most minimize (go test's
// -fuzzminimizetime). CGO_ENABLED=0 as the tests: the code under fuzz is
// the cgo-free build users run, and its packages are the tests' compiled ones.
func fuzz(d, minimize string) error {
	for _, f := range fuzzTargets {
		t := d
		if t == "" {
			t = f.short
		}
		if err := sh.RunWithV(map[string]string{"CGO_ENABLED": "0"}, "go", "test", f.pkg, "-run=^$", "-fuzz=^"+f.name+"$", "-fuzztime="+t, "-fuzzminimizetime="+minimize); err != nil {
			return err
		}
	}
	return nil
}

// Short fuzzes the GGUF parser and block recoder, the tokenizer, the kernel-image check, the model loader, the CPU's vector dot kernels and the converter's and CLI's input parsers for FUZZTIME each (default each target's count in fuzzTargets: 200000x executions, 50000x the loader, 2000x-100000x the input parsers), as CI does.
//
// The budget is a count, not a duration: with a duration, go1.26's fuzz
// coordinator can report its own deadline as a failure ("context deadline
// exceeded", no input written; go.dev/issue/75804, fixed in go1.27), which
// failed a CI run of FuzzOpen in session 31. 200,000 executions took 12-22 s a
// target on a 2-core development machine (9,500-17,000 a second); the whole
// of `mage test` takes 2-3.5 minutes on a fresh clone there (session 46's CI:
// 137 s).
//
// Each new input is minimised for at most FUZZMINIMIZE (default 2s): with go
// test's default of 60 s both workers of a 2-core machine spent all but the
// first 3 s of FuzzEncode's 20 minimising the first inputs that found new
// coverage (CI: 14,961 executions and no new input; with 2 s and a clean
// fuzz cache, 88,385 and 54).
func (Fuzz) Short() error { return fuzz(os.Getenv("FUZZTIME"), env("FUZZMINIMIZE", "2s")) }

// Long fuzzes the GGUF parser and block recoder, the tokenizer, the kernel-image check, the model loader, the CPU's vector dot kernels and the converter's and CLI's input parsers for FUZZTIME each (default 10m).
//
// FUZZMINIMIZE bounds the minimisation of a failing input (default 60s). A duration, so it can end in go1.26's spurious "context deadline exceeded"
// (see Short); a count (FUZZTIME=10000000x, ~10 min at Short's rates) avoids
// it.
func (Fuzz) Long() error { return fuzz(env("FUZZTIME", "10m"), env("FUZZMINIMIZE", "60s")) }

// Gen holds the code generators.
type Gen mg.Namespace

// All regenerates the driver binding, kernel launchers and capture tables (go generate).
func (Gen) All() error {
	return sh.RunV("go", "generate", "./engine/...", "./gen/...")
}

// Verify regenerates and fails when that changed a file: the generated files were stale.
//
// It compares the files under engine, gen and kernels before and after
// generating, so edits of your own are not blamed on go generate; with such
// edits it checks the working tree, and it says so (commit to check what is
// committed; CI's test target checks that on a clean clone through the
// generators' TestCommitted* tests).
func (Gen) Verify() error {
	before, err := genTree()
	if err != nil {
		return err
	}
	if err := (Gen{}).All(); err != nil {
		return err
	}
	after, err := genTree()
	if err != nil {
		return err
	}
	var changed []string
	for p, h := range after {
		if before[p] != h {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		return fmt.Errorf("go generate changed %d file(s); commit the regenerated files:\n  %s", len(changed), strings.Join(changed, "\n  "))
	}
	if out, err := sh.Output("git", "status", "--porcelain", "--", "engine", "gen", "kernels"); err == nil && out != "" {
		fmt.Printf("gen:verify: generated files up to date in the working tree, which has uncommitted changes:\n%s\n", out)
	}
	return nil
}

// genTree maps every file git sees under engine, gen and kernels (tracked,
// or untracked and not ignored) to a hash of its content.
func genTree() (map[string][32]byte, error) {
	out, err := sh.Output("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "engine", "gen", "kernels")
	if err != nil {
		return nil, err
	}
	tree := map[string][32]byte{}
	for _, p := range strings.Split(out, "\x00") {
		if p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return nil, err
		}
		tree[p] = sha256.Sum256(b)
	}
	return tree, nil
}

// Cuda holds the targets that need the CUDA toolkit or prepare runs on the GPU machine.
type Cuda mg.Namespace

// Kernels compiles kernels/*.cu with nvcc into kernels/memra.fatbin and writes its manifest.
//
// Run it on a machine with the CUDA toolkit (nvcc and cuobjdump; no GPU
// needed) and commit both outputs. NVCC names another nvcc (its cuobjdump
// is the one beside it), CCBIN a host compiler for it (nvcc -ccbin) when
// the default is too new. MEMRA_ARCHS=90 builds SASS for those SMs only and
// no PTX, in about a quarter of the time: for an experiment's binaries
// (scripts/gpu/bins.sh BINS_ARCHS), never to commit (the kernels test
// rejects its manifest).
func (Cuda) Kernels() error {
	args := []string{"run", "./kernels/internal/build", "-dir", "kernels"}
	if v := os.Getenv("NVCC"); v != "" {
		args = append(args, "-nvcc", v)
	}
	if v := os.Getenv("CCBIN"); v != "" {
		args = append(args, "-ccbin", v)
	}
	if v := os.Getenv("MEMRA_ARCHS"); v != "" {
		args = append(args, "-arch", v)
	}
	return sh.RunV("go", args...)
}

// Sassdiff lists the kernels whose machine code differs between the fatbin OLD and kernels/memra.fatbin.
//
// Each with its instruction counts by architecture; it needs cuobjdump (NVCC
// names the toolkit, as for cuda:kernels) and builds nothing. After a kernel
// change: git show main:kernels/memra.fatbin > /tmp/old.fatbin, then
// go tool mage cuda:sassdiff /tmp/old.fatbin shows that only the kernels meant
// to change did.
func (Cuda) Sassdiff(old string) error {
	args := []string{"run", "./kernels/internal/build", "-dir", "kernels", "-sassdiff", old}
	if v := os.Getenv("NVCC"); v != "" {
		args = append(args, "-nvcc", v)
	}
	return sh.RunV("go", args...)
}

// Bins cross-builds cgo-free (CGO_ENABLED=0) binaries and test binaries into bin/ for the GPU machine.
//
// The GPU machine is linux/amd64 (GOOS and GOARCH are set so); an arm64
// host (Grace) needs GOARCH=arm64 in a build of its own.
func (Cuda) Bins() error {
	if err := os.MkdirAll("bin", 0o755); err != nil {
		return err
	}
	e := map[string]string{"CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": "amd64"}
	vcs := buildVCS()
	for _, t := range []string{"memra", "gate", "bench"} {
		if err := sh.RunWithV(e, "go", "build", vcs, "-o", filepath.Join("bin", t), "./tools/"+t); err != nil {
			return err
		}
	}
	// Test binaries of the packages whose GPU tests check the engine
	// (engine/internal/evtime's, of the experiments' timer, is left out).
	for _, p := range []string{"engine/cuda", "engine/gpu"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		name := strings.ReplaceAll(p, "/", "_") + ".test"
		if err := sh.RunWithV(e, "go", "test", "-c", "-o", filepath.Join("bin", name), "./"+p); err != nil {
			return err
		}
	}
	return nil
}

// Bench runs tools/bench on the GPU (MODEL or the synth presets); results go to results/.
//
// Environment: MODEL (a .gguf, or several comma-separated; empty = the
// synth presets), OUT (the results folder, default results), ARGS (more
// bench flags, split at spaces: ARGS='-quick', ARGS='-ctx 1024 -reps 5
// -compare results/latest.json'; go run ./tools/bench -h lists them). The
// exit status is bench's: 0 success, 1 a model failed or the results could
// not be written, 2 usage, setup error or no GPU.
func Bench() error {
	// -out only when OUT is set: bench's default is the same, and it
	// refuses -out with -compare OLD.json NEW.json, which runs nothing.
	var args []string
	if o := os.Getenv("OUT"); o != "" {
		args = append(args, "-out", o)
	}
	if m := os.Getenv("MODEL"); m != "" {
		args = append(args, "-model", m)
	}
	a := os.Getenv("ARGS")
	if strings.ContainsAny(a, `"'\`) {
		return mg.Fatalf(2, "ARGS=%q: ARGS is split at spaces, with no quoting, so bench would get the quotes or backslashes in its words: leave them out (for a path with a space, run go run ./tools/bench yourself)", a)
	}
	args = append(args, strings.Fields(a)...)
	return runTool("bench", args, "1 a model failed or the results could not be written, 2 usage, setup error or no GPU")
}
