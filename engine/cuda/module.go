package cuda

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"unsafe"
)

// LoadModule loads a kernel image from memory: a fatbin, a cubin or PTX text
// (the driver JIT-compiles PTX for the device). The image is copied with a
// terminating NUL, which PTX needs and binary images ignore.
func (e *Engine) LoadModule(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, errors.New("cuda: load module: empty image")
	}
	if err := checkImage(image); err != nil {
		return 0, fmt.Errorf("cuda: load module: %w", err)
	}
	var m Module
	err := e.Do(func() error {
		if err := e.refuse("LoadModule"); err != nil {
			return err
		}
		buf := make([]byte, len(image)+1)
		copy(buf, image)
		err := e.d.cuModuleLoadData(&m, unsafe.Pointer(&buf[0]))
		runtime.KeepAlive(buf)
		if err != nil {
			return fmt.Errorf("cuda: load module (%d bytes): %w", len(image), err)
		}
		e.modules[m] = struct{}{}
		return nil
	})
	return m, err
}

// LoadModuleFile loads the kernel image in the file at path (LoadModule):
// the experiment commands' cubins, compiled apart from the engine's fatbin.
// Errors name the file.
func (e *Engine) LoadModuleFile(path string) (Module, error) {
	img, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cuda: load module: %w", err)
	}
	m, err := e.LoadModule(img)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// UnloadModule unloads a module from LoadModule (after Close, which unloaded
// it: nil).
func (e *Engine) UnloadModule(m Module) error {
	return e.doRelease(func() error {
		if _, ok := e.modules[m]; !ok {
			return fmt.Errorf("cuda: unload module %#x: not loaded by this engine", uintptr(m))
		}
		if err := e.refuse("UnloadModule"); err != nil {
			return err
		}
		delete(e.modules, m)
		return e.d.cuModuleUnload(m)
	})
}

// Function finds the kernel named name (its extern "C" symbol) in m.
func (e *Engine) Function(m Module, name string) (Function, error) {
	var f Function
	err := e.Do(func() error {
		cname := cString(name)
		if err := e.d.cuModuleGetFunction(&f, m, &cname[0]); err != nil {
			return fmt.Errorf("cuda: kernel %q: %w", name, err)
		}
		e.fnNames[f] = name
		return nil
	})
	return f, err
}

// FunctionName is the name f was found by ("" for a function this engine
// did not look up).
func (e *Engine) FunctionName(f Function) string {
	var n string
	_ = e.Do(func() error { n = e.fnNames[f]; return nil })
	return n
}

// SetLaunchObserver has f called on the engine thread after every
// successful kernel launch (nil: none), so a profiler can record an event
// behind each kernel. f may use the engine (it runs inside Do). Launches
// RecordLaunches notes, and a Replay's nodes, are not launches of their
// own: f sees a Replay's kernels once, as NewReplay captures them.
func (e *Engine) SetLaunchObserver(f func(Function)) {
	_ = e.Do(func() error { e.observer = f; return nil })
}

// FuncAttribute reads a kernel attribute (registers, spills, max threads...).
func (e *Engine) FuncAttribute(f Function, a FuncAttribute) (int, error) {
	var v int32
	err := e.Do(func() error { return e.d.cuFuncGetAttribute(&v, a, f) })
	return int(v), err
}

// MaxActiveBlocksPerSM is how many blocks of f, with block threads and
// shared bytes of dynamic shared memory, one SM holds at once.
func (e *Engine) MaxActiveBlocksPerSM(f Function, block, shared int) (int, error) {
	if block < 0 || block > math.MaxInt32 || shared < 0 {
		return 0, fmt.Errorf("cuda: occupancy of a block of %d threads with %d bytes of dynamic shared memory: out of the driver's range (int threads, size_t bytes)", block, shared)
	}
	var v int32
	err := e.Do(func() error {
		return e.d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, int32(block), uint64(shared))
	})
	return int(v), err
}

// SetFuncAttribute sets a kernel attribute, e.g. FuncMaxDynamicSharedSizeBytes
// before launching with more than 48 KiB of dynamic shared memory.
func (e *Engine) SetFuncAttribute(f Function, a FuncAttribute, v int) error {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return fmt.Errorf("cuda: function attribute %d: value %d out of int32 range", a, v)
	}
	return e.Do(func() error { return e.d.cuFuncSetAttribute(f, a, int32(v)) })
}

// Params is a preallocated kernel parameter block: one 8-byte slot per
// parameter and the array of pointers to the slots that cuLaunchKernel reads.
// Set values, launch, set again: cuLaunchKernel copies the values at the call
// (and stream capture records the copies), so reuse is safe and allocates
// nothing. Slots are little-endian; a 4-byte parameter uses the low half.
type Params struct {
	vals []uint64
	ptrs []unsafe.Pointer
}

// NewParams allocates a block for n parameters.
func NewParams(n int) *Params {
	p := &Params{vals: make([]uint64, n), ptrs: make([]unsafe.Pointer, n)}
	for i := range p.vals {
		p.ptrs[i] = unsafe.Pointer(&p.vals[i])
	}
	return p
}

// Len is the number of parameters.
func (p *Params) Len() int { return len(p.vals) }

// SetPtr stores a device pointer (CUdeviceptr, T*) in slot i.
func (p *Params) SetPtr(i int, v DevPtr) { p.vals[i] = uint64(v) }

// SetI32 stores an int in slot i.
func (p *Params) SetI32(i int, v int32) { p.vals[i] = uint64(uint32(v)) }

// SetU32 stores an unsigned int in slot i.
func (p *Params) SetU32(i int, v uint32) { p.vals[i] = uint64(v) }

// SetF32 stores a float in slot i.
func (p *Params) SetF32(i int, v float32) { p.vals[i] = uint64(math.Float32bits(v)) }

// SetU64 stores an 8-byte value (unsigned long long, int64_t) in slot i.
func (p *Params) SetU64(i int, v uint64) { p.vals[i] = v }

// Launch launches fn on the engine stream with grid × block threads, shared
// bytes of dynamic shared memory and params (one pointer per kernel
// parameter, each to its value; the values are copied at the call). Launching
// inside a capture records the launch into the graph.
func (e *Engine) Launch(fn Function, grid, block [3]uint32, shared uint32, params []unsafe.Pointer) error {
	var args *unsafe.Pointer
	if len(params) > 0 {
		args = &params[0]
	}
	return e.launchArgs(fn, grid, block, shared, nil, args, false)
}

// LaunchParams is Launch with a preallocated parameter block: allocation-free.
func (e *Engine) LaunchParams(fn Function, grid, block [3]uint32, shared uint32, p *Params) error {
	return e.launchArgs(fn, grid, block, shared, p, p.args(), false)
}

// LaunchParamsPDL is LaunchParams with programmatic dependent launch where
// the engine uses it (PDL reports whether): fn may then start before the
// previous kernel in the stream has finished, so fn must execute
// griddepcontrol.wait before it reads anything an earlier kernel wrote or
// writes global memory. memra's generated launchers use it; their kernels'
// sources are checked for the wait (kernels/spec_test.go). Any other kernel
// must go through Launch or LaunchParams, but for experiment kernels that
// check their results under PDL against a plain launch (engine/internal/pchain's
// pring_hx_brp).
func (e *Engine) LaunchParamsPDL(fn Function, grid, block [3]uint32, shared uint32, p *Params) error {
	return e.launchArgs(fn, grid, block, shared, p, p.args(), e.pdl)
}

// args is the kernelParams array of p (nil for none).
func (p *Params) args() *unsafe.Pointer {
	if p == nil || len(p.ptrs) == 0 {
		return nil
	}
	return &p.ptrs[0]
}

// launchArgs launches, or notes the launch into the recording RecordLaunches
// holds, which needs p, the Params block args came from (nil: none).
func (e *Engine) launchArgs(fn Function, grid, block [3]uint32, shared uint32, p *Params, args *unsafe.Pointer, pdl bool) error {
	if e.onThread() {
		if e.rec != nil {
			if p == nil {
				return e.unrecordable("a launch without a Params block")
			}
			return e.rec.add(fn, grid, block, shared, p, pdl)
		}
		return e.launch(fn, grid, block, shared, args, pdl)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	s := &e.slot
	s.op, s.f, s.grid, s.block, s.shared, s.args, s.pdl = opLaunch, fn, grid, block, shared, args, pdl
	return e.roundTrip()
}

func (e *Engine) launch(fn Function, grid, block [3]uint32, shared uint32, args *unsafe.Pointer, pdl bool) error {
	if fn == 0 {
		return errors.New("cuda: launch of a nil Function")
	}
	var err error
	if pdl {
		c := e.lcfg
		c.gridX, c.gridY, c.gridZ = grid[0], grid[1], grid[2]
		c.blockX, c.blockY, c.blockZ = block[0], block[1], block[2]
		c.sharedMem, c.stream = shared, e.stream
		err = e.d.cuLaunchKernelEx(c, fn, args, nil)
	} else {
		err = e.d.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
			shared, e.stream, args, nil)
	}
	if err == nil && e.observer != nil {
		e.observer(fn)
	}
	return err
}

// Synchronize waits for all work on the engine stream. During capture it
// fails with ErrSyncInCapture and invalidates the capture: nothing captured
// has run, so a host wait there is a bug that must not pass silently.
func (e *Engine) Synchronize() error {
	if e.onThread() {
		return e.synchronize()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	e.slot.op = opSync
	return e.roundTrip()
}

func (e *Engine) synchronize() error {
	if err := e.refuse("Synchronize"); err != nil {
		return err
	}
	return e.d.cuStreamSynchronize(e.stream)
}
