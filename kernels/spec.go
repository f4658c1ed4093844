// Package kernels holds memra's CUDA C sources, the declarative kernel spec
// that gen/ turns into typed Go launchers, and the fatbin built from them.
//
// The spec is the single source of truth for every kernel's name, typed
// parameters and launch geometry: the CUDA signature, the generated Go
// wrapper and the capture tables are all checked against it.
package kernels

// ParamKind is the C type of one kernel parameter as it crosses cuLaunchKernel.
type ParamKind int

const (
	Ptr ParamKind = iota // a device pointer (CUdeviceptr, 8 bytes)
	I32                  // int
	U32                  // unsigned int
	F32                  // float
)

// Param is one kernel parameter, in the order of the CUDA signature.
type Param struct {
	Name string
	Kind ParamKind
}

// Kernel describes one extern "C" __global__ function.
//
// Grid and Shared are Go integer expressions over the kernel's integer
// parameters and its Dims (geometry-only values the caller passes but the
// kernel does not receive), e.g. "(n+255)/256" or "rows".
type Kernel struct {
	Name   string    // symbol in the fatbin
	File   string    // the .cu file that defines it
	Doc    string    // one line: what it computes
	Params []Param   // CUDA parameters, in order
	Dims   []string  // geometry-only int arguments of the Go wrapper
	Block  [3]int    // threads per block
	Grid   [3]string // blocks per grid
	Shared string    // dynamic shared memory bytes ("" = 0)

	// Family and Variant group kernels that are alternatives for one step of
	// a decode, picked per launch by their variant keys (the attention split
	// kernels by head dim, KV type and fa_vec). gen emits one dispatcher per
	// family: the per-bucket table a captured graph takes its kernel from.
	// Every member of a family has the same variant keys.
	Family  string         `json:",omitempty"`
	Variant map[string]int `json:",omitempty"`
}
