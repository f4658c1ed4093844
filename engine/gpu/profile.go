package gpu

import (
	"errors"
	"fmt"
	"time"

	"github.com/memra-ai/memra/engine/cuda"
)

// Launch is one kernel launch of a profiled step or prefill chunk and its
// GPU time.
type Launch struct {
	Kernel string
	Time   time.Duration
	// Shape is what the launch works on: a matrix's rows × cols, an
	// attention bucket's splits, a DeltaNet layer's heads or conv channels;
	// empty for kernels without a shape of their own.
	Shape string
	// Weights and Cache are the device-memory bytes the launch must move:
	// the weights it reads (their GGUF size, so they add up to the bytes
	// the roofline counts) and the KV cache and recurrent state it reads
	// and writes. Activations (a few KB a kernel) are not counted.
	Weights, Cache uint64
}

// launchNote is what the step or chunk code says about its next launch
// (note).
type launchNote struct {
	shape          launchShape
	weights, cache uint64
}

// launchShape is a launch's Shape, kept as numbers so that describing a launch
// formats nothing outside a profile: unit "×" reads n×m, "row" one row of
// an n×m table, "rows" a row a token of it (a chunk's embedding), any other
// unit n of it ("" none).
type launchShape struct {
	n, m int
	unit string
}

func (s launchShape) String() string {
	switch s.unit {
	case "":
		return ""
	case "×":
		return fmt.Sprintf("%d×%d", s.n, s.m)
	case "row":
		return fmt.Sprintf("1 row of %d×%d", s.n, s.m)
	case "rows":
		return fmt.Sprintf("a row a token of %d×%d", s.n, s.m)
	}
	return fmt.Sprintf("%d %s", s.n, s.unit)
}

// note describes the next kernel launch for ProfileStep, ProfileGraphStep
// and ProfilePrefill; outside a profile it does nothing.
func (g *Model) note(sh launchShape, weights, cache uint64) {
	if g.prof != nil {
		*g.prof = launchNote{sh, weights, cache}
	}
}

// maxProfiledLaunches bounds the timing events of ProfileStep,
// ProfileGraphStep and ProfilePrefill (a decode step of the 9B preset launches 228 kernels, a
// prefill chunk of 8 tokens of its Q4_K file 360: run392). Since chunks
// hold 32 tokens (perf.md step 127) a model whose FFN gate and up are
// separate launches makes a SwiGLU launch a token a layer, 1,024 a chunk
// for 32 layers, and the tensor-core splits a launch a token too.
const maxProfiledLaunches = 4095

// ProfileStep runs one eager decode step (as DecodeStep, without copying the
// logits back) and returns each kernel launch's GPU time, in launch order.
// The step is captured with a timing event (an event-record node) behind
// every kernel and replayed once as a graph, so no host launch gap lands
// between two events. Once the graph has run the cache has taken the step,
// even when reading the times fails. The
// events order the kernels (programmatic dependent launch has nothing to
// overlap), so each time is the kernel's own run, and their sum exceeds a
// graph step by what the overlap saves.
func (g *Model) ProfileStep(cc *Cache, token int32) ([]Launch, error) {
	if err := g.checkStep(cc, token); err != nil {
		return nil, err
	}
	pos := cc.n
	a := stepArgs{token: token, pos: int32(pos), bucket: g.BucketKey(pos + 1)}
	ls, err := g.profileLaunches(cc, 1, func() error { return g.enqueue(cc, a) })
	if err != nil {
		return nil, fmt.Errorf("gpu: profiled step at %d: %w", pos, err)
	}
	return ls, nil
}

// ProfileGraphStep times the kernels of the step that greedy graph decode
// replays, as ProfileStep times an eager step's: the device-counter step
// (DecodeStepDC), which picks the next token on the device, through the
// logits screen where the model has one (a 16-bit logits matrix: the
// eager step writes every logit instead, perf.md step 132). The device
// counters must be at the cache's length (FillSynthetic, GenerateGraph and
// device-counter steps leave them there); the step advances them and the
// cache as a replay would, timed or not.
func (g *Model) ProfileGraphStep(cc *Cache) ([]Launch, error) {
	a, err := g.dcStep(cc)
	if err != nil {
		return nil, err
	}
	pos := cc.n
	// The kernels take the position from the counters; the launch notes
	// (the keys attn_split reads) from here.
	a.pos = int32(pos)
	ls, err := g.profileLaunches(cc, 1, func() error { return g.enqueue(cc, a) })
	cc.ctrAt = cc.n // the counters went on with the cache if the step ran
	if err != nil {
		return nil, fmt.Errorf("gpu: profiled graph step at %d: %w", pos, err)
	}
	return ls, nil
}

// ProfilePrefill runs tokens, at most PrefillChunk of them, through one
// prefill chunk at the cache's length, as a prompt's priming runs them
// (the cache takes them as Feed would), and returns each kernel launch's
// GPU time, in launch order, timed as ProfileStep times a step's. A model
// that feeds prompts token by token has no chunk to profile.
func (g *Model) ProfilePrefill(cc *Cache, tokens []int32) ([]Launch, error) {
	if err := g.owns(cc); err != nil {
		return nil, err
	}
	if err := cc.open(); err != nil {
		return nil, err
	}
	if g.pf == nil || len(cc.ch.tok) == 0 {
		return nil, errors.New("gpu: profile prefill: the model feeds prompts token by token (no prefill chunk)")
	}
	if len(tokens) < 1 || len(tokens) > g.pf.tokens {
		return nil, fmt.Errorf("gpu: profile prefill: %d tokens, a chunk takes 1 to %d", len(tokens), g.pf.tokens)
	}
	if need := cc.n + len(tokens); need > cc.capacity {
		return nil, fmt.Errorf("gpu: profile prefill of %d tokens at %d: context full (capacity %d)", len(tokens), cc.n, cc.capacity)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= g.cfg.NVocab {
			return nil, fmt.Errorf("gpu: profile prefill: token %d (index %d) out of range [0, %d)", t, i, g.cfg.NVocab)
		}
	}
	pos := cc.n
	// The ids' copy before the capture, which holds the chunk's kernels alone.
	if err := g.e.Do(func() error { return g.chunkIDs(cc, tokens, pos) }); err != nil {
		return nil, fmt.Errorf("gpu: profiled prefill chunk at %d: %w", pos, err)
	}
	ls, err := g.profileLaunches(cc, len(tokens), func() error { return g.prefillChunks(cc, tokens, pos, false) })
	if err != nil {
		return nil, fmt.Errorf("gpu: profiled prefill chunk at %d: %w", pos, err)
	}
	return ls, nil
}

// profileLaunches captures what enqueue launches with a timing event behind
// every kernel, replays it once, and returns each launch's time; once the
// replay is queued the cache has taken its tokens (n of them).
func (g *Model) profileLaunches(cc *Cache, n int, enqueue func() error) ([]Launch, error) {
	e := g.e
	evs := make([]cuda.Event, 0, maxProfiledLaunches+1)
	defer func() {
		for _, ev := range evs {
			_ = e.DestroyEvent(ev)
		}
	}()
	for range maxProfiledLaunches + 1 {
		ev, err := e.NewEvent()
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	var fns []cuda.Function
	var notes []launchNote
	var x cuda.GraphExec
	launched := false
	err := e.Do(func() error {
		if err := e.BeginCapture(); err != nil {
			return err
		}
		var obsErr error
		recErr := e.RecordTiming(evs[0])
		g.prof = &launchNote{}
		e.SetLaunchObserver(func(fn cuda.Function) {
			if len(fns) == maxProfiledLaunches {
				obsErr = fmt.Errorf("more than %d launches", maxProfiledLaunches)
				return
			}
			fns = append(fns, fn)
			notes = append(notes, *g.prof)
			*g.prof = launchNote{} // a launch the code did not describe moves no counted bytes
			if err := e.RecordTiming(evs[len(fns)]); err != nil && obsErr == nil {
				obsErr = err
			}
		})
		runErr := func() error {
			defer func() { e.SetLaunchObserver(nil); g.prof = nil }()
			return enqueue()
		}()
		graph, endErr := e.EndCapture()
		if err := errors.Join(recErr, runErr, obsErr, endErr); err != nil {
			if graph != 0 {
				_ = e.DestroyGraph(graph)
			}
			return err
		}
		defer e.DestroyGraph(graph)
		var err error
		if x, err = e.Instantiate(graph); err != nil {
			return err
		}
		if err := e.GraphLaunch(x); err != nil {
			return err
		}
		launched = true
		return nil
	})
	if x != 0 {
		defer e.DestroyGraphExec(x)
	}
	if launched {
		cc.n += n // the tokens ran (KV rows written, states advanced), timed or not
	}
	if err == nil {
		err = e.EventSynchronize(evs[len(fns)])
		if err != nil {
			// The replay failed on the device: what it wrote is unknown.
			return nil, cc.lose(err)
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]Launch, len(fns))
	for i, fn := range fns {
		d, err := e.Elapsed(evs[i], evs[i+1])
		if err != nil {
			return nil, err
		}
		out[i] = Launch{Kernel: e.FunctionName(fn), Time: d, Shape: notes[i].shape.String(), Weights: notes[i].weights, Cache: notes[i].cache}
	}
	return out, nil
}
