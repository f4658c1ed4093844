//go:build linux && (amd64 || arm64)

package cuda

import (
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// TestL2SetAsideConcurrent: L2SetAside, documented safe for concurrent
// use, reads what the driver granted while HoldL2 and Release, on the
// engine thread, have the driver write it. The fake cuCtxGetLimit is Go
// (a purego callback), so the race detector sees its write: through a
// pointer to the field, which L2SetAside read outside Do, it raced (go test
// -race). The fake grants the request rounded up to 1 MiB.
func TestL2SetAsideConcurrent(t *testing.T) {
	e := fakeEngine(t)
	var limit uint64 // the fake driver's; engine thread only
	setLimit := purego.NewCallback(func(which, value uintptr) uintptr {
		limit = uint64(value)
		return 0
	})
	getLimit := purego.NewCallback(func(p *uint64, which uintptr) uintptr {
		*p = alignUp(limit, 1<<20)
		return 0
	})
	if err := e.Do(func() error {
		e.d.p.cuCtxSetLimit, e.d.p.cuCtxGetLimit = setLimit, getLimit
		e.l2MaxSet, e.l2MaxWindow = 8<<20, 8<<20
		e.l2Holds = map[*L2Hold]struct{}{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if v := e.L2SetAside(); v != 0 && v != 1<<20 && v != 2<<20 {
				t.Errorf("L2SetAside = %d: not a granted set-aside", v)
				return
			}
		}
	}()
	for range 200 {
		h1, err := e.HoldL2(1000)
		if err != nil || h1 == nil {
			t.Fatalf("HoldL2(1000): %v, %v", h1, err)
		}
		h2, err := e.HoldL2(1<<20 + 1)
		if err != nil || h2 == nil {
			t.Fatalf("HoldL2(1 MiB + 1): %v, %v", h2, err)
		}
		if got := e.L2SetAside(); got != 2<<20 {
			t.Fatalf("L2SetAside with holds of 1000 bytes and 1 MiB + 1 = %d, want 2 MiB granted", got)
		}
		if err := h2.Release(); err != nil {
			t.Fatal(err)
		}
		if got := e.L2SetAside(); got != 1<<20 {
			t.Fatalf("L2SetAside with a hold of 1000 bytes left = %d, want 1 MiB", got)
		}
		if err := h1.Release(); err != nil {
			t.Fatal(err)
		}
		if got := e.L2SetAside(); got != 0 {
			t.Fatalf("L2SetAside with no hold = %d, want 0", got)
		}
	}
	close(stop)
	wg.Wait()
}
