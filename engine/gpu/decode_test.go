package gpu

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/kernels"
)

// TestGraphTokenCountChecked: GenerateGraph and ContinueGraph refuse a
// negative token count, and a count whose sum with the cache length wraps
// in int, with an error before anything reaches the device (the model here
// has no engine: a call that got that far would panic). A negative n used
// to size GenerateGraph's cache below its prompt, whose last steps then ran
// past the KV rows, and then panic in make; a wrapping n passed the
// capacity check and replayed past the cache.
func TestGraphTokenCountChecked(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 8}, weights: &cuda.Arena{}}
	gs := g.NewGraphDecodeState()
	if _, err := g.GenerateGraph(gs, []int32{1, 2, 3}, -1); err == nil || !strings.Contains(err.Error(), "-1 tokens") {
		t.Errorf("GenerateGraph of -1 tokens: %v", err)
	}
	if _, err := g.GenerateGraph(gs, []int32{1, 2, 3}, math.MaxInt-1); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("GenerateGraph of MaxInt-1 tokens: %v", err)
	}
	gs.cache = &Cache{g: g, arena: &cuda.Arena{}, n: 5, capacity: 8}
	if _, err := g.ContinueGraph(gs, -1); err == nil || !strings.Contains(err.Error(), "-1 tokens") {
		t.Errorf("ContinueGraph of -1 tokens: %v", err)
	}
	if _, err := g.ContinueGraph(gs, math.MaxInt); err == nil || !strings.Contains(err.Error(), "context full") {
		t.Errorf("ContinueGraph of MaxInt tokens at 5 of 8: %v", err)
	}
	if out, err := g.ContinueGraph(gs, 0); err != nil || len(out) != 0 {
		t.Errorf("ContinueGraph of 0 tokens: %v, %v", out, err)
	}
}

// TestClosedCacheOrModelRefused: every call that would launch on, or copy
// to, a cache's device memory refuses a closed cache, or one whose model is closed,
// before it reaches the device (the model has no engine here: a call that
// got that far would panic). On a GPU such a call launched kernels on freed
// memory, which a later allocation may own.
func TestClosedCacheOrModelRefused(t *testing.T) {
	for _, c := range []struct {
		what    string
		weights *cuda.Arena
		arena   *cuda.Arena
		want    string
	}{
		{"closed cache", &cuda.Arena{}, nil, "cache closed"},
		{"closed model", nil, &cuda.Arena{}, "model closed"},
	} {
		g := &Model{cfg: model.Config{NVocab: 8}, weights: c.weights}
		cc := &Cache{g: g, arena: c.arena, n: 1, capacity: 4}
		gs := &GraphDecodeState{g: g, cache: cc}
		s := &Session{g: g, cc: cc}
		for name, call := range map[string]func() error{
			"DecodeStep":         func() error { _, err := g.DecodeStep(cc, 1); return err },
			"DecodeStepDC":       func() error { return g.DecodeStepDC(cc) },
			"ProfileStep":        func() error { _, err := g.ProfileStep(cc, 1); return err },
			"ProfileGraphStep":   func() error { _, err := g.ProfileGraphStep(cc); return err },
			"Reset":              cc.Reset,
			"FillSynthetic":      func() error { return cc.FillSynthetic(1, 1, 1) },
			"ContinueGraph":      func() error { _, err := g.ContinueGraph(gs, 2); return err },
			"Session.DecodeStep": func() error { _, err := s.DecodeStep(1); return err },
			"Session.DecodeTop":  func() error { _, _, err := s.DecodeTop(1, 1); return err },
			"Session.Feed":       func() error { return s.Feed([]int32{1}) },
			"SetSampling":        func() error { return gs.SetSampling(&Sampling{TopK: 4, Temperature: 1}) },
			"SetPenalty":         func() error { return gs.SetPenalty(&Penalty{Penalty: 1.1, Window: 4}) },
		} {
			if err := call(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s = %v, want an error saying %q", c.what, name, err, c.want)
			}
		}
	}
}

// TestCacheCapacityChecked: NewCache refuses a capacity past the model's
// context length, as the CPU backend's does, before it allocates (the model
// has no engine here). Unchecked, 1<<55 tokens wrapped the KV size of these
// dims (2 KV heads of 256 f16 values: 2^64 bytes) to 0, so the cache came
// with null KV buffers and a capacity that int32 reads as 0.
func TestCacheCapacityChecked(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 8, NLayer: 1, Kinds: []model.LayerKind{model.LayerAttention},
		NHead: 2, NHeadKV: 2, HeadDimK: 256, HeadDimV: 256, ContextLength: 256}, weights: &cuda.Arena{}}
	for _, n := range []int{257, 1 << 55} {
		if _, err := g.NewCache(n); err == nil || !strings.Contains(err.Error(), "context length 256") {
			t.Errorf("NewCache(%d) with context length 256: %v", n, err)
		}
	}
	g.cfg.ContextLength = 0 // none in the file: memra's own limit
	if _, err := g.NewCache(model.MaxContext + 1); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("NewCache(MaxContext+1): %v", err)
	}
}

// TestGenerateGraphAtContextLength: GenerateGraph takes prompt+n−1
// positions (its last token is never fed), so a call that fits the model's
// context exactly reaches the device, and one more token is refused before
// it. The cache was sized prompt+n, which NewCache's context check refused
// for the exact fit. The model has no engine here: reaching the device
// panics, which is how the test sees that the call was not refused.
func TestGenerateGraphAtContextLength(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 8, ContextLength: 8}, weights: &cuda.Arena{}}
	prompt := []int32{1, 2, 3}
	if _, err := g.GenerateGraph(g.NewGraphDecodeState(), prompt, 7); err == nil || !strings.Contains(err.Error(), "9 positions are past the model's context length 8") {
		t.Errorf("3 prompt tokens + 7 with context length 8: %v, want 9 positions refused", err)
	}
	for _, n := range []int{0, 1, 6} {
		var err error
		reached := func() (reached bool) {
			defer func() { reached = recover() != nil }()
			_, err = g.GenerateGraph(g.NewGraphDecodeState(), prompt, n)
			return false
		}()
		if !reached {
			t.Errorf("3 prompt tokens + %d with context length 8: %v, want the call to reach the device", n, err)
		}
	}
}

// TestCountersOutOfStepRefused: DecodeStepDC, ContinueGraph and
// ProfileGraphStep take the token, position and t_kv from the device
// counters, so they refuse a cache whose counters are not at its length,
// before the device (the model has no engine here: a call that got that
// far would panic). After Reset the counters are zero, t_kv 0 for a step
// that needs 1; after eager steps they still point at an earlier position,
// whose KV row the step would overwrite while Len counted a new one. The
// first two ran without a word before they checked.
func TestCountersOutOfStepRefused(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 8}, weights: &cuda.Arena{}}
	for _, c := range []struct {
		what  string
		ctrAt int
	}{
		{"after Reset", -1},
		{"after eager steps", 1},
	} {
		cc := &Cache{g: g, arena: &cuda.Arena{}, n: 3, capacity: 8, ctrAt: c.ctrAt}
		gs := &GraphDecodeState{g: g, cache: cc}
		if err := g.DecodeStepDC(cc); err == nil || !strings.Contains(err.Error(), "device counters are not at the cache's 3 tokens") {
			t.Errorf("%s: DecodeStepDC: %v, want the counters refused", c.what, err)
		}
		if _, err := g.ContinueGraph(gs, 2); err == nil || !strings.Contains(err.Error(), "device counters are not at the cache's 3 tokens") {
			t.Errorf("%s: ContinueGraph: %v, want the counters refused", c.what, err)
		}
		if _, err := g.ProfileGraphStep(cc); err == nil || !strings.Contains(err.Error(), "device counters are not at the cache's 3 tokens") {
			t.Errorf("%s: ProfileGraphStep: %v, want the counters refused", c.what, err)
		}
		if out, err := g.ContinueGraph(gs, 0); err != nil || len(out) != 0 {
			t.Errorf("%s: ContinueGraph of 0 tokens (reads no counter): %v, %v", c.what, out, err)
		}
	}
	// Counters at the length: both calls reach the device.
	cc := &Cache{g: g, arena: &cuda.Arena{}, n: 3, capacity: 8, ctrAt: 3}
	gs := &GraphDecodeState{g: g, cache: cc}
	for name, call := range map[string]func() error{
		"DecodeStepDC":     func() error { return g.DecodeStepDC(cc) },
		"ContinueGraph":    func() error { _, err := g.ContinueGraph(gs, 2); return err },
		"ProfileGraphStep": func() error { _, err := g.ProfileGraphStep(cc); return err },
	} {
		var err error
		reached := func() (reached bool) {
			defer func() { reached = recover() != nil }()
			err = call()
			return false
		}()
		if !reached {
			t.Errorf("%s with the counters at the length: %v, want the call to reach the device", name, err)
		}
	}
}

// TestSamplingCheck: the device's sampling check, which needs no GPU,
// accepts what sample.Options.Validate accepts for a sampled run with a
// top-k the device holds, and refuses the rest: an infinite temperature
// among them (Sampling's doc once said +Inf drew every candidate alike).
func TestSamplingCheck(t *testing.T) {
	const vocab = 1000
	for _, s := range []Sampling{
		{TopK: 40, Temperature: 0.8, TopP: 0.95, MinP: 0.05}, // the CLI's defaults
		{TopK: 1, Temperature: 1e-30},
		{TopK: kernels.TopKMax, Temperature: 1e30, TopP: 1, MinP: 1},
	} {
		o := sample.Options{Temperature: s.Temperature, TopK: s.TopK, TopP: s.TopP, MinP: s.MinP}
		if err := errors.Join(s.check(vocab), o.Validate()); err != nil {
			t.Errorf("%+v refused: %v", s, err)
		}
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, s := range []Sampling{
		{TopK: 40, Temperature: inf}, {TopK: 40, Temperature: nan}, {TopK: 40, Temperature: 0},
		{TopK: 40, Temperature: 1, TopP: 1.5}, {TopK: 40, Temperature: 1, MinP: nan},
		{TopK: 0, Temperature: 1}, {TopK: kernels.TopKMax + 1, Temperature: 1},
	} {
		if err := s.check(vocab); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if err := (&Sampling{TopK: 9, Temperature: 1}).check(8); err == nil {
		t.Error("top-k 9 of a vocabulary of 8 accepted")
	}
}
