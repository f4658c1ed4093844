// Package flagx parses a command's flags wherever they stand among its other
// arguments: the flag package stops at the first non-flag, so "bench
// -compare old.json new.json -json" would take -json for a file name.
package flagx

import (
	"flag"
	"strings"
)

// Interspersed parses fs's flags wherever they stand among args and returns
// the other arguments in order. parse is fs.Parse or the caller's wrapper of
// it (its error handling), called on each run of flags; everything after
// "--" is positional.
func Interspersed(fs *flag.FlagSet, args []string, parse func([]string) error) ([]string, error) {
	var pos []string
	for {
		if err := parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" && !valueOf(fs, args[:used-1]) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// valueOf reports whether the "--" after before was the value of the flag
// that ends before ("-o --") rather than the end of the flags.
func valueOf(fs *flag.FlagSet, before []string) bool {
	if len(before) == 0 {
		return false
	}
	a := before[len(before)-1]
	name := strings.TrimLeft(a, "-")
	if !strings.HasPrefix(a, "-") || name == "" || strings.Contains(name, "=") || len(a)-len(name) > 2 {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
