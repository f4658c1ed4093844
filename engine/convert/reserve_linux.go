package convert

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates size bytes of disk for f without changing its length
// (FALLOC_FL_KEEP_SIZE: if the file ends up shorter, nothing of the
// reservation shows in it). A file system that cannot (EOPNOTSUPP: some
// network and FUSE ones) reserves nothing and the write goes ahead.
func reserve(f *os.File, size int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return nil
		}
		return err
	}
}
