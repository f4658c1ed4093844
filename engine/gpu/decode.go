package gpu

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/kernels"
)

// DecodeStep is the eager path: it appends token at the cache's position,
// with the position and attention length passed from the host, and returns
// the logits [n_vocab] (pinned memory owned by the cache, valid until the
// next step or the cache's Close).
func (g *Model) DecodeStep(cc *Cache, token int32) ([]float32, error) {
	if err := g.checkStep(cc, token); err != nil {
		return nil, err
	}
	pos := cc.n
	a := stepArgs{token: token, pos: int32(pos), bucket: g.BucketKey(pos + 1)}
	err := g.e.Do(func() error {
		if err := g.enqueue(cc, a); err != nil {
			return err
		}
		return g.e.CopyDtoH(cuda.AsBytes(cc.logitsHost), cc.s.logits)
	})
	if err != nil {
		return nil, cc.lose(fmt.Errorf("gpu: decode step at %d: %w", pos, err))
	}
	cc.n++
	return cc.logitsHost, nil
}

// checkStep reports why an eager step of token cannot run on cc: the cache
// is another model's, closed or full, or the token is not in the vocabulary.
func (g *Model) checkStep(cc *Cache, token int32) error {
	if err := g.owns(cc); err != nil {
		return err
	}
	if err := cc.full(); err != nil {
		return err
	}
	if token < 0 || int(token) >= g.cfg.NVocab {
		return fmt.Errorf("gpu: token %d out of range [0, %d)", token, g.cfg.NVocab)
	}
	return nil
}

// owns refuses a cache made by another model: its buffers are sized for
// that model's layers and dims, so this model's kernels would read and
// write past them.
func (g *Model) owns(cc *Cache) error {
	if cc.g != g {
		return errors.New("gpu: the cache belongs to another model")
	}
	return nil
}

// dcArgs are the step arguments of the device-counter path for the bucket.
func (cc *Cache) dcArgs(b Bucket) stepArgs {
	ctr := cc.s.ctr
	return stepArgs{
		dtok: ctr.Add(0), dpos: ctr.Add(4), dtkv: ctr.Add(8),
		bucket: b, deviceToken: true,
	}
}

// DecodeStepDC is the device-counter step: the token, position, KV write
// slot and t_kv are read from the cache's device counters, argmax writes
// the next token into the counter and a kernel advances position and t_kv.
// The host passes nothing but the bucket geometry, and nothing is read back.
// The counters must be at the cache's length: GenerateGraph,
// FillSynthetic and device-counter steps leave them there; a cache after
// Reset, or after host-path steps, is refused.
func (g *Model) DecodeStepDC(cc *Cache) error {
	a, err := g.dcStep(cc)
	if err != nil {
		return err
	}
	if err := g.e.Do(func() error { return g.enqueue(cc, a) }); err != nil {
		return cc.lose(fmt.Errorf("gpu: device-counter step at %d: %w", cc.n, err))
	}
	cc.n++
	cc.ctrAt = cc.n
	return nil
}

// dcStep checks that cc can take a device-counter step here (g's cache,
// room for a token, its counters at its length) and returns that step's
// arguments; DecodeStepDC and ProfileGraphStep both enqueue them.
func (g *Model) dcStep(cc *Cache) (stepArgs, error) {
	if err := g.owns(cc); err != nil {
		return stepArgs{}, err
	}
	if err := cc.full(); err != nil {
		return stepArgs{}, err
	}
	if err := cc.countersAtLen(); err != nil {
		return stepArgs{}, err
	}
	return cc.dcArgs(g.BucketKey(cc.n + 1)), nil
}

// GraphDecodeState owns the sequence cache of graph generation and one
// instantiated CUDA graph per attention bucket and way of picking the token
// (argmax, or the device draw of SetSampling). The graphs bake in the
// cache's pointers, so they live and die with it.
type GraphDecodeState struct {
	g        *Model
	cache    *Cache
	graphs   map[graphKey]cuda.GraphExec
	sampling *Sampling // nil: greedy
	penalty  *Penalty  // nil: none
	// Captures counts graph captures over the state's life.
	Captures int
	// Nodes is the kernel-node count of the last captured graph.
	Nodes int
}

// graphKey keys a GraphDecodeState's graphs.
type graphKey struct {
	b       Bucket
	draw    bool // ends with the top-k and sample_draw instead of argmax
	penalty bool // repeat_penalty on the logits first
}

// NewGraphDecodeState makes an empty state for greedy generation;
// GenerateGraph allocates its cache on first use.
func (g *Model) NewGraphDecodeState() *GraphDecodeState {
	return &GraphDecodeState{g: g, graphs: map[graphKey]cuda.GraphExec{}}
}

// SetSampling makes the following GenerateGraph and ContinueGraph calls
// draw each token on the device with s (nil: argmax). The draws of s.Seed
// start from the first, at once on the state's cache (for a ContinueGraph
// from a cache as it stands) and again at each Reserve and GenerateGraph,
// which so picks the tokens sample.Generate picks with the same options on
// the same logits.
func (gs *GraphDecodeState) SetSampling(s *Sampling) error {
	if s != nil {
		if err := s.check(gs.g.cfg.NVocab); err != nil {
			return err
		}
		c := *s
		s = &c
	}
	gs.sampling = s
	return gs.startDraws()
}

// SetPenalty makes the following GenerateGraph calls, and the ContinueGraph
// calls after them, apply the repetition penalty p to each step's logits
// before the token is picked (nil: none). The history starts at each
// GenerateGraph with its prompt; a ContinueGraph from a cache as it stands
// (Reserve and FillSynthetic) starts it empty.
func (gs *GraphDecodeState) SetPenalty(p *Penalty) error {
	if p != nil {
		if err := p.check(); err != nil {
			return err
		}
		c := *p
		p = &c
	}
	gs.penalty = p
	return gs.startHistory(nil)
}

// startHistory writes the penalty's state with history (the tokens before
// the next step's input) and clears its stamps (when the state has a
// penalty and a cache).
func (gs *GraphDecodeState) startHistory(history []int32) error {
	if gs.penalty == nil || gs.cache == nil {
		return nil
	}
	if err := gs.cache.open(); err != nil {
		return err
	}
	e, s := gs.g.e, &gs.cache.s
	err := e.Do(func() error {
		if err := e.CopyHtoD(s.pen, gs.penalty.state(history)); err != nil {
			return err
		}
		return e.MemsetD32Async(s.seen, 0, uint64(gs.g.cfg.NVocab))
	})
	if err != nil {
		return fmt.Errorf("gpu: repetition penalty state: %w", err)
	}
	return nil
}

// startDraws writes the sampling parameters, draw index 0, into the
// state's cache (when it has both).
func (gs *GraphDecodeState) startDraws() error {
	if gs.sampling == nil || gs.cache == nil {
		return nil
	}
	if err := gs.cache.open(); err != nil {
		return err
	}
	if err := gs.g.e.CopyHtoD(gs.cache.s.draw, gs.sampling.params(0)); err != nil {
		return fmt.Errorf("gpu: sampling parameters: %w", err)
	}
	return nil
}

// Buckets lists the buckets that have a captured graph.
func (gs *GraphDecodeState) Buckets() []Bucket {
	var bs []Bucket
	for k := range gs.graphs {
		if !slices.Contains(bs, k.b) {
			bs = append(bs, k.b)
		}
	}
	return bs
}

// Cache is the state's sequence cache (nil before the first GenerateGraph).
func (gs *GraphDecodeState) Cache() *Cache { return gs.cache }

// Close destroys the graphs and frees the cache.
func (gs *GraphDecodeState) Close() error {
	var errs []error
	for k, x := range gs.graphs {
		errs = append(errs, gs.g.e.DestroyGraphExec(x))
		delete(gs.graphs, k)
	}
	if gs.cache != nil {
		errs = append(errs, gs.cache.Close())
		gs.cache = nil
	}
	return errors.Join(errs...)
}

// GenerateGraph primes the prompt eagerly (its tokens before the last fed
// without logits, the last through a device-counter step), then
// generates n tokens: out[0] is the argmax (or, with SetSampling, the draw)
// after the last prompt token, and each further token comes from replaying
// the CUDA graph of the current bucket (captured on first use). Per step
// only the 4-byte token is copied back (pinned memory, async copy). The
// cache is reset first; it grows (dropping the graphs) when the positions
// the call takes, prompt+n−1 (the last token is never fed), exceed its
// capacity.
func (g *Model) GenerateGraph(gs *GraphDecodeState, prompt []int32, n int) ([]int32, error) {
	if err := g.ownsState(gs); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, errors.New("gpu: GenerateGraph needs at least one prompt token")
	}
	if err := checkCount(n); err != nil {
		return nil, err
	}
	if n > math.MaxInt-len(prompt) {
		return nil, fmt.Errorf("gpu: %d prompt tokens + %d to generate exceed any cache", len(prompt), n)
	}
	for i, t := range prompt {
		if t < 0 || int(t) >= g.cfg.NVocab {
			return nil, fmt.Errorf("gpu: prompt token %d (index %d) out of range [0, %d)", t, i, g.cfg.NVocab)
		}
	}
	if err := gs.Reserve(len(prompt) + max(n-1, 0)); err != nil {
		return nil, err
	}
	cc := gs.cache
	e := g.e

	// Prime: the prompt's tokens before the last are fed (no logits); the
	// last one's device-counter step, from counters set at its position,
	// picks out[0] (argmax, or the draw, whose index Reserve set to 0).
	last := len(prompt) - 1
	err := e.Do(func() error {
		if err := gs.startHistory(prompt[:last]); err != nil {
			return err
		}
		if err := g.feed(cc, prompt[:last], 0); err != nil {
			return err
		}
		if err := g.k.CountersSet(cc.s.ctr, prompt[last], int32(last), int32(last+1)); err != nil {
			return err
		}
		a := cc.dcArgs(g.BucketKey(last + 1))
		a.draw, a.penalty = gs.sampling != nil, gs.penalty != nil
		if err := g.enqueue(cc, a); err != nil {
			return fmt.Errorf("prime step %d: %w", last, err)
		}
		return nil
	})
	if err != nil {
		return nil, cc.lose(fmt.Errorf("gpu: prime: %w", err))
	}
	cc.n, cc.ctrAt = len(prompt), len(prompt)
	if n == 0 {
		return []int32{}, e.Synchronize()
	}
	return g.ContinueGraph(gs, n)
}

// feed enqueues the steps of tokens at positions from, from+1, ... without
// their logits (stepArgs.feed), on the engine thread; it never synchronises.
// Where the cache has a chunk (Model.pf) they run in chunks (prefill), with
// the same bits.
func (g *Model) feed(cc *Cache, tokens []int32, from int) error {
	if len(cc.ch.tok) > 1 && len(tokens) > 1 {
		return g.prefill(cc, tokens, from, true)
	}
	return g.feedSteps(cc, tokens, from)
}

// feedSteps is feed one decode step per token.
func (g *Model) feedSteps(cc *Cache, tokens []int32, from int) error {
	for i, t := range tokens {
		pos := from + i
		if err := g.enqueue(cc, stepArgs{token: t, pos: int32(pos), bucket: g.BucketKey(pos + 1), feed: true}); err != nil {
			return fmt.Errorf("feed step at %d: %w", pos, err)
		}
	}
	return nil
}

// ownsState refuses a GraphDecodeState made by another model (its cache
// is that model's: see owns).
func (g *Model) ownsState(gs *GraphDecodeState) error {
	if gs.g != g {
		return errors.New("gpu: GraphDecodeState belongs to another model")
	}
	return nil
}

// Reserve makes sure the state's cache holds capacity tokens, dropping the
// graphs if it has to grow, and resets it; the draws of SetSampling start
// again from the first, the penalty's history empty. A capacity NewCache
// would refuse leaves the state as it was.
func (gs *GraphDecodeState) Reserve(capacity int) error {
	// Checked first: before Close, so that a refused capacity does not cost
	// the working cache and its graphs, and before the reuse below, which a
	// capacity below 1 would pass, resetting the cache instead of refusing.
	if err := gs.g.checkCapacity(capacity); err != nil {
		return err
	}
	if gs.cache != nil && gs.cache.capacity >= capacity {
		if err := gs.cache.Reset(); err != nil {
			return err
		}
		return errors.Join(gs.startDraws(), gs.startHistory(nil))
	}
	if err := gs.Close(); err != nil {
		return err
	}
	cc, err := gs.g.NewCache(capacity)
	if err != nil {
		return err
	}
	gs.cache = cc
	return errors.Join(gs.startDraws(), gs.startHistory(nil))
}

// checkCapacity refuses a cache capacity below 1 or past the model's
// context (model.Config.CheckContext): NewCache's check, which Reserve
// makes before it drops the cache it has.
func (g *Model) checkCapacity(capacity int) error {
	if capacity < 1 {
		return fmt.Errorf("gpu: cache capacity %d must be at least 1", capacity)
	}
	if err := g.cfg.CheckContext(capacity); err != nil {
		return fmt.Errorf("gpu: cache: %w", err)
	}
	return nil
}

// ContinueGraph generates n tokens from the state's cache as it stands: the
// device token counter holds the next input (the argmax or draw of the last
// step; the token that step wrote for the host is the same), which is the
// result's first token; each further token is one graph replay. The
// counters must be at the cache's length (after GenerateGraph, FillSynthetic
// or ContinueGraph; not after Reserve alone or host-path steps). After it the
// counter holds the last token, not yet taken as input, so a following
// ContinueGraph returns it again as its out[0].
func (g *Model) ContinueGraph(gs *GraphDecodeState, n int) ([]int32, error) {
	// Checked here too, before make sizes out by n (ContinueGraphFunc
	// checks again for its own callers).
	if err := g.checkContinue(gs, n); err != nil {
		return nil, err
	}
	out := make([]int32, 0, n)
	err := g.ContinueGraphFunc(gs, n, func(t int32) error { out = append(out, t); return nil })
	return out, err
}

// ContinueGraphFunc is ContinueGraph calling emit with each token as soon as
// it is read back. An error from emit stops generation and is returned.
//
// The replays run back to back: replay i+1, with the read-back of its token
// behind it, is queued before the host waits for token i, so the GPU never
// waits on the host between tokens. One step therefore runs ahead: while emit
// has token i, the cache already counts replay i+1 (Len), and when emit stops
// generation at token i before the last, replay i+1 has taken token i as its
// input; a later ContinueGraph then starts from token i+1, and the tokens of
// the two calls are one uninterrupted stream. A stop at the last token (or
// none) leaves the counter as ContinueGraph does: holding that token, not yet
// taken. Before it returns, for any reason, the stream has finished the step
// that ran ahead.
func (g *Model) ContinueGraphFunc(gs *GraphDecodeState, n int, emit func(int32) error) (err error) {
	if err := g.checkContinue(gs, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	cc := gs.cache
	defer func() {
		if err == nil {
			return
		}
		// A replay and a read-back may still be queued: let them finish (a
		// caller frees the cache next), and report a device error over
		// emit's reason to stop.
		if serr := g.e.Synchronize(); serr != nil {
			err = fmt.Errorf("gpu: finishing the step run ahead: %w (stopping on: %v)", serr, err)
		}
	}()
	if err := g.queueToken(cc, 0); err != nil {
		return err
	}
	for i := range n {
		if i+1 < n {
			b := g.BucketKey(cc.n + 1)
			x, err := gs.graph(b)
			if err != nil {
				return err
			}
			if err := g.e.GraphLaunch(x); err != nil {
				return cc.lose(fmt.Errorf("gpu: replay %v at %d: %w", b, cc.n, err))
			}
			cc.n++
			cc.ctrAt = cc.n
			if err := g.queueToken(cc, i+1); err != nil {
				return err
			}
		}
		tok, err := g.awaitToken(cc, i)
		if err != nil {
			return err
		}
		if err := emit(tok); err != nil {
			return err
		}
	}
	return nil
}

// checkCount refuses a negative number of tokens to generate.
func checkCount(n int) error {
	if n < 0 {
		return fmt.Errorf("gpu: %d tokens to generate: want 0 or more", n)
	}
	return nil
}

// checkContinue reports why ContinueGraph cannot generate n tokens from the
// state's cache: the state is another model's, it has no cache yet, n-1
// replays (the first token is the last step's) run past its capacity
// (written as a difference, so that no n wraps), or, for any token, its
// device counters are not at its length.
func (g *Model) checkContinue(gs *GraphDecodeState, n int) error {
	if err := g.ownsState(gs); err != nil {
		return err
	}
	if err := checkCount(n); err != nil {
		return err
	}
	cc := gs.cache
	if cc == nil {
		return errors.New("gpu: ContinueGraph before GenerateGraph (or Reserve and FillSynthetic)")
	}
	if err := cc.open(); err != nil {
		return err
	}
	if n-1 > cc.capacity-cc.n {
		return fmt.Errorf("gpu: context full: %d tokens + %d to generate exceed capacity %d", cc.n, n, cc.capacity)
	}
	if n > 0 {
		return cc.countersAtLen()
	}
	return nil
}

// queueToken queues the read-back of the last step's token as token i:
// event i%2 recorded behind that step, whose argmax_final or sample_draw
// wrote the token (the counters' token but for kernels.NoToken) into the
// mapped ring's place for its position, cc.n-1. No copy is queued: a
// 4-byte one cost the stream 7-8 µs between replays (docs/perf.md step
// 138). The next replay writes the ring's other place, and the one after
// it is queued only once token i has been read.
func (g *Model) queueToken(cc *Cache, i int) error {
	cc.tokenAt[i%2] = cc.n - 1
	if err := g.e.Do(func() error { return g.e.Record(cc.tokenRead[i%2]) }); err != nil {
		return fmt.Errorf("gpu: read token: %w", err)
	}
	return nil
}

// awaitToken waits for token i's step (queueToken) and returns the token,
// or model.ErrNaNLogits where the step had no token to pick.
func (g *Model) awaitToken(cc *Cache, i int) (int32, error) {
	if err := g.e.EventSynchronize(cc.tokenRead[i%2]); err != nil {
		return 0, fmt.Errorf("gpu: read token: %w", err)
	}
	tok := *cc.tokenPlace(cc.tokenAt[i%2])
	if tok == kernels.NoToken {
		if len(g.opt.Omit) > 0 {
			// A step with parts left out (bench -omit) reads buffers no
			// kernel wrote: its tokens are meaningless, NaN logits too.
			return 0, nil
		}
		return 0, fmt.Errorf("gpu: generated token %d: %w", i, model.ErrNaNLogits)
	}
	return tok, nil
}

// graph returns the instantiated graph of bucket b that picks the token as
// the state's sampling says, capturing one device-counter step on first use.
func (gs *GraphDecodeState) graph(b Bucket) (cuda.GraphExec, error) {
	key := graphKey{b, gs.sampling != nil, gs.penalty != nil}
	if x, ok := gs.graphs[key]; ok {
		return x, nil
	}
	a := gs.cache.dcArgs(b)
	a.draw, a.penalty = key.draw, key.penalty
	x, nodes, err := gs.g.capture(gs.cache, a)
	if err != nil {
		return 0, err
	}
	gs.Nodes = nodes
	gs.graphs[key] = x
	gs.Captures++
	return x, nil
}

// capture records one step of cc with arguments a as a CUDA graph and
// instantiates it, returning it with its node count.
func (g *Model) capture(cc *Cache, a stepArgs) (cuda.GraphExec, int, error) {
	e := g.e
	var x cuda.GraphExec
	var nodes int
	err := e.Do(func() error {
		if err := e.BeginCapture(); err != nil {
			return err
		}
		stepErr := g.enqueue(cc, a)
		graph, endErr := e.EndCapture()
		if err := errors.Join(stepErr, endErr); err != nil {
			if graph != 0 {
				_ = e.DestroyGraph(graph)
			}
			return err
		}
		defer e.DestroyGraph(graph)
		var err error
		if nodes, err = e.GraphNodeCount(graph); err != nil {
			return err
		}
		x, err = e.Instantiate(graph)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("gpu: capture bucket %v: %w", a.bucket, err)
	}
	return x, nodes, nil
}
