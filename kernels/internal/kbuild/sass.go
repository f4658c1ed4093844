package kbuild

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// LoopMin is the fewest instructions a loop has for the manifest to list it:
// the row and key loops the kernels spend their time in are hundreds long,
// the prologues' strided loops a few dozen.
const LoopMin = 100

var (
	reFunction = regexp.MustCompile(`^\s*Function : (\S+)\s*$`)
	reInstr    = regexp.MustCompile(`^\s*/\*([0-9a-f]{4,})\*/\s+([^;]*);`)
	reBranch   = regexp.MustCompile(`\bBRA(?:\.[A-Z.]+)?\s+(0x[0-9a-f]+)`)
)

// SASSInfo is what the manifest keeps of one kernel's machine code.
type SASSInfo struct {
	Instructions int
	Loops        []int // instructions from a backward branch's target to the branch, address order, LoopMin or more
}

// ParseSASS reads `cuobjdump -sass` output for one architecture and returns,
// per function, its instruction count and the sizes of its loops: every
// branch to a lower address closes a loop of the instructions from its target
// to itself. ptxas's choices show here before they show in a benchmark (a
// hot loop that grows by address arithmetic; docs/perf.md step 58), so the
// builder writes them into the manifest, whose diff then shows them.
func ParseSASS(out string) (map[string]SASSInfo, error) {
	type instr struct {
		addr, target int64 // target -1: not a branch
	}
	res := map[string]SASSInfo{}
	var name string
	var code []instr
	flush := func() {
		if name == "" {
			return
		}
		info := SASSInfo{Instructions: len(code)}
		for _, in := range code {
			if in.target < 0 || in.target > in.addr {
				continue
			}
			n := 0
			for _, o := range code {
				if o.addr >= in.target && o.addr <= in.addr {
					n++
				}
			}
			if n >= LoopMin {
				info.Loops = append(info.Loops, n)
			}
		}
		res[name] = info
	}
	for _, l := range strings.Split(out, "\n") {
		if m := reFunction.FindStringSubmatch(l); m != nil {
			flush()
			name, code = m[1], nil
			continue
		}
		m := reInstr.FindStringSubmatch(l)
		if m == nil || name == "" {
			continue
		}
		addr, err := strconv.ParseInt(m[1], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("sass of %s: address %q: %w", name, m[1], err)
		}
		in := instr{addr: addr, target: -1}
		if b := reBranch.FindStringSubmatch(m[2]); b != nil {
			t, err := strconv.ParseInt(b[1][2:], 16, 64)
			if err != nil {
				return nil, fmt.Errorf("sass of %s: branch target %q: %w", name, b[1], err)
			}
			in.target = t
		}
		code = append(code, in)
	}
	flush()
	if len(res) == 0 {
		return nil, fmt.Errorf("sass: no function in the listing")
	}
	return res, nil
}

var (
	reArch = regexp.MustCompile(`^\s*arch = (sm_[0-9a-z]+)\s*$`)
	// An instruction's encoding: its first 64-bit word ends its line, the
	// second stands on the next.
	reWord = regexp.MustCompile(`/\* (0x[0-9a-f]{16}) \*/\s*$`)
)

// SASSCode reads a whole `cuobjdump -sass` listing (every architecture) and
// returns each function's instructions by architecture: the instruction's
// text, spaces folded, and its encoding words (which hold the scheduling
// control bits, and branch offsets relative to the function), without its
// address, so that two builds can be compared instruction by instruction
// (DiffSASS). A listing of one architecture without its "arch =" line files
// its functions under "".
func SASSCode(out string) (map[string]map[string][]string, error) {
	res := map[string]map[string][]string{}
	arch, name := "", ""
	for _, l := range strings.Split(out, "\n") {
		if m := reArch.FindStringSubmatch(l); m != nil {
			arch, name = m[1], ""
			continue
		}
		if m := reFunction.FindStringSubmatch(l); m != nil {
			name = m[1]
			if res[arch] == nil {
				res[arch] = map[string][]string{}
			}
			if _, dup := res[arch][name]; dup {
				return nil, fmt.Errorf("sass: function %s listed twice for %q", name, arch)
			}
			res[arch][name] = []string{}
			continue
		}
		if name == "" {
			continue
		}
		code := res[arch][name]
		if m := reInstr.FindStringSubmatch(l); m != nil {
			in := strings.Join(strings.Fields(m[2]), " ")
			if w := reWord.FindStringSubmatch(l); w != nil {
				in += " " + w[1]
			}
			res[arch][name] = append(code, in)
		} else if w := reWord.FindStringSubmatch(l); w != nil && len(code) > 0 {
			code[len(code)-1] += " " + w[1]
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("sass: no function in the listing")
	}
	return res, nil
}

// SASSChange is one function whose machine code differs between two builds
// on one architecture; -1 instructions: not in that build.
type SASSChange struct {
	Arch, Function string
	Old, New       int
}

// DiffSASS compares two builds' SASSCode: the functions whose instructions
// differ (or that only one build has), by architecture and name, and how
// many are the same.
func DiffSASS(old, cur map[string]map[string][]string) (changed []SASSChange, same int) {
	seen := map[[2]string]bool{}
	add := func(arch, fn string) {
		k := [2]string{arch, fn}
		if seen[k] {
			return
		}
		seen[k] = true
		o, oks := old[arch][fn]
		n, okn := cur[arch][fn]
		if oks && okn && slices.Equal(o, n) {
			same++
			return
		}
		c := SASSChange{Arch: arch, Function: fn, Old: -1, New: -1}
		if oks {
			c.Old = len(o)
		}
		if okn {
			c.New = len(n)
		}
		changed = append(changed, c)
	}
	for _, b := range []map[string]map[string][]string{old, cur} {
		for arch, fns := range b {
			for fn := range fns {
				add(arch, fn)
			}
		}
	}
	slices.SortFunc(changed, func(a, b SASSChange) int {
		return cmp.Or(strings.Compare(a.Arch, b.Arch), strings.Compare(a.Function, b.Function))
	})
	return changed, same
}
