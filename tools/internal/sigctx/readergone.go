package sigctx

import (
	"errors"
	"syscall"
)

// ReaderGone reports whether err is a write that failed because the pipe's
// reader closed it (memra info x.gguf | head): EPIPE, which Unix gives once
// SIGPIPE is caught or ignored, or on Windows, which has no SIGPIPE to end
// the process, the errors its pipes give for it.
func ReaderGone(err error) bool {
	if errors.Is(err, syscall.EPIPE) {
		return true
	}
	for _, e := range readerGoneErrnos() {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
