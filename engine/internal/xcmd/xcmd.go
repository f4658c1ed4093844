// Package xcmd holds what the experiment commands (engine/internal/flagchain,
// barload, barwide, pchain) share besides their timing (evtime): device
// buffers freed together, comma-separated lists of flag values, the median
// of trials, loading a kernel from a cubin, and (xsync.cuh) the PTX
// primitives their kernels share; pchain.cu, which needs PTX 8.0 and is
// built on the GPU machine, keeps its own copies.
package xcmd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memra-ai/memra/engine/cuda"
)

// Buffers allocates device memory on one engine and frees all of it at once.
type Buffers struct {
	e  *cuda.Engine
	ps []cuda.DevPtr
}

// NewBuffers returns an empty set of e's buffers.
func NewBuffers(e *cuda.Engine) *Buffers { return &Buffers{e: e} }

// Alloc allocates bytes of device memory, freed by Free.
func (b *Buffers) Alloc(bytes int) (cuda.DevPtr, error) {
	p, err := b.e.Alloc(uint64(bytes))
	if err == nil {
		b.ps = append(b.ps, p)
	}
	return p, err
}

// Free frees every buffer Alloc returned.
func (b *Buffers) Free() error {
	var errs []error
	for _, p := range b.ps {
		errs = append(errs, b.e.Free(p))
	}
	b.ps = nil
	return errors.Join(errs...)
}

// Ints parses a comma-separated list of integers; an entry that is not one
// becomes -1, which every caller's range check rejects by name.
func Ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			v = -1
		}
		out = append(out, v)
	}
	return out
}

// Kernel opens device 0 and loads kernel name from the compiled module at
// path (a cubin built on the GPU machine or here); the caller closes the
// engine. The module is returned for the command's other kernels.
func Kernel(path, name string) (*cuda.Engine, cuda.Module, cuda.Function, error) {
	e, err := cuda.New(0)
	if err != nil {
		return nil, 0, 0, err
	}
	mod, err := e.LoadModuleFile(path)
	if err == nil {
		var fn cuda.Function
		if fn, err = e.Function(mod, name); err == nil {
			return e, mod, fn, nil
		}
		err = fmt.Errorf("%s: %w", path, err)
	}
	e.Close()
	return nil, 0, 0, err
}

// Median is the middle of xs (the mean of the two middle values when their
// number is even); xs is left as it was.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
