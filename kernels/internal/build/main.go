// Command build compiles the kernel sources into one fatbin and writes its
// manifest (nvcc version, flags, sha256 of every source and of the fatbin,
// ptxas's sm_90 register/shared/stack/spill report per kernel, and from
// cuobjdump's sm_90 listing each kernel's instruction count and loop sizes).
//
//	go run ./kernels/internal/build -dir kernels [-nvcc nvcc] [-ccbin g++-11]
//
// It needs nvcc and cuobjdump (the same toolkit) and no GPU, and prints the
// per-kernel report. The fatbin and the manifest are replaced together, and
// only once both are complete: a failed build leaves the committed pair.
//
//	go run ./kernels/internal/build -dir kernels -sassdiff OLD.fatbin
//
// builds nothing: it lists the functions whose machine code differs between
// OLD and the directory's fatbin, architecture by architecture (cuobjdump
// only), the check that a kernel change left every other kernel as it was.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/memra-ai/memra/kernels/internal/kbuild"
)

func main() {
	dir := flag.String("dir", "kernels", "the kernels directory (holds memra.cu)")
	nvcc := flag.String("nvcc", "nvcc", "the nvcc to run")
	ccbin := flag.String("ccbin", "", "host compiler for nvcc (-ccbin), when the default is too new for it")
	archs := flag.String("arch", "", "for an experiment: SASS for these `SMs` only (comma-separated, e.g. 90; must include 90, whose report the manifest keeps) and no PTX")
	sassdiff := flag.String("sassdiff", "", "build nothing; list the functions whose SASS differs between `OLD` (a fatbin, e.g. git show main:kernels/memra.fatbin > /tmp/old.fatbin) and the directory's")
	flag.Parse()
	if *sassdiff != "" {
		if err := diffSASS(*sassdiff, filepath.Join(*dir, kbuild.FatbinName), *nvcc); err != nil {
			fmt.Fprintln(os.Stderr, "sassdiff:", err)
			os.Exit(1)
		}
		return
	}
	var sms []string
	if *archs != "" {
		sms = strings.Split(*archs, ",")
		if !slices.Contains(sms, strings.TrimPrefix(kbuild.ReportArch, "sm_")) {
			fmt.Fprintf(os.Stderr, "build kernels: -arch %s: the manifest's report is %s's, so the list must hold %s\n", *archs, kbuild.ReportArch, strings.TrimPrefix(kbuild.ReportArch, "sm_"))
			os.Exit(2)
		}
	}
	if err := run(*dir, *nvcc, *ccbin, sms); err != nil {
		fmt.Fprintln(os.Stderr, "build kernels:", err)
		os.Exit(1)
	}
}

// toolkitHint says what to install when a toolkit program is missing.
const toolkitHint = "install the CUDA toolkit (Debian: nvidia-cuda-toolkit, from non-free) or point NVCC at its nvcc (go tool mage cuda:kernels reads NVCC and CCBIN)"

func run(dir, nvcc, ccbin string, archs []string) error {
	if filepath.Base(nvcc) != nvcc { // a path: nvcc runs in dir, where a relative one would not resolve
		abs, err := filepath.Abs(nvcc)
		if err != nil {
			return err
		}
		nvcc = abs
	}
	cuobjdump := cuobjdumpOf(nvcc)
	for _, t := range []string{nvcc, cuobjdump} {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s not found: %s", t, toolkitHint)
		}
	}
	version, err := nvccVersion(nvcc)
	if err != nil {
		return err
	}
	flags := kbuild.FlagsFor(archs...)
	args := append([]string{}, flags...)
	if ccbin != "" {
		args = append(args, "-ccbin", ccbin)
	}
	// nvcc writes a temporary fatbin, renamed over the committed one with the
	// new manifest once the listing and report have been made from it.
	newFat := kbuild.FatbinName + ".new"
	defer os.Remove(filepath.Join(dir, newFat))
	args = append(args, "-o", newFat, kbuild.Unity)
	fmt.Println(nvcc, strings.Join(args, " "))
	cmd := exec.Command(nvcc, args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		io.Copy(os.Stderr, &buf)
		return fmt.Errorf("nvcc in %s: %w", dir, err)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "warning") || strings.Contains(l, "error") {
			fmt.Fprintln(os.Stderr, l)
		}
	}
	report, err := kbuild.ParsePtxas(buf.String(), kbuild.ReportArch)
	if err != nil {
		return err
	}
	if err := addSASS(report, cuobjdump, filepath.Join(dir, newFat)); err != nil {
		return err
	}
	fat, err := os.ReadFile(filepath.Join(dir, newFat))
	if err != nil {
		return fmt.Errorf("read fatbin: %w", err)
	}
	sources, err := kbuild.HashSources(dir)
	if err != nil {
		return err
	}
	m := kbuild.Manifest{NVCC: version, Flags: flags, Sources: sources, Fatbin: kbuild.Sum(fat),
		FatbinBytes: len(fat), Kernels: report}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	newMan := filepath.Join(dir, kbuild.ManifestName+".new")
	defer os.Remove(newMan)
	if err := os.WriteFile(newMan, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := replacePair(dir, filepath.Join(dir, newFat), newMan); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes) and %s: %s\n", kbuild.FatbinName, len(fat), kbuild.ManifestName, version)
	printReport(report)
	return nil
}

// replacePair renames fat and man over the fatbin and the manifest in dir;
// the old fatbin is kept aside until the manifest is in place, and put back
// if it cannot be, so the two never disagree.
func replacePair(dir, fat, man string) error {
	dstFat, dstMan := filepath.Join(dir, kbuild.FatbinName), filepath.Join(dir, kbuild.ManifestName)
	old := dstFat + ".old"
	if err := os.Rename(dstFat, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(fat, dstFat); err != nil {
		os.Rename(old, dstFat)
		return err
	}
	if err := os.Rename(man, dstMan); err != nil {
		os.Rename(old, dstFat)
		return err
	}
	os.Remove(old)
	return nil
}

// addSASS lists fatbin's ReportArch code with tool (cuobjdump) and adds each
// kernel's instruction count and loop sizes to report.
func addSASS(report map[string]kbuild.KernelInfo, tool, fatbin string) error {
	out, err := exec.Command(tool, "-sass", "-arch", kbuild.ReportArch, fatbin).Output()
	if err != nil {
		return fmt.Errorf("%s -sass: %w", tool, err)
	}
	sass, err := kbuild.ParseSASS(string(out))
	if err != nil {
		return err
	}
	for name, k := range report {
		s, ok := sass[name]
		if !ok {
			return fmt.Errorf("%s -sass: no listing of kernel %s", tool, name)
		}
		k.SASSInstructions, k.SASSLoops = s.Instructions, s.Loops
		report[name] = k
	}
	return nil
}

// diffSASS prints the functions whose SASS differs between the fatbins old
// and cur, each with its instruction counts by architecture (old → new, "-"
// where a build lacks it), and how many are the same.
func diffSASS(old, cur, nvcc string) error {
	cuobjdump := cuobjdumpOf(nvcc)
	if _, err := exec.LookPath(cuobjdump); err != nil {
		return fmt.Errorf("%s not found: %s", cuobjdump, toolkitHint)
	}
	// The two listings take minutes each: make them at once.
	code := make([]map[string]map[string][]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, f := range []string{old, cur} {
		wg.Go(func() {
			var stderr bytes.Buffer
			cmd := exec.Command(cuobjdump, "-sass", f)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				errs[i] = fmt.Errorf("%s -sass %s: %w: %s", cuobjdump, f, err, strings.TrimSpace(stderr.String()))
				return
			}
			if code[i], err = kbuild.SASSCode(string(out)); err != nil {
				errs[i] = fmt.Errorf("%s: %w", f, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	changed, same := kbuild.DiffSASS(code[0], code[1])
	count := func(n int) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	byFn := map[string][]string{}
	var fns []string
	for _, c := range changed {
		if byFn[c.Function] == nil {
			fns = append(fns, c.Function)
		}
		byFn[c.Function] = append(byFn[c.Function], fmt.Sprintf("%s %s → %s", c.Arch, count(c.Old), count(c.New)))
	}
	sort.Strings(fns)
	fmt.Printf("%s → %s: %d of %d (function, architecture) pairs the same; %d functions differ\n",
		old, cur, same, same+len(changed), len(fns))
	for _, f := range fns {
		fmt.Printf("  %-28s %s\n", f, strings.Join(byFn[f], ", "))
	}
	return nil
}

// cuobjdumpOf is the cuobjdump of nvcc's toolkit: the one beside it when
// nvcc is a path, else the one on PATH.
func cuobjdumpOf(nvcc string) string {
	if filepath.Base(nvcc) != nvcc {
		return filepath.Join(filepath.Dir(nvcc), "cuobjdump")
	}
	return "cuobjdump"
}

// nvccVersion returns the "Cuda compilation tools, release X, VY" line.
func nvccVersion(nvcc string) (string, error) {
	out, err := exec.Command(nvcc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", nvcc, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "release") {
			return strings.TrimSpace(l), nil
		}
	}
	return "", fmt.Errorf("%s --version: no release line in %q", nvcc, out)
}

func printReport(r map[string]kbuild.KernelInfo) {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Printf("%-26s %5s %7s %6s %11s %6s  %s\n", "kernel ("+kbuild.ReportArch+")", "regs", "smem", "stack", "spill st/ld", "instrs", "loops")
	for _, n := range names {
		k := r[n]
		fmt.Printf("%-26s %5d %7d %6d %5d/%-5d %6d  %v\n", n, k.Registers, k.SharedBytes, k.StackBytes, k.SpillStores, k.SpillLoads, k.SASSInstructions, k.SASSLoops)
	}
}
