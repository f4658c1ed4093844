package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
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
	call   *poolCall
}

// poolCall is one Parallel call: the workers it waits for and the first
// panic among its ranges.
type poolCall struct {
	done     sync.WaitGroup
	mu       sync.Mutex
	panicked error
}

// run calls fn, recording a panic rather than letting it end the process
// (a panic on a worker goroutine cannot be recovered by the caller).
func (c *poolCall) run(fn func(worker, lo, hi int), w, lo, hi int) {
	defer func() {
		if r := recover(); r != nil {
			err, ok := r.(error)
			if !ok {
				err = fmt.Errorf("%v", r)
			}
			c.mu.Lock()
			if c.panicked == nil {
				c.panicked = fmt.Errorf("cpu pool worker %d, range [%d, %d): %w\n%s", w, lo, hi, err, debug.Stack())
			}
			c.mu.Unlock()
		}
	}()
	fn(w, lo, hi)
}

// NewPool starts a pool of n workers (n <= 0: GOMAXPROCS; more than
// MaxThreads: MaxThreads, rather than a goroutine each of a mistyped
// count). Close stops it.
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	n = min(n, MaxThreads)
	p := &Pool{n: n, work: make([]chan poolTask, n)}
	for w := 1; w < n; w++ {
		ch := make(chan poolTask, 1)
		p.work[w] = ch
		p.wg.Add(1)
		go func(w int) {
			defer p.wg.Done()
			for t := range ch {
				t.call.run(t.fn, w, t.lo, t.hi)
				t.call.done.Done()
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
// none shorter than minChunk (one range if n < 2·minChunk), and calls
// fn(worker, lo, hi) for each, returning when all are done. worker is in [0, Workers()) and
// unique among concurrent calls, so fn may use per-worker scratch space.
// Parallel must not be called concurrently on one pool, nor with Close;
// after Close it calls fn(0, 0, n) on the caller. A panic in fn, on any
// worker, is raised again on the caller once every range has returned (an
// error wrapping the value, with the worker's stack).
func (p *Pool) Parallel(n, minChunk int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if minChunk < 1 {
		minChunk = 1
	}
	parts := p.Workers()
	if maxParts := n / minChunk; parts > maxParts {
		parts = maxParts
	}
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	call := new(poolCall)
	call.done.Add(parts - 1)
	for w := 1; w < parts; w++ {
		lo, hi := w*n/parts, (w+1)*n/parts
		p.work[w] <- poolTask{fn: fn, lo: lo, hi: hi, call: call}
	}
	call.run(fn, 0, 0, n/parts)
	call.done.Wait()
	if call.panicked != nil {
		panic(call.panicked)
	}
}
