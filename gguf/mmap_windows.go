package gguf

import (
	"os"
	"syscall"
	"unsafe"
)

// mapFile maps size bytes of fd read-only, as mmap_unix.go does: a model
// is paged in on first touch and shared with the file cache, where reading
// it whole (mmap_other.go) would hold all of a 9B file in the process's
// memory before the first token. While the view exists Windows refuses to
// replace the file (a rename over it fails), as it does for any open file.
func mapFile(fd *os.File, size int64) ([]byte, func() error, error) {
	if int64(int(size)) != size {
		return nil, nil, syscall.EFBIG
	}
	m, err := syscall.CreateFileMapping(syscall.Handle(fd.Fd()), nil, syscall.PAGE_READONLY, uint32(size>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, os.NewSyscallError("CreateFileMapping", err)
	}
	// The view keeps the mapping object alive; its handle is not needed.
	defer syscall.CloseHandle(m)
	addr, err := syscall.MapViewOfFile(m, syscall.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, os.NewSyscallError("MapViewOfFile", err)
	}
	// The view lies outside Go's heap, so its address may become a pointer;
	// read through &addr, as vet cannot know that of a uintptr.
	b := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size)
	return b, func() error { return os.NewSyscallError("UnmapViewOfFile", syscall.UnmapViewOfFile(addr)) }, nil
}
