package gpu

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
)

// refused runs call and returns its error, or says that it got past its
// checks: the models here have no engine, so a call that reaches the device
// panics.
func refused(call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reached the device (%v)", p)
		}
	}()
	if err := call(); err != nil {
		return err
	}
	return fmt.Errorf("returned nil")
}

// TestCacheOfAnotherModelRefused: every call that runs a model's step on a
// cache, or a GraphDecodeState's, refuses one that another model made,
// before the device. Only GenerateGraph checked: a.DecodeStep(cacheOfB, t)
// ran a's layers over b's buffers, sized for b, and wrote past them.
func TestCacheOfAnotherModelRefused(t *testing.T) {
	a := &Model{cfg: model.Config{NVocab: 1000}, weights: new(cuda.Arena)}
	b := &Model{cfg: model.Config{NVocab: 1000}, weights: new(cuda.Arena)}
	cc := &Cache{g: b, capacity: 8, arena: new(cuda.Arena), n: 3, ctrAt: 3}
	gs := &GraphDecodeState{g: b, cache: cc, graphs: map[graphKey]cuda.GraphExec{}}
	for name, call := range map[string]func() error{
		"checkStep":         func() error { return a.checkStep(cc, 500) },
		"DecodeStep":        func() error { _, err := a.DecodeStep(cc, 500); return err },
		"ProfileStep":       func() error { _, err := a.ProfileStep(cc, 500); return err },
		"ProfileGraphStep":  func() error { _, err := a.ProfileGraphStep(cc); return err },
		"DecodeStepDC":      func() error { return a.DecodeStepDC(cc) },
		"GenerateGraph":     func() error { _, err := a.GenerateGraph(gs, []int32{1}, 2); return err },
		"ContinueGraph":     func() error { _, err := a.ContinueGraph(gs, 2); return err },
		"ContinueGraphFunc": func() error { return a.ContinueGraphFunc(gs, 2, func(int32) error { return nil }) },
	} {
		if err := refused(call); !strings.Contains(err.Error(), "belongs to another model") {
			t.Errorf("a.%s on b's cache: %v, want it refused as another model's", name, err)
		}
	}
	// The model's own cache passes the check.
	if err := b.checkStep(cc, 500); err != nil {
		t.Errorf("b.checkStep on b's cache: %v", err)
	}
	if err := b.checkContinue(gs, 2); err != nil {
		t.Errorf("b.checkContinue on b's state: %v", err)
	}
}

// TestReserveRefusedKeepsCache: a Reserve that NewCache would refuse fails
// before it touches the state: its cache keeps its tokens and counters.
// Past the model's context length, Reserve closed the state first, so a
// refused growth destroyed a working cache and its graphs; below 1, it took
// the branch for a cache that holds the capacity and reset it, returning nil.
func TestReserveRefusedKeepsCache(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 8, ContextLength: 100}, weights: new(cuda.Arena)}
	arena := new(cuda.Arena)
	cc := &Cache{g: g, capacity: 50, arena: arena, n: 3, ctrAt: 3}
	gs := &GraphDecodeState{g: g, cache: cc, graphs: map[graphKey]cuda.GraphExec{}}
	for _, n := range []int{101, 1000, 0, -1} {
		want := fmt.Sprintf("%d positions are past the model's context length 100", n)
		if n < 1 {
			want = fmt.Sprintf("cache capacity %d must be at least 1", n)
		}
		if err := refused(func() error { return gs.Reserve(n) }); !strings.Contains(err.Error(), want) {
			t.Errorf("Reserve(%d) with a cache of 50, context length 100: %v, want it refused", n, err)
		}
		if gs.Cache() != cc || cc.arena != arena || cc.n != 3 || cc.ctrAt != 3 || cc.capacity != 50 {
			t.Fatalf("after the refused Reserve(%d): state cache %p (was %p), arena %p, %d of %d tokens, counters at %d; want the cache untouched",
				n, gs.Cache(), cc, cc.arena, cc.n, cc.capacity, cc.ctrAt)
		}
	}
	// A new state has no cache to keep, and a capacity below 1 is refused
	// as NewCache refuses it.
	fresh := g.NewGraphDecodeState()
	if err := refused(func() error { return fresh.Reserve(0) }); !strings.Contains(err.Error(), "must be at least 1") {
		t.Errorf("Reserve(0) of a new state: %v", err)
	}
}

// TestLostCacheRefused: after a step that stopped partway (a launch or copy
// failed once others were queued), some layers hold a token the cache's
// length does not count, and steps on it would give wrong tokens. Every
// step refuses such a cache, before the device, with the step's error and
// what to do; Reset, which mends it, and GenerateGraph, which starts over
// with one, go on to the device.
func TestLostCacheRefused(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 1000, ContextLength: 100}, weights: new(cuda.Arena)}
	cc := &Cache{g: g, capacity: 8, arena: new(cuda.Arena), n: 3, ctrAt: 3}
	gs := &GraphDecodeState{g: g, cache: cc, graphs: map[graphKey]cuda.GraphExec{}}
	s := &Session{g: g, cc: cc, graphs: map[sessionGraph]cuda.GraphExec{}}
	cause := errors.New("gpu: decode step at 3: launch gdn_delta: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
	if err := cc.lose(cause); err != cause || cc.lost != cause {
		t.Fatalf("lose: %v, lost %v", err, cc.lost)
	}
	for name, call := range map[string]func() error{
		"DecodeStep":         func() error { _, err := g.DecodeStep(cc, 500); return err },
		"ProfileStep":        func() error { _, err := g.ProfileStep(cc, 500); return err },
		"ProfileGraphStep":   func() error { _, err := g.ProfileGraphStep(cc); return err },
		"DecodeStepDC":       func() error { return g.DecodeStepDC(cc) },
		"ContinueGraph":      func() error { _, err := g.ContinueGraph(gs, 2); return err },
		"ContinueGraphFunc":  func() error { return g.ContinueGraphFunc(gs, 2, func(int32) error { return nil }) },
		"FillSynthetic":      func() error { return cc.FillSynthetic(2, 1, 1) },
		"Session.DecodeStep": func() error { _, err := s.DecodeStep(500); return err },
		"Session.DecodeTop":  func() error { _, _, err := s.DecodeTop(500, 4); return err },
		"Session.Feed":       func() error { return s.Feed([]int32{1, 2}) },
	} {
		err := refused(call)
		if !errors.Is(err, cause) || !strings.Contains(err.Error(), "stopped partway") || !strings.Contains(err.Error(), "Reset it") {
			t.Errorf("%s on a lost cache: %v, want it refused naming the cause and Reset", name, err)
		}
	}
	for name, call := range map[string]func() error{
		"Reset":         cc.Reset,
		"GenerateGraph": func() error { _, err := g.GenerateGraph(gs, []int32{1}, 2); return err },
	} {
		if err := refused(call); !strings.Contains(err.Error(), "reached the device") {
			t.Errorf("%s on a lost cache: %v, want it to go on to the device", name, err)
		}
	}
	if cc.lose(nil) != nil || cc.lost != cause {
		t.Errorf("lose(nil) changed lost to %v", cc.lost)
	}
}
