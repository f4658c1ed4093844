// Command build compiles the kernel sources into one fatbin and writes its
// manifest (nvcc version, flags, sha256 of every source and of the fatbin,
// ptxas's sm_90 register/shared/stack/spill report per kernel, and from
// cuobjdump's sm_90 listing each kernel's instruction count and loop sizes).
//
//	go run ./kernels/internal/build -dir kernels [-nvcc nvcc] [-ccbin g++-11]
//
// It needs nvcc and cuobjdump (the same toolkit) and no GPU, and prints the
// per-kernel report.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memra-ai/memra/kernels/internal/kbuild"
)

func main() {
	dir := flag.String("dir", "kernels", "the kernels directory (holds memra.cu)")
	nvcc := flag.String("nvcc", "nvcc", "the nvcc to run")
	ccbin := flag.String("ccbin", "", "host compiler for nvcc (-ccbin), when the default is too new for it")
	flag.Parse()
	if err := run(*dir, *nvcc, *ccbin); err != nil {
		fmt.Fprintln(os.Stderr, "build kernels:", err)
		os.Exit(1)
	}
}

func run(dir, nvcc, ccbin string) error {
	version, err := nvccVersion(nvcc)
	if err != nil {
		return err
	}
	flags := kbuild.Flags()
	args := append([]string{}, flags...)
	if ccbin != "" {
		args = append(args, "-ccbin", ccbin)
	}
	args = append(args, "-o", kbuild.FatbinName, kbuild.Unity)
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
	if err := addSASS(report, dir, nvcc); err != nil {
		return err
	}
	fat, err := os.ReadFile(filepath.Join(dir, kbuild.FatbinName))
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
	if err := os.WriteFile(filepath.Join(dir, kbuild.ManifestName), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	fmt.Printf("wrote %s (%d bytes) and %s: %s\n", kbuild.FatbinName, len(fat), kbuild.ManifestName, version)
	printReport(report)
	return nil
}

// addSASS lists the fatbin's ReportArch code with the cuobjdump beside nvcc
// and adds each kernel's instruction count and loop sizes to report.
func addSASS(report map[string]kbuild.KernelInfo, dir, nvcc string) error {
	tool := "cuobjdump"
	if filepath.Base(nvcc) != nvcc {
		tool = filepath.Join(filepath.Dir(nvcc), tool)
	}
	out, err := exec.Command(tool, "-sass", "-arch", kbuild.ReportArch, filepath.Join(dir, kbuild.FatbinName)).Output()
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
