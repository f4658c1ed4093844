//go:build unix

package convert

import (
	"io/fs"
	"syscall"
)

// fileOwner is fi's owner's uid, where the system keeps one.
func fileOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
