package cuda

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Alloc allocates bytes of device memory. Allocation is a setup-time
// operation: it is refused during stream capture. Out of memory, the error
// names the size requested and the free memory.
func (e *Engine) Alloc(bytes uint64) (DevPtr, error) {
	var p DevPtr
	err := e.Do(func() error {
		var err error
		p, err = e.alloc(bytes)
		return err
	})
	return p, err
}

func (e *Engine) alloc(bytes uint64) (DevPtr, error) {
	if bytes == 0 {
		return 0, errors.New("cuda: alloc of 0 bytes")
	}
	if err := e.refuse(fmt.Sprintf("alloc %s", sizeString(bytes))); err != nil {
		return 0, err
	}
	var p DevPtr
	if err := e.d.cuMemAlloc(&p, bytes); err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			var free, total uint64
			if e.d.cuMemGetInfo(&free, &total) == nil {
				return 0, fmt.Errorf("cuda: alloc %s on GPU %d: only %s free of %s: %w",
					sizeString(bytes), e.info.Ordinal, sizeString(free), sizeString(total), err)
			}
		}
		return 0, fmt.Errorf("cuda: alloc %s on GPU %d: %w", sizeString(bytes), e.info.Ordinal, err)
	}
	e.allocs[p] = bytes
	return p, nil
}

// Free frees memory from Alloc. Freeing an address Alloc did not return (or
// freeing twice) is an error; after Close, which freed it, Free returns nil.
func (e *Engine) Free(p DevPtr) error {
	return e.doRelease(func() error { return e.free(p) })
}

func (e *Engine) free(p DevPtr) error {
	if _, ok := e.allocs[p]; !ok {
		return fmt.Errorf("cuda: free %#x: not allocated by this engine, or already freed", uint64(p))
	}
	if err := e.refuse("free"); err != nil {
		return err
	}
	if err := e.d.cuMemFree(p); err != nil {
		return fmt.Errorf("cuda: free %#x: %w", uint64(p), err)
	}
	delete(e.allocs, p)
	return nil
}

// MemInfo reports free and total device memory in bytes.
func (e *Engine) MemInfo() (free, total uint64, err error) {
	err = e.Do(func() error { return e.d.cuMemGetInfo(&free, &total) })
	return free, total, err
}

// ArenaAlign is the alignment of every sub-buffer an Arena hands out: the
// cudaMalloc guarantee, enough for 16-byte vector loads and TMA.
const ArenaAlign = 256

// Arena is one device allocation carved into aligned sub-buffers at setup,
// so nothing is allocated while decoding (and pointers stay fixed for graph
// replay). Carving is host bookkeeping only. Not safe for concurrent use.
type Arena struct {
	e    *Engine
	base DevPtr
	size uint64
	off  uint64
}

// NewArena allocates an arena of bytes (rounded up to ArenaAlign).
func (e *Engine) NewArena(bytes uint64) (*Arena, error) {
	if bytes > math.MaxUint64-(ArenaAlign-1) { // rounding up would wrap to 0
		return nil, fmt.Errorf("cuda: arena of %s: past any device", sizeString(bytes))
	}
	size := alignUp(bytes, ArenaAlign)
	p, err := e.Alloc(size)
	if err != nil {
		return nil, fmt.Errorf("cuda: arena: %w", err)
	}
	return &Arena{e: e, base: p, size: size}, nil
}

// Alloc carves bytes from the arena, aligned to ArenaAlign. A full arena is
// an error naming the request, the offset and the arena size.
func (a *Arena) Alloc(bytes uint64) (DevPtr, error) {
	if a.base == 0 {
		return 0, errors.New("cuda: arena: freed")
	}
	if bytes == 0 {
		return 0, errors.New("cuda: arena: alloc of 0 bytes")
	}
	off := alignUp(a.off, ArenaAlign)
	if off > a.size || bytes > a.size-off {
		return 0, fmt.Errorf("cuda: arena full: %s requested at offset %s of a %s arena",
			sizeString(bytes), sizeString(off), sizeString(a.size))
	}
	a.off = off + bytes
	return a.base.Add(off), nil
}

// Base is the arena's device address; Size its capacity; Used the bytes
// carved so far (with alignment padding).
func (a *Arena) Base() DevPtr { return a.base }
func (a *Arena) Size() uint64 { return a.size }
func (a *Arena) Used() uint64 { return a.off }

// Reset forgets every sub-buffer; the memory is reused by later Allocs.
func (a *Arena) Reset() { a.off = 0 }

// Free returns the arena's memory to the device. A second Free is a no-op.
func (a *Arena) Free() error {
	if a.base == 0 {
		return nil
	}
	err := a.e.Free(a.base)
	a.base, a.off = 0, 0
	return err
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) / a * a }

// AsBytes views a slice of plain values (float32, int32, uint16...) as its
// bytes, for the copy methods. T must not contain pointers.
func AsBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// CopyHtoD copies src to device memory at dst and waits for it. The copy is
// ordered on the engine stream, after all work launched before it. Refused
// during capture (it waits on the host).
func (e *Engine) CopyHtoD(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	host := unsafe.Pointer(&src[0])
	if e.onThread() {
		return e.copyHtoD(dst, host, uint64(len(src)))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	e.slot.op, e.slot.dev, e.slot.host, e.slot.n = opCopyHtoD, dst, host, uint64(len(src))
	return e.roundTrip()
}

// CopyDtoH copies len(dst) bytes from device memory at src into dst and
// waits for it; it is ordered after all work launched before it. Refused
// during capture.
func (e *Engine) CopyDtoH(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	host := unsafe.Pointer(&dst[0])
	if e.onThread() {
		return e.copyDtoH(host, src, uint64(len(dst)))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	e.slot.op, e.slot.dev, e.slot.host, e.slot.n = opCopyDtoH, src, host, uint64(len(dst))
	return e.roundTrip()
}

// The synchronous copies are stream-ordered async copies plus a stream
// sync: cuMemcpyHtoD/DtoH run on the legacy default stream, which does not
// wait for the engine's non-blocking stream.
func (e *Engine) copyHtoD(dst DevPtr, host unsafe.Pointer, n uint64) error {
	if err := e.refuse("CopyHtoD"); err != nil {
		return err
	}
	if err := e.d.cuMemcpyHtoDAsync(dst, host, n, e.stream); err != nil {
		return err
	}
	return e.d.cuStreamSynchronize(e.stream)
}

func (e *Engine) copyDtoH(host unsafe.Pointer, src DevPtr, n uint64) error {
	if err := e.refuse("CopyDtoH"); err != nil {
		return err
	}
	if err := e.d.cuMemcpyDtoHAsync(host, src, n, e.stream); err != nil {
		return err
	}
	return e.d.cuStreamSynchronize(e.stream)
}

// CopyHtoDAsync enqueues a copy of src to dst on the stream. src must stay
// alive and unchanged until the stream reaches the copy; with pageable Go
// memory the driver may stage it before returning, with a HostBuf it is
// truly asynchronous.
func (e *Engine) CopyHtoDAsync(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return e.Do(func() error {
		if err := e.unrecordable("cuMemcpyHtoDAsync"); err != nil {
			return err
		}
		return e.d.cuMemcpyHtoDAsync(dst, unsafe.Pointer(&src[0]), uint64(len(src)), e.stream)
	})
}

// CopyDtoHAsync enqueues a copy from src into dst on the stream; dst is
// valid after Synchronize (or an event). Use a HostBuf for dst.
func (e *Engine) CopyDtoHAsync(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	return e.Do(func() error {
		if err := e.unrecordable("cuMemcpyDtoHAsync"); err != nil {
			return err
		}
		return e.d.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), src, uint64(len(dst)), e.stream)
	})
}

// CopyDtoDAsync enqueues a device-to-device copy of n bytes on the stream.
func (e *Engine) CopyDtoDAsync(dst, src DevPtr, n uint64) error {
	if n == 0 {
		return nil
	}
	return e.Do(func() error {
		if err := e.unrecordable("cuMemcpyDtoDAsync"); err != nil {
			return err
		}
		return e.d.cuMemcpyDtoDAsync(dst, src, n, e.stream)
	})
}

// MemsetD8Async sets n bytes at dst to v, on the stream.
func (e *Engine) MemsetD8Async(dst DevPtr, v byte, n uint64) error {
	return e.Do(func() error {
		if err := e.unrecordable("cuMemsetD8Async"); err != nil {
			return err
		}
		return e.d.cuMemsetD8Async(dst, v, n, e.stream)
	})
}

// MemsetD32Async sets n 32-bit words at dst (4-byte aligned) to v, on the stream.
func (e *Engine) MemsetD32Async(dst DevPtr, v uint32, n uint64) error {
	return e.Do(func() error {
		if err := e.unrecordable("cuMemsetD32Async"); err != nil {
			return err
		}
		return e.d.cuMemsetD32Async(dst, v, n, e.stream)
	})
}

// HostBuf is page-locked host memory (cuMemHostAlloc): copies to and from it
// are truly asynchronous and run at full PCIe/NVLink speed.
type HostBuf struct {
	e   *Engine
	ptr unsafe.Pointer
	n   uint64
	dev DevPtr // the kernels' address of it (HostAllocMapped), else 0
}

// HostAlloc allocates bytes of page-locked host memory. Refused during capture.
func (e *Engine) HostAlloc(bytes uint64) (*HostBuf, error) {
	return e.hostAlloc(bytes, false)
}

// HostAllocMapped is HostAlloc of memory that kernels can also address
// (DevPtr): their stores land in host memory, which the host may read once
// an event recorded behind the kernel has completed, with no copy queued
// between them. Refused during capture.
func (e *Engine) HostAllocMapped(bytes uint64) (*HostBuf, error) {
	return e.hostAlloc(bytes, true)
}

func (e *Engine) hostAlloc(bytes uint64, mapped bool) (*HostBuf, error) {
	if bytes == 0 {
		return nil, errors.New("cuda: host alloc of 0 bytes")
	}
	h := &HostBuf{e: e, n: bytes}
	flags := uint32(memHostAllocPortable)
	if mapped {
		flags |= memHostAllocDeviceMap
	}
	err := e.Do(func() error {
		if err := e.refuse("HostAlloc"); err != nil {
			return err
		}
		if err := e.d.cuMemHostAlloc(&h.ptr, bytes, flags); err != nil {
			return fmt.Errorf("cuda: pinned host alloc %s: %w", sizeString(bytes), err)
		}
		if mapped {
			if err := e.d.cuMemHostGetDevicePointer(&h.dev, h.ptr, 0); err != nil {
				_ = e.d.cuMemFreeHost(h.ptr)
				h.ptr = nil
				return fmt.Errorf("cuda: device address of mapped host memory (%s): %w", sizeString(bytes), err)
			}
		}
		e.hosts[h.ptr] = bytes
		return nil
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// DevPtr is the kernels' address of a buffer from HostAllocMapped; 0 for
// HostAlloc's, and after Free.
func (h *HostBuf) DevPtr() DevPtr {
	if h.ptr == nil {
		return 0
	}
	return h.dev
}

// Bytes is the buffer's memory; nil after Free.
func (h *HostBuf) Bytes() []byte {
	if h.ptr == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.ptr), h.n)
}

// HostSlice views n values of T at byte offset off of h (T without
// pointers, off aligned for T); nil past the buffer or after Free. The view
// dies with the buffer: it must not be used after Free.
func HostSlice[T any](h *HostBuf, off, n int) []T {
	var z T
	size := max(uint64(unsafe.Sizeof(z)), 1)
	// Divided, not multiplied: n·size can wrap past the check.
	if h.ptr == nil || off < 0 || n < 0 || uint64(off) > h.n || uint64(n) > (h.n-uint64(off))/size {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Add(h.ptr, off)), n)
}

// Free releases the buffer. A second Free is a no-op.
func (h *HostBuf) Free() error {
	if h.ptr == nil {
		return nil
	}
	err := h.e.Do(func() error {
		if _, ok := h.e.hosts[h.ptr]; !ok {
			return nil // released by Close
		}
		if err := h.e.refuse("HostBuf.Free"); err != nil {
			return err
		}
		// Untracked only once freed, as Engine.free does: after a failed
		// free the buffer stays Free's to retry and Close's to release.
		if err := h.e.d.cuMemFreeHost(h.ptr); err != nil {
			return fmt.Errorf("cuda: free pinned host memory (%s): %w", sizeString(h.n), err)
		}
		delete(h.e.hosts, h.ptr)
		return nil
	})
	if err == nil || errors.Is(err, ErrClosed) {
		h.ptr = nil
		return nil
	}
	return err
}

// sizeString formats a byte count for error messages: "1.50 GiB (1610612736 bytes)".
func sizeString(b uint64) string {
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
	)
	switch {
	case b >= gib:
		return fmt.Sprintf("%.2f GiB (%d bytes)", float64(b)/gib, b)
	case b >= mib:
		return fmt.Sprintf("%.2f MiB (%d bytes)", float64(b)/mib, b)
	case b >= kib:
		return fmt.Sprintf("%.2f KiB (%d bytes)", float64(b)/kib, b)
	}
	return fmt.Sprintf("%d bytes", b)
}
