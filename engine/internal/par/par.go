// Package par splits row loops over the CPUs (weight repacking at GPU
// upload, quantisation in convert): the one place that decides how.
package par

import (
	"runtime"
	"sync"
)

// Rows runs fn over [0, n) in contiguous ranges, one goroutine per range,
// at most one range per CPU and at least minRows rows per range (fewer
// rows than that run on the calling goroutine). It returns when all have.
func Rows(n, minRows int, fn func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/max(1, minRows)))
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(n*t/w, n*(t+1)/w)
		}()
	}
	wg.Wait()
}
