package gpu

import (
	"errors"
	"fmt"

	"github.com/memra-ai/memra/engine/cuda"
)

// Session pairs a model with one cache and implements sample.Decoder
// (DecodeStep, Reset, Len, Capacity), sample.TopDecoder (DecodeTop,
// MaxTop) and sample.Feeder (Feed) for generation whose tokens the host
// picks (sampling). Each step
// replays the CUDA graph of its bucket, captured on first use: the host
// writes the token, position and attention length into the device counters,
// the graph runs the step from them (the device-counter step without its
// argmax), and the logits come back, or, for DecodeTop, only the top
// kernels.TopKMax of them, selected on the device (topk.cu). The kernels and
// their geometry are the eager DecodeStep's, reading the same values through
// their device pointers, so the logits are the same bits
// (TestGPUSessionEqualsEager); what the graph saves is a launch per kernel
// from the host.
type Session struct {
	g      *Model
	cc     *Cache
	graphs map[sessionGraph]cuda.GraphExec
}

// sessionGraph keys a session's graphs: the bucket, and whether the step
// ends with the top-k selection.
type sessionGraph struct {
	b   Bucket
	top bool
}

// NewSession allocates a cache of capacity tokens.
func (g *Model) NewSession(capacity int) (*Session, error) {
	cc, err := g.NewCache(capacity)
	if err != nil {
		return nil, err
	}
	return &Session{g: g, cc: cc, graphs: map[sessionGraph]cuda.GraphExec{}}, nil
}

// DecodeStep appends token and returns the logits (pinned memory owned by
// the session, valid until the next step or Close).
func (s *Session) DecodeStep(token int32) ([]float32, error) {
	if err := s.step(token, false); err != nil {
		return nil, err
	}
	return s.cc.logitsHost, nil
}

// Feed appends tokens without computing their logits (sample.Feeder: the
// prompt's tokens before its last): eager steps that stop before the final
// norm, queued back to back, with nothing read back. A step that cannot
// run (a full cache, a token outside the vocabulary) is reported before
// any is queued.
func (s *Session) Feed(tokens []int32) error {
	g, cc := s.g, s.cc
	if err := cc.open(); err != nil {
		return err
	}
	if need := cc.n + len(tokens); need > cc.capacity {
		return fmt.Errorf("gpu: feed %d tokens at %d: context full (capacity %d)", len(tokens), cc.n, cc.capacity)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= g.cfg.NVocab {
			return fmt.Errorf("gpu: feed: token %d (index %d) out of range [0, %d)", t, i, g.cfg.NVocab)
		}
	}
	if err := g.e.Do(func() error { return g.feed(cc, tokens, cc.n) }); err != nil {
		return cc.lose(fmt.Errorf("gpu: %w", err))
	}
	cc.n += len(tokens)
	return nil
}

// MaxTop is the largest k DecodeTop serves: kernels.TopKMax, or the
// vocabulary if smaller.
func (s *Session) MaxTop() int { return s.g.MaxTop() }

// DecodeTop appends token and returns the k most likely next tokens and
// their logits, best first (value descending, ties by lower id, NaN last:
// the order of sample.TopK), both pinned memory owned by the session and
// valid until the next step or Close. 512 bytes come back instead of the
// logits.
func (s *Session) DecodeTop(token int32, k int) ([]int32, []float32, error) {
	if k < 1 || k > s.MaxTop() {
		return nil, nil, fmt.Errorf("gpu: top-k %d: the device selects 1 to %d", k, s.MaxTop())
	}
	if err := s.step(token, true); err != nil {
		return nil, nil, err
	}
	return s.cc.topIDs[:k], s.cc.topVals[:k], nil
}

// step replays the step's graph and reads back the logits, or the top k.
func (s *Session) step(token int32, top bool) error {
	g, cc := s.g, s.cc
	if err := g.checkStep(cc, token); err != nil {
		return err
	}
	pos := cc.n
	key := sessionGraph{g.BucketKey(pos + 1), top}
	x, ok := s.graphs[key]
	if !ok {
		a := cc.dcArgs(key.b)
		a.deviceToken = false // the host picks the next token: no argmax, the counters stay
		a.topK = top
		var err error
		if x, _, err = g.capture(cc, a); err != nil {
			return fmt.Errorf("gpu: session graph (top-k %v): %w", top, err)
		}
		s.graphs[key] = x
	}
	err := g.e.Do(func() error {
		if err := g.k.CountersSet(cc.s.ctr, token, int32(pos), int32(pos+1)); err != nil {
			return err
		}
		if err := g.e.GraphLaunch(x); err != nil {
			return err
		}
		if top {
			return g.e.CopyDtoH(cc.topPinned.Bytes(), cc.s.top)
		}
		return g.e.CopyDtoH(cuda.AsBytes(cc.logitsHost), cc.s.logits)
	})
	if err != nil {
		return cc.lose(fmt.Errorf("gpu: decode step at %d: %w", pos, err))
	}
	cc.n++
	return nil
}

// Reset empties the cache (the graphs stay: they hold the cache's
// pointers, not its contents). A device failure here surfaces at the next
// step.
func (s *Session) Reset() { _ = s.cc.Reset() }

// Len is the number of tokens in the cache.
func (s *Session) Len() int { return s.cc.Len() }

// Capacity is the most tokens the cache holds.
func (s *Session) Capacity() int { return s.cc.Capacity() }

// Close destroys the graphs and frees the cache.
func (s *Session) Close() error {
	var errs []error
	for key, x := range s.graphs {
		errs = append(errs, s.g.e.DestroyGraphExec(x))
		delete(s.graphs, key)
	}
	errs = append(errs, s.cc.Close())
	return errors.Join(errs...)
}
