//go:build unix

package gguf

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of fd read-only and shared, so tensor data is
// paged in on first touch and shared with the page cache.
func mapFile(fd *os.File, size int64) ([]byte, func() error, error) {
	if int64(int(size)) != size {
		return nil, nil, syscall.EFBIG
	}
	b, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
