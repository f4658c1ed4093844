package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// driver is the loaded libcuda: its handle and the resolved entry points
// (procs and the call wrappers are generated into driver_gen.go).
type driver struct {
	lib uintptr
	p   procs
	hot [hotArgs]uintptr // argument buffer of Hot calls (engine thread only)
}

// openDriver dlopens lib (libcuda.so.1 in production), finds the loader
// symbol with dlsym and resolves every other entry point through it.
//
// The library is never dlclose'd once resolved: the driver starts threads of
// its own, and unloading it under them is unsafe. The dlopen reference is one
// per Engine and costs nothing.
func openDriver(lib string) (*driver, error) {
	h, err := dlopen(lib)
	if err != nil {
		return nil, &noDriverError{detail: err}
	}
	sym, err := dlsym(h, driverLoaderSymbol)
	if err != nil {
		stub := isStub(h)
		_ = dlclose(h)
		if stub {
			return nil, stubError(lib, ErrStubLibrary)
		}
		return nil, fmt.Errorf("%s has no %s (the driver predates CUDA %s; memra needs a CUDA 12.0+ driver): %w",
			lib, driverLoaderSymbol, versionString(driverMinVersion), err)
	}
	d := &driver{lib: h}
	d.p.cuGetProcAddress = sym
	if err := d.resolve(); err != nil {
		_ = dlclose(h)
		if errors.Is(err, ErrStubLibrary) {
			return nil, stubError(lib, err)
		}
		return nil, err
	}
	return d, nil
}

// isStub reports whether the library h is the CUDA toolkit's stub libcuda
// (for linking only), which answers every call with
// CUDA_ERROR_STUB_LIBRARY: asked only where the loader symbol is missing,
// as in CUDA 11's stub (CUDA 12's has it, and its answer says so).
func isStub(h uintptr) bool {
	init, err := dlsym(h, "cuInit")
	if err != nil {
		return false
	}
	d := &driver{lib: h}
	d.p.cuInit = init
	return errors.Is(d.cuInit(0), ErrStubLibrary)
}

// stubError is New's error where lib is the toolkit's stub: a machine or
// container without the NVIDIA driver, or with the stubs folder first on
// the library path. NoGPU holds for it (err carries ErrStubLibrary).
func stubError(lib string, err error) error {
	return fmt.Errorf("no CUDA driver: %s is the CUDA toolkit's stub, not the NVIDIA driver's "+
		"(install the driver, or take the toolkit's stubs folder off LD_LIBRARY_PATH): %w", lib, err)
}

// proc resolves one entry point at an explicit ABI version.
func (d *driver) proc(name string, version int32, optional bool) (uintptr, error) {
	cname := cString(name)
	var fn uintptr
	var status procStatus
	err := d.cuGetProcAddress(&cname[0], &fn, version, cuGetProcAddressDefault, &status)
	return procResult(name, version, optional, fn, status, err)
}

// procResult judges cuGetProcAddress's answer for name: its address, none
// for an optional entry point the driver lacks, or an error saying why.
func procResult(name string, version int32, optional bool, fn uintptr, status procStatus, err error) (uintptr, error) {
	switch {
	case err == nil && status == procFound && fn != 0:
		return fn, nil
	case optional && (status == procSymbolNotFound || status == procVersionTooOld):
		return 0, nil
	case status == procVersionTooOld:
		return 0, fmt.Errorf("resolve %s (CUDA %s ABI): the driver is too old for this version", name, versionString(int(version)))
	case status == procSymbolNotFound:
		return 0, fmt.Errorf("resolve %s (CUDA %s ABI): symbol not found in the driver", name, versionString(int(version)))
	case err != nil:
		return 0, fmt.Errorf("resolve %s (CUDA %s ABI): %w", name, versionString(int(version)), err)
	}
	return 0, fmt.Errorf("resolve %s (CUDA %s ABI): driver returned status %d and no address", name, versionString(int(version)), status)
}

// versionString formats a CUDA version number (12000) as "12.0".
func versionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// cString returns s as a NUL-terminated byte slice for a const char* argument.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// goString copies a NUL-terminated C string (owned by the driver) into Go.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
