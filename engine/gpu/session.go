package gpu

import (
	"errors"
	"fmt"

	"github.com/memra-ai/memra/engine/cuda"
)

// Session pairs a model with one cache and implements sample.Decoder
// (DecodeStep, Reset, Len, Capacity) for generation whose tokens the host
// picks (sampling). Each step replays the CUDA graph of its bucket, captured
// on first use: the host writes the token, position and attention length
// into the device counters, the graph runs the step from them (the
// device-counter step without its argmax), and the logits come back. The
// kernels and their geometry are the eager DecodeStep's, reading the same
// values through their device pointers, so the logits are the same bits
// (TestGPUSessionEqualsEager); what the graph saves is a launch per kernel
// from the host.
type Session struct {
	g      *Model
	cc     *Cache
	graphs map[Bucket]cuda.GraphExec
}

// NewSession allocates a cache of capacity tokens.
func (g *Model) NewSession(capacity int) (*Session, error) {
	cc, err := g.NewCache(capacity)
	if err != nil {
		return nil, err
	}
	return &Session{g: g, cc: cc, graphs: map[Bucket]cuda.GraphExec{}}, nil
}

// DecodeStep appends token and returns the logits (owned by the session,
// valid until the next step).
func (s *Session) DecodeStep(token int32) ([]float32, error) {
	g, cc := s.g, s.cc
	if err := g.checkStep(cc, token); err != nil {
		return nil, err
	}
	pos := cc.n
	b := g.BucketKey(pos + 1)
	x, ok := s.graphs[b]
	if !ok {
		a := cc.dcArgs(b)
		a.deviceToken = false // the host picks the next token: no argmax, the counters stay
		var err error
		if x, _, err = g.capture(cc, a); err != nil {
			return nil, err
		}
		s.graphs[b] = x
	}
	err := g.e.Do(func() error {
		if err := g.k.CountersSet(cc.s.ctr, token, int32(pos), int32(pos+1)); err != nil {
			return err
		}
		if err := g.e.GraphLaunch(x); err != nil {
			return err
		}
		return g.e.CopyDtoH(cuda.AsBytes(cc.logitsHost), cc.s.logits)
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: decode step at %d: %w", pos, err)
	}
	cc.n++
	return cc.logitsHost, nil
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
	for b, x := range s.graphs {
		errs = append(errs, s.g.e.DestroyGraphExec(x))
		delete(s.graphs, b)
	}
	errs = append(errs, s.cc.Close())
	return errors.Join(errs...)
}
