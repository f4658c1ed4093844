package cuda

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestArenaEdges: an arena filled exactly, an arena whose size is not a
// multiple of ArenaAlign, a zero-byte or freed-arena request, and Free of an
// arena the engine does not know (it stays freed for the arena either way).
func TestArenaEdges(t *testing.T) {
	a := &Arena{base: 0x10000, size: 512}
	for i, want := range []DevPtr{0x10000, 0x10100} {
		if p, err := a.Alloc(256); err != nil || p != want {
			t.Fatalf("alloc %d of 256 = %#x, %v; want %#x", i, p, err, want)
		}
	}
	if p, err := a.Alloc(1); p != 0 || err == nil || err.Error() != "cuda: arena full: 1 bytes requested at offset 512 bytes of a 512 bytes arena" {
		t.Errorf("past an exactly full arena: %v", err)
	}
	if p, err := a.Alloc(0); p != 0 || err == nil || err.Error() != "cuda: arena: alloc of 0 bytes" {
		t.Errorf("alloc of 0: %v", err)
	}
	// 290 used of 300: the next aligned offset, 512, lies past the end.
	odd := &Arena{base: 0x10000, size: 300}
	if _, err := odd.Alloc(290); err != nil {
		t.Fatal(err)
	}
	if p, err := odd.Alloc(1); err == nil || !strings.Contains(err.Error(), "at offset 512 bytes of a 300 bytes arena") {
		t.Errorf("past the end of a 300-byte arena: %#x, %v", p, err)
	}
	if err := (&Arena{}).Free(); err != nil {
		t.Errorf("Free of a freed arena: %v", err)
	}
	if p, err := (&Arena{size: 512}).Alloc(16); p != 0 || err == nil || err.Error() != "cuda: arena: freed" {
		t.Errorf("alloc from a freed arena: %#x, %v", p, err)
	}
	e := fakeEngine(t)
	b := &Arena{e: e, base: 0x10000, size: 512, off: 100}
	if err := b.Free(); err == nil || !strings.Contains(err.Error(), "free 0x10000: not allocated by this engine") {
		t.Errorf("Free of an arena the engine did not allocate: %v", err)
	}
	if b.Base() != 0 || b.Used() != 0 {
		t.Errorf("after Free: base %#x, used %d", b.Base(), b.Used())
	}
}

// TestAlignUp: by hand, at and either side of a multiple.
func TestAlignUp(t *testing.T) {
	for _, c := range []struct{ v, a, want uint64 }{
		{0, 256, 0}, {1, 256, 256}, {255, 256, 256}, {256, 256, 256}, {257, 256, 512}, {100, 8, 104}, {1000, 1, 1000},
	} {
		if got := alignUp(c.v, c.a); got != c.want {
			t.Errorf("alignUp(%d, %d) = %d, want %d", c.v, c.a, got, c.want)
		}
	}
}

// TestSizeString: each unit from its first byte, and the value just below
// it in the unit before.
func TestSizeString(t *testing.T) {
	for b, want := range map[uint64]string{
		0:          "0 bytes",
		1023:       "1023 bytes",
		1024:       "1.00 KiB (1024 bytes)",
		1536:       "1.50 KiB (1536 bytes)",
		1<<20 - 1:  "1024.00 KiB (1048575 bytes)",
		1 << 20:    "1.00 MiB (1048576 bytes)",
		1<<30 - 1:  "1024.00 MiB (1073741823 bytes)",
		1 << 30:    "1.00 GiB (1073741824 bytes)",
		1610612736: "1.50 GiB (1610612736 bytes)",
	} {
		if got := sizeString(b); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", b, got, want)
		}
	}
}

// TestAllocAndFreeBookkeeping: with no cuMemAlloc or cuMemFree resolved,
// the engine's own checks come first and the driver's failure leaves its
// records as they were.
func TestAllocAndFreeBookkeeping(t *testing.T) {
	e := fakeEngine(t)
	if p, err := e.Alloc(0); err == nil || p != 0 || err.Error() != "cuda: alloc of 0 bytes" {
		t.Errorf("Alloc(0) = %#x, %v", p, err)
	}
	p, err := e.Alloc(16)
	if err == nil || p != 0 || !strings.HasPrefix(err.Error(), "cuda: alloc 16 bytes on GPU 0: cuMemAlloc: entry point not resolved") {
		t.Errorf("Alloc(16) without cuMemAlloc = %#x, %v", p, err)
	}
	if err := e.Free(0x2000); err == nil || !strings.Contains(err.Error(), "not allocated by this engine") {
		t.Errorf("Free of an unknown pointer: %v", err)
	}
	// 0x2000 as if allocated: refused in a capture, then the driver fails.
	if err := e.Do(func() error { e.allocs[0x2000] = 64; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := e.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := e.Free(0x2000); !errors.Is(err, ErrSyncInCapture) {
		t.Errorf("Free in a capture: %v", err)
	}
	if _, err := e.EndCapture(); err == nil {
		t.Error("the capture survived a Free")
	}
	if err := e.Free(0x2000); err == nil || !strings.HasPrefix(err.Error(), "cuda: free 0x2000: cuMemFree: entry point not resolved") {
		t.Errorf("Free without cuMemFree: %v", err)
	}
	var kept bool
	_ = e.Do(func() error { _, kept = e.allocs[0x2000]; return nil })
	if !kept {
		t.Error("a failed free forgot the allocation")
	}
	if err := e.Do(func() error { delete(e.allocs, 0x2000); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestNewArenaRounding: the largest size that rounds up without wrapping
// reaches the allocation; one more byte is refused; a small size is
// rounded to ArenaAlign.
func TestNewArenaRounding(t *testing.T) {
	e := fakeEngine(t)
	if _, err := e.NewArena(math.MaxUint64 - 254); err == nil || !strings.Contains(err.Error(), "past any device") {
		t.Errorf("NewArena(2^64-255): %v", err)
	}
	// 2^64-256 = 18446744073709551360, a multiple of 256.
	if _, err := e.NewArena(math.MaxUint64 - 255); err == nil || !strings.Contains(err.Error(), "alloc 17179869184.00 GiB (18446744073709551360 bytes)") {
		t.Errorf("NewArena(2^64-256): %v", err)
	}
	if _, err := e.NewArena(300); err == nil || !strings.Contains(err.Error(), "cuda: arena: cuda: alloc 512 bytes on GPU 0") {
		t.Errorf("NewArena(300): %v", err)
	}
}

// TestCopyBytes: AsBytes of one value; an empty copy is a no-op even on a
// closed engine, a real one is ErrClosed there.
func TestCopyBytes(t *testing.T) {
	if b := AsBytes([]uint16{0xbeef}); len(b) != 2 || b[0] != 0xef || b[1] != 0xbe {
		t.Errorf("AsBytes(0xbeef) = % x", b)
	}
	if b := AsBytes([]uint32{}); b != nil {
		t.Errorf("AsBytes of none = %v", b)
	}
	e := fakeEngine(t)
	if err := e.CopyHtoD(0x1000, []byte{7}); err != nil {
		t.Fatalf("CopyHtoD of 1 byte: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.CopyHtoD(0x1000, nil); err != nil {
		t.Errorf("empty CopyHtoD after Close: %v", err)
	}
	if err := e.CopyDtoH(nil, 0x1000); err != nil {
		t.Errorf("empty CopyDtoH after Close: %v", err)
	}
	// The asynchronous ones too: an empty copy touches neither the slice
	// nor the engine.
	if err := e.CopyHtoDAsync(0x1000, nil); err != nil {
		t.Errorf("empty CopyHtoDAsync after Close: %v", err)
	}
	if err := e.CopyDtoHAsync(nil, 0x1000); err != nil {
		t.Errorf("empty CopyDtoHAsync after Close: %v", err)
	}
	if err := e.CopyDtoDAsync(0x1000, 0x2000, 0); err != nil {
		t.Errorf("empty CopyDtoDAsync after Close: %v", err)
	}
	if h, err := e.HostAlloc(0); h != nil || err == nil || err.Error() != "cuda: host alloc of 0 bytes" {
		t.Errorf("HostAlloc(0): %v, %v", h, err)
	}
	if err := e.CopyHtoD(0x1000, []byte{7}); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyHtoD after Close: %v", err)
	}
	if err := e.CopyDtoH(make([]byte, 1), 0x1000); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyDtoH after Close: %v", err)
	}
}
