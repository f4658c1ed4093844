package convert

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates size bytes of disk for f without changing its length
// (FALLOC_FL_KEEP_SIZE: if the file ends up shorter, nothing of the
// reservation shows in it). Only a file system out of room refuses: full
// (ENOSPC), over a quota (EDQUOT) or past its largest file (EFBIG). One
// that cannot reserve (EOPNOTSUPP: some network and FUSE ones) or fails
// otherwise (EINVAL, or EPERM from a seccomp filter) reserves nothing, and
// the write goes ahead as it would without the reservation.
func reserve(f *os.File, size int64) error { return reserveWith(unix.Fallocate, f, size) }

// reserveWith is reserve by the fallocate given: a test stands in a file
// system's answers.
func reserveWith(fallocate func(fd int, mode uint32, off, size int64) error, f *os.File, size int64) error {
	for {
		err := fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT), errors.Is(err, unix.EFBIG):
			return err
		}
		return nil
	}
}
