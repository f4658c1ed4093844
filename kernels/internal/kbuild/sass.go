package kbuild

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// LoopMin is the fewest instructions a loop has for the manifest to list it:
// the row and key loops the kernels spend their time in are hundreds long,
// the prologues' strided loops a few dozen.
const LoopMin = 100

var (
	reFunction = regexp.MustCompile(`^\s*Function : ([A-Za-z0-9_]+)\s*$`)
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
