package cpu

import (
	"runtime"
	"sync"
)

// Pool is a fixed set of worker goroutines, created once with a backend so
// that a matrix-vector product costs a few channel sends rather than
// goroutine starts. The caller's goroutine works too: a Pool of n workers
// runs n-1 goroutines. A nil *Pool runs everything on the caller.
type Pool struct {
	n     int
	work  []chan poolTask
	wg    sync.WaitGroup
	close sync.Once
	// closed: the workers are gone and Parallel runs on its caller, as on a
	// nil pool, rather than send on a closed channel.
	closed bool
}

type poolTask struct {
	fn     func(worker, lo, hi int)
	lo, hi int
	done   *sync.WaitGroup
}

// NewPool starts a pool of n workers (n <= 0: GOMAXPROCS). Close stops it.
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{n: n, work: make([]chan poolTask, n)}
	for w := 1; w < n; w++ {
		ch := make(chan poolTask, 1)
		p.work[w] = ch
		p.wg.Add(1)
		go func(w int) {
			defer p.wg.Done()
			for t := range ch {
				t.fn(w, t.lo, t.hi)
				t.done.Done()
			}
		}(w)
	}
	return p
}

// Workers returns the number of workers (1 for a nil or closed pool).
func (p *Pool) Workers() int {
	if p == nil || p.closed {
		return 1
	}
	return p.n
}

// Close stops the workers. Parallel on a closed pool runs fn on the calling
// goroutine, as on a nil pool.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.close.Do(func() {
		p.closed = true
		for _, ch := range p.work[1:] {
			close(ch)
		}
		p.wg.Wait()
	})
}

// Parallel splits [0, n) into contiguous ranges, at most one per worker and
// none shorter than minChunk (except the last), and calls fn(worker, lo, hi)
// for each, returning when all are done. worker is in [0, Workers()) and
// unique among concurrent calls, so fn may use per-worker scratch space.
// Parallel must not be called concurrently on one pool.
func (p *Pool) Parallel(n, minChunk int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if minChunk < 1 {
		minChunk = 1
	}
	parts := p.Workers()
	if maxParts := (n + minChunk - 1) / minChunk; parts > maxParts {
		parts = maxParts
	}
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var done sync.WaitGroup
	done.Add(parts - 1)
	for w := 1; w < parts; w++ {
		lo, hi := w*n/parts, (w+1)*n/parts
		p.work[w] <- poolTask{fn: fn, lo: lo, hi: hi, done: &done}
	}
	fn(0, 0, n/parts)
	done.Wait()
}
