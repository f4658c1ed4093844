package evtime

import (
	"errors"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
)

// TestGPUPerCall runs PerCall on a real device copy: fn is called warm +
// batches·n times with the indices it promises, the result is a positive
// time, and an error from fn comes back. It skips without a GPU.
func TestGPUPerCall(t *testing.T) {
	e, err := cuda.New(0)
	if err != nil {
		if !cuda.NoGPU(err) { // a driver that is there and fails is a failure, not a skip
			t.Fatal(err)
		}
		t.Skipf("no GPU: %v", err)
	}
	defer e.Close()
	const size = 1 << 20
	src, err := e.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free(src)
	dst, err := e.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free(dst)
	var seen []int
	sec, err := PerCall(e, 2, 3, 4, func(i int) error {
		seen = append(seen, i)
		return e.CopyDtoDAsync(dst, src, size)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}
	if len(seen) != len(want) {
		t.Fatalf("fn called with %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("fn called with %v, want %v", seen, want)
		}
	}
	if !(sec > 0) {
		t.Errorf("PerCall = %g s, want > 0", sec)
	}
	boom := errors.New("boom")
	if _, err := PerCall(e, 0, 1, 1, func(int) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("fn's error: got %v", err)
	}
}
