// Package kbuild holds what the fatbin builder and the kernels package's
// tests share: the nvcc flags, the manifest format and the source hashing.
// It lives apart from package kernels because kernels embeds the fatbin the
// builder produces, so the builder cannot import it.
package kbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Unity is the translation unit nvcc compiles; it includes every other .cu.
const Unity = "memra.cu"

// FatbinName and ManifestName are the builder's outputs inside the kernels directory.
const (
	FatbinName   = "memra.fatbin"
	ManifestName = "manifest.json"
)

// Flags returns the nvcc flags (without -o and the input): SASS for Ampere
// (sm_80, sm_86), Ada (sm_89) and Hopper (sm_90) plus compute_90 PTX the
// driver can JIT for newer GPUs, compressed (the driver inflates it at load;
// 0.9 MB instead of 2.6 MB in git). No --use_fast_math: expf, logf, sqrtf and
// division must stay the accurate IEEE versions (CPU parity, determinism).
// -Xptxas -v changes nothing in the output; the builder reads its report.
func Flags() []string { return FlagsFor() }

// Archs returns the SMs the committed fatbin holds SASS for.
func Archs() []string { return []string{"80", "86", "89", "90"} }

// FlagsFor returns Flags with SASS for archs only and no PTX, or Flags
// itself when archs is empty: an experiment's fatbin for the one GPU a
// session measures on (sm_90: nvcc 11.8 took 40 s against ~170 for Flags,
// 1.0 MB against 5.7; scripts/gpu/bins.sh BINS_ARCHS). The kernels test rejects such a
// manifest, so none is committed by mistake.
func FlagsFor(archs ...string) []string {
	f := []string{"-fatbin", "-O3", "-Xfatbin", "-compress-all", "-Xptxas", "-v"}
	all := len(archs) == 0
	if all {
		archs = Archs()
	}
	for _, sm := range archs {
		f = append(f, "-gencode", "arch=compute_"+sm+",code=sm_"+sm)
	}
	if !all {
		return f
	}
	return append(f, "-gencode", "arch=compute_90,code=compute_90")
}

// Manifest records how memra.fatbin was built, so a test can tell when a
// source changed after the build.
type Manifest struct {
	NVCC        string            `json:"nvcc"`         // nvcc's "release" line, e.g. "Cuda compilation tools, release 11.8, V11.8.89"
	Flags       []string          `json:"flags"`        // nvcc flags, without -o and the input
	Sources     map[string]string `json:"sources"`      // file name -> sha256 hex of every .cu and .cuh
	Fatbin      string            `json:"fatbin"`       // sha256 hex of memra.fatbin
	FatbinBytes int               `json:"fatbin_bytes"` // its size
	// Kernels is ptxas's report for every entry point at ReportArch.
	Kernels map[string]KernelInfo `json:"kernels"`
}

// ReportArch is the target whose ptxas report the manifest keeps.
const ReportArch = "sm_90"

// KernelInfo is ptxas's resource report for one kernel, and what
// cuobjdump's listing says of its machine code (ParseSASS).
type KernelInfo struct {
	Registers   int `json:"registers"`
	SharedBytes int `json:"shared_bytes"` // static shared memory
	StackBytes  int `json:"stack_bytes"`
	SpillStores int `json:"spill_stores"`
	SpillLoads  int `json:"spill_loads"`
	// SASSInstructions and SASSLoops: the kernel's instruction count and
	// its loops of LoopMin or more instructions (sizes, address order).
	SASSInstructions int   `json:"sass_instructions"`
	SASSLoops        []int `json:"sass_loops,omitempty"`
}

// SourceFiles lists the kernel sources (*.cu, *.cuh) directly in dir, sorted.
func SourceFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list kernel sources: %w", err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() && (strings.HasSuffix(n, ".cu") || strings.HasSuffix(n, ".cuh")) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Sum returns the sha256 of b in lower-case hex.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// HashSources returns file name -> sha256 hex for every kernel source in dir.
func HashSources(dir string) (map[string]string, error) {
	names, err := SourceFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("hash kernel source: %w", err)
		}
		out[n] = Sum(b)
	}
	return out, nil
}

// Stale compares the manifest's source hashes with the current ones and
// returns one message per difference (nil when they agree). dirName is how
// the directory is named in the messages ("kernels").
func Stale(m Manifest, current map[string]string, dirName string) []string {
	const fix = "run go tool mage cuda:kernels on a machine with nvcc"
	var msgs []string
	var names []string
	for n := range current {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		old, ok := m.Sources[n]
		switch {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("%s/%s is new since the fatbin was built; %s", dirName, n, fix))
		case old != current[n]:
			msgs = append(msgs, fmt.Sprintf("%s/%s changed since the fatbin was built; %s", dirName, n, fix))
		}
	}
	names = names[:0]
	for n := range m.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := current[n]; !ok {
			msgs = append(msgs, fmt.Sprintf("%s/%s was removed since the fatbin was built; %s", dirName, n, fix))
		}
	}
	return msgs
}
