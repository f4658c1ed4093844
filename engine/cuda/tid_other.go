//go:build !linux

package cuda

// gettid has no cheap equivalent here; -1 never matches, so calls from inside
// Do must not call Engine methods (the CUDA driver path is Linux-only anyway).
func gettid() int { return -1 }
