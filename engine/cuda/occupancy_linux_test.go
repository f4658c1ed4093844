//go:build linux && (amd64 || arm64)

package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// TestMaxActiveBlocksPerSMRange: a block size or dynamic shared memory that
// the driver's int and size_t cannot carry is refused, naming it, as
// SetFuncAttribute refuses its value. Converted unchecked, a block of
// 2^32+128 threads reached the driver as 128 and came back as 128's
// occupancy with no error, and -1 byte of shared memory as 2^64-1. The fake
// driver (a purego callback) grants 2,048 threads an SM.
func TestMaxActiveBlocksPerSMRange(t *testing.T) {
	e := fakeEngine(t)
	var calls int
	occupancy := purego.NewCallback(func(n *int32, f, block, shared uintptr) uintptr {
		calls++
		*n = int32(2048 / max(int32(block), 1))
		return 0
	})
	if err := e.Do(func() error { e.d.p.cuOccupancyMaxActiveBlocksPerMultiprocessor = occupancy; return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := e.MaxActiveBlocksPerSM(1, 256, 1024); n != 8 || err != nil {
		t.Fatalf("MaxActiveBlocksPerSM(256 threads, 1 KiB) = %d, %v; want 8", n, err)
	}
	for _, c := range []struct {
		block, shared int
		want          string
	}{
		{1<<32 + 128, 0, "block of 4294967424 threads"},
		{math.MaxInt32 + 1, 0, "block of 2147483648 threads"},
		{-256, 0, "block of -256 threads"},
		{256, -1, "-1 bytes of dynamic shared memory"},
	} {
		calls = 0
		n, err := e.MaxActiveBlocksPerSM(1, c.block, c.shared)
		if err == nil || !strings.Contains(err.Error(), c.want) || n != 0 || calls != 0 {
			t.Errorf("MaxActiveBlocksPerSM(%d threads, %d bytes) = %d, %v (%d driver calls); want an error naming %q before the driver",
				c.block, c.shared, n, err, calls, c.want)
		}
	}
}
