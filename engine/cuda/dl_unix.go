//go:build !windows

package cuda

import "github.com/ebitengine/purego"

// noDriverText is ErrNoDriver's text here.
const noDriverText = "no CUDA driver: libcuda.so.1 not found"

// dlopen, dlsym and dlclose are purego's, which has them everywhere but on
// Windows.
func dlopen(lib string) (uintptr, error) {
	return purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func dlsym(h uintptr, name string) (uintptr, error) { return purego.Dlsym(h, name) }

func dlclose(h uintptr) error { return purego.Dlclose(h) }
