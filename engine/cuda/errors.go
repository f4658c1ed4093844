package cuda

import (
	"errors"
	"fmt"
	"strconv"
)

// Result is a CUresult, the status every driver call returns. The named codes
// (Success, ErrOutOfMemory, ...) are generated from the driver table. A Result
// is an error value, so errors.Is(err, ErrOutOfMemory) works on any error
// returned by this package.
type Result int32

// Error returns the C name of the code, e.g. CUDA_ERROR_OUT_OF_MEMORY.
func (r Result) Error() string {
	if name, _, ok := resultText(r); ok {
		return name
	}
	return "CUresult(" + strconv.Itoa(int(r)) + ")"
}

// Error is a failed driver call: which function, and the CUresult with the
// driver's own name and description of it.
type Error struct {
	Func string // driver function, e.g. "cuMemAlloc"
	Code Result
	Name string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Desc string // e.g. "out of memory"
}

// Error formats as "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
func (e *Error) Error() string { return e.Func + ": " + e.Name + " (" + e.Desc + ")" }

// Unwrap exposes the Result, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Code }

// ErrNoDriver is returned by New when libcuda.so.1 cannot be loaded (a machine
// without the NVIDIA driver). Its text is exactly noDriverText, the
// platform's: on Windows the backend loads nothing, and saying that
// libcuda.so.1 was not found would send a user with nvcuda.dll looking for it.
var ErrNoDriver = errors.New(noDriverText)

// noDriverError keeps the dlopen detail without changing the message.
type noDriverError struct{ detail error }

func (e *noDriverError) Error() string   { return ErrNoDriver.Error() }
func (e *noDriverError) Unwrap() []error { return []error{ErrNoDriver, e.detail} }

// NoGPU reports whether err, from New, means the machine has no NVIDIA GPU to
// offer: no driver library (or only the CUDA toolkit's stub of it), or a
// driver that finds no device. A driver that
// is there but unusable (too old, missing entry points, a context that fails)
// is not that: callers that fall back to the CPU without a GPU should still
// report it as a setup error.
func NoGPU(err error) bool {
	return errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) || errors.Is(err, ErrStubLibrary)
}

// ErrSyncInCapture is returned when a host-synchronising call (Synchronize, a
// synchronous copy, EventSynchronize) or an allocation is made while the
// engine's stream captures: inside a capture nothing has run yet, so waiting
// for it is a bug. The capture is marked invalid; EndCapture then fails and
// discards it.
var ErrSyncInCapture = errors.New("host sync inside stream capture")

// ErrClosed is returned by every method of a closed Engine.
var ErrClosed = errors.New("cuda: engine closed")

// check turns a raw CUresult (low 32 bits of the return register: the C
// enum is an int, the upper half of rax is undefined) into nil or an *Error.
func (d *driver) check(fn string, r uintptr) error {
	code := Result(int32(uint32(r)))
	if code == Success {
		return nil
	}
	return d.fail(fn, code)
}

// fail builds the *Error for a failed call, asking the driver for the name
// and description and falling back to the table when it cannot.
func (d *driver) fail(fn string, code Result) error {
	e := &Error{Func: fn, Code: code}
	e.Name, e.Desc, _ = resultText(code)
	// The lookups' own failures come back here (d.check): they are named
	// from the table alone, or a driver that failed every lookup would
	// recurse until the stack overflowed.
	lookup := fn != "cuGetErrorName" && fn != "cuGetErrorString"
	if lookup && d != nil && d.p.cuGetErrorName != 0 && d.p.cuGetErrorString != 0 {
		var name, desc *byte
		if d.cuGetErrorName(code, &name) == nil && name != nil {
			e.Name = goString(name)
		}
		if d.cuGetErrorString(code, &desc) == nil && desc != nil {
			e.Desc = goString(desc)
		}
	}
	if e.Name == "" {
		e.Name = code.Error()
	}
	if e.Desc == "" {
		e.Desc = "no description"
	}
	return e
}

// unresolved is the error of a call whose entry point was not resolved (an
// optional function the driver lacks, or a zero driver in a test).
func unresolved(fn string) error {
	return fmt.Errorf("%s: entry point not resolved from the CUDA driver", fn)
}
