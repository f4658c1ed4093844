package sigctx

import "syscall"

// readerGoneErrnos are Windows's errors for a write to a pipe whose reader
// closed it: ERROR_BROKEN_PIPE (109), ERROR_NO_DATA (232, "The pipe is being
// closed", what Windows gives) and ERROR_PIPE_NOT_CONNECTED (233, what wine
// gives).
func readerGoneErrnos() []syscall.Errno {
	return []syscall.Errno{syscall.ERROR_BROKEN_PIPE, 232, 233}
}
