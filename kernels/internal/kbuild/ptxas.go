package kbuild

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	reEntry = regexp.MustCompile(`Compiling entry function '([A-Za-z0-9_]+)' for '(sm_[0-9a-z]+)'`)
	// The "Used" line's fields vary with the ptxas version (12 and later
	// add "used N barriers" and may add a cumulative stack size before the
	// shared memory), so the shared memory is looked for anywhere in it; it
	// is absent when a kernel declares none.
	reUsed  = regexp.MustCompile(`Used (\d+) registers`)
	reSmem  = regexp.MustCompile(`(\d+) bytes smem`)
	reStack = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
)

// ParsePtxas reads `ptxas -v` output and returns the report of every entry
// function compiled for arch (e.g. "sm_90").
func ParsePtxas(out, arch string) (map[string]KernelInfo, error) {
	res := map[string]KernelInfo{}
	var name string
	var cur KernelInfo
	atoi := func(s string) int {
		if s == "" {
			return 0
		}
		v, _ := strconv.Atoi(s) // the regexps admit digits only
		return v
	}
	for _, l := range strings.Split(out, "\n") {
		if m := reEntry.FindStringSubmatch(l); m != nil {
			name, cur = "", KernelInfo{}
			if m[2] == arch {
				name = m[1]
			}
			continue
		}
		if name == "" {
			continue
		}
		if m := reStack.FindStringSubmatch(l); m != nil {
			cur.StackBytes, cur.SpillStores, cur.SpillLoads = atoi(m[1]), atoi(m[2]), atoi(m[3])
		}
		if m := reUsed.FindStringSubmatch(l); m != nil {
			cur.Registers = atoi(m[1])
			if sm := reSmem.FindStringSubmatch(l); sm != nil {
				cur.SharedBytes = atoi(sm[1])
			}
			res[name] = cur
			name = ""
		}
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("ptxas report: no entry function for %s", arch)
	}
	return res, nil
}
