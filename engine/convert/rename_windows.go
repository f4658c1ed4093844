package convert

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// errSharingViolation is Windows's ERROR_SHARING_VIOLATION, which package
// syscall does not name.
const errSharingViolation syscall.Errno = 32

// renameRetries bounds how long replace waits for a destination that another
// process is replacing or has open (about 3 s in all).
const renameRetries = 12

// replace renames tmp to path. Windows refuses to replace a file while
// another process replaces it too, or holds it open without delete sharing
// (an indexer or a virus scanner, briefly), with ERROR_ACCESS_DENIED or
// ERROR_SHARING_VIOLATION where Unix's rename(2) just succeeds: two writes
// to one path (which WriteFileAtomic allows) then failed one of them, so
// such errors are retried for a few seconds before they are returned.
func replace(tmp, path string) error {
	wait := 5 * time.Millisecond
	for i := 0; ; i++ {
		err := os.Rename(tmp, path)
		if err == nil || i == renameRetries || !(errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, errSharingViolation)) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
}
