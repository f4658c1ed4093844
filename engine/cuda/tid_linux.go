//go:build linux

package cuda

import "syscall"

// gettid identifies the calling OS thread: the engine compares it with its
// own locked thread to run nested calls (from inside Do) directly.
func gettid() int { return syscall.Gettid() }
