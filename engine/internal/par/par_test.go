package par

import (
	"sync/atomic"
	"testing"
)

// TestRows: every index in [0, n) is visited exactly once, in ranges of at
// least minRows (but for n < minRows), for sizes around the split points.
func TestRows(t *testing.T) {
	for _, n := range []int{0, 1, 5, 63, 64, 65, 1000, 4097} {
		for _, minRows := range []int{0, 1, 64} {
			seen := make([]atomic.Int32, n)
			Rows(n, minRows, func(lo, hi int) {
				if hi-lo < minRows && hi-lo != n {
					t.Errorf("n %d min %d: range [%d,%d) is short", n, minRows, lo, hi)
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("n %d min %d: index %d visited %d times", n, minRows, i, c)
				}
			}
		}
	}
}
