// Package flagx parses a command's flags wherever they stand among its other
// arguments: the flag package stops at the first non-flag, so "bench
// -compare old.json new.json -json" would take -json for a file name.
package flagx

import "flag"

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
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
