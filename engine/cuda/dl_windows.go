package cuda

import "errors"

// errWindows is why no driver loads on Windows: the backend binds Linux's
// libcuda.so.1, and purego has no dlopen there. New then reports no driver,
// so the CPU backend and the gate's CPU part build and run (go tool mage
// check:windows runs the short tests and synth under wine).
var errWindows = errors.New("the CUDA backend loads Linux's libcuda.so.1; Windows's nvcuda.dll is not supported")

// noDriverText is ErrNoDriver's text on Windows, whatever driver is installed.
const noDriverText = "no CUDA driver: the CUDA backend runs on Linux (libcuda.so.1); Windows's nvcuda.dll is not supported"

func dlopen(string) (uintptr, error) { return 0, errWindows }

func dlsym(uintptr, string) (uintptr, error) { return 0, errWindows }

func dlclose(uintptr) error { return nil }
