//go:build !windows

package sigctx

import "syscall"

// readerGoneErrnos: outside Windows EPIPE is the only one.
func readerGoneErrnos() []syscall.Errno { return nil }
