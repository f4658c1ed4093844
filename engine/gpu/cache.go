package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// kvLayer is one attention layer's KV cache.
type kvLayer struct {
	k, v   cuda.DevPtr // [n_kv][capacity][Dh] f16, or e4m3 bytes with FP8
	ks, vs cuda.DevPtr // FP8 only: [n_kv][capacity] f32 scales
}

// gdnLayer is one Gated DeltaNet layer's recurrent state.
type gdnLayer struct {
	conv  cuda.DevPtr // [C][conv_kernel-1] f32
	state cuda.DevPtr // [H_v][GDNState][GDNState] f32 (kernels.GDNState: 128)
}

// scratch holds the activations of one step; every pointer stays fixed for
// the cache's life, so a captured graph can replay them.
type scratch struct {
	x, xn cuda.DevPtr // [n_embd] f32: residual stream, normalised input
	// attention
	qg, q, kraw, v, attn cuda.DevPtr // qg [qRows], q/attn [n_head·Dh], kraw/v [n_kv·Dh] f32
	partMS, partAcc      cuda.DevPtr // [n_head][maxSplits][2], [n_head][maxSplits][Dh] f32
	// gated deltanet
	qkv, y, z, b, a, o, on cuda.DevPtr // qkv/y [C], z/o/on [V], b/a [H_v] f32
	// ffn
	fg, fu, fh cuda.DevPtr // [n_ff] f32
	// head
	logits           cuda.DevPtr // [n_vocab] f32
	amaxVal, amaxIdx cuda.DevPtr // argmax partials
	screenA          cuda.DevPtr // [n_vocab] the logits' 8-bit copy's products (screen.go)
	screenLo         cuda.DevPtr // [argmax parts] each chunk's largest lower bound
	screenTop        cuda.DevPtr // [argmax parts][m ≤ TopKMax] each chunk's m largest, for the top k
	screenList       cuda.DevPtr // [top blocks·TopKMax] f32, then as many int32: the top kernel's blocks' best (screenTopBlocks)
	screenDone       cuda.DevPtr // [2] int32: the top kernel's finished blocks and list length, zero between launches
	token            cuda.DevPtr // [1] int32: argmax_final's and sample_draw's out[0], which the host no longer reads (the ring has the token)
	ctr              cuda.DevPtr // struct memra_counters (kernels.CountersBytes)
	// top-k for sampling (topk.cu): the passes' survivors, two buffers of
	// topKScratchPairs pairs ([pairs] f32 then [pairs] int32 each), and the
	// answer, [kernels.TopKMax] f32 then [kernels.TopKMax] int32
	topScratch, top cuda.DevPtr
	draw            cuda.DevPtr // struct memra_draw (kernels.DrawParamsBytes): the device draw's parameters
	// the repetition penalty (penalty.cu): struct memra_penalty
	// (kernels.PenaltyBytes) and the stamps [n_vocab] int32
	pen, seen cuda.DevPtr
}

// Cache is everything one sequence mutates on the device: KV cache, Gated
// DeltaNet states, the step's activations and the device counters. It is
// allocated once; nothing is allocated while decoding.
type Cache struct {
	g        *Model
	arena    *cuda.Arena
	capacity int
	n        int // tokens decoded
	// ctrAt is the length at which the device counters hold the next
	// step (position ctrAt, t_kv ctrAt+1), −1 after Reset (all zero). A
	// host-path step advances n alone, leaving them behind.
	ctrAt int
	// lost is why a step stopped partway (a launch or copy failed after
	// others were queued): some layers' states and KV rows then hold a
	// token that n does not count, and decoding on would give wrong
	// tokens. Every step refuses the cache until Reset.
	lost error
	kv   []kvLayer
	gdn  []gdnLayer
	s    scratch
	ch   chunk // a prompt chunk's activations (prefill.go); empty where prompts are fed token by token

	kvBytes, stateBytes, scratchBytes uint64
	// hot is the state and scratch, which the arena holds after the KV
	// cache, back to back: what every step reads and writes again. Where
	// keeping it in the L2 pays (l2HoldPays) and the device can set that
	// much aside (l2; nil otherwise), the steps' launches carry an L2
	// window over it (perf.md step 98).
	hot      cuda.DevPtr
	hotBytes uint64
	l2       *cuda.L2Hold

	logitsHost   []float32     // a view of logitsPinned
	logitsPinned *cuda.HostBuf // pinned [n_vocab] f32: the logits read back each step
	tokenHost    *cuda.HostBuf // pinned [2] int32 mapped for the kernels: the token of the step at position p in [p&1]
	tokenRead    [2]cuda.Event // recorded behind the replays whose tokens are read back, alternating
	tokenAt      [2]int        // the position of the step whose token each read waits for
	topPinned    *cuda.HostBuf // pinned copy of scratch.top, read back by Session.DecodeTop
	topVals      []float32     // views of topPinned: [kernels.TopKMax] logits
	topIDs       []int32       // and their ids
}

// l2HoldPays reports whether a cache's state and scratch (hot bytes) are
// worth a persisting part of the L2 beside a step's weights. The part is
// taken from the weights' stream, so the hold pays only where the state is
// large beside them: in run302 (H200, graph decode, 1k and 32k) at 1.56% of
// the weights (0.8B bf16) +1.2-1.3%, at 2.9% (0.8B q8_0) +1.4-1.9%, at 5.5%
// (0.8B Q4_K) +1.9-2.5%, at 1.18% (2B q8_0) even and at 0.63% (2B bf16)
// -0.6 to -0.9%. The threshold, 1.4%, lies between the last even and the
// first gain. (The 9B presets' 53.6 MiB, 0.35-1.26% of theirs, exceed the
// H200's most set-aside, 37.5 MiB, anyway.)
func l2HoldPays(hot, weights uint64) bool {
	return hot*1000 >= weights*14
}

// kvElemBytes is one cached K or V element: f16, or e4m3 with FP8 KV
// (whose f32 scale per KV head and position lies in its own buffer).
func (g *Model) kvElemBytes() uint64 {
	if g.opt.KVFP8 {
		return 1
	}
	return 2
}

// kvVecBytes is what one K or V vector of a KV head moves: Dh elements, and
// with FP8 KV their scale.
func (g *Model) kvVecBytes() uint64 {
	n := uint64(g.cfg.HeadDimK) * g.kvElemBytes()
	if g.opt.KVFP8 {
		n += 4
	}
	return n
}

// NewCache allocates a cache for capacity tokens, at most the model's
// context (model.Config.CheckContext), which also keeps every size below
// in range: the KV bytes in uint64, the capacity the kernels take in int32.
func (g *Model) NewCache(capacity int) (*Cache, error) {
	if err := g.checkCapacity(capacity); err != nil {
		return nil, err
	}
	c := &g.cfg
	cc := &Cache{g: g, capacity: capacity}
	bufs := g.cacheBufs(cc)
	var total uint64
	for _, b := range bufs {
		total += align(b.bytes)
	}
	var err error
	if cc.arena, err = g.e.NewArena(total); err != nil {
		return nil, fmt.Errorf("gpu: cache for %d tokens (%d bytes): %w", capacity, total, err)
	}
	for _, b := range bufs {
		p, err := cc.arena.Alloc(b.bytes)
		if err != nil {
			cc.Close()
			return nil, fmt.Errorf("gpu: cache: %w", err)
		}
		*b.p = p
		if (b.kind == bufState || b.kind == bufScratch) && cc.hot == 0 {
			cc.hot = p
		}
		switch b.kind {
		case bufKV:
			cc.kvBytes += b.bytes
		case bufState:
			cc.stateBytes += b.bytes
		default:
			cc.scratchBytes += b.bytes
		}
		if b.kind == bufState || b.kind == bufScratch {
			cc.hotBytes = uint64(p) + b.bytes - uint64(cc.hot) // to the end of the last one, as the arena's end was before chunks
		}
	}
	if l2HoldPays(cc.hotBytes, g.stepBytes) {
		if cc.l2, err = g.e.HoldL2(cc.hotBytes); err != nil {
			cc.Close()
			return nil, fmt.Errorf("gpu: cache: %w", err)
		}
	}
	g.fusedViews(&cc.s)
	g.chunkViews(cc)
	if cc.tokenHost, err = g.e.HostAllocMapped(8); err != nil {
		cc.Close()
		return nil, fmt.Errorf("gpu: cache: mapped pinned token ring: %w", err)
	}
	if cc.ch.ids != 0 {
		if cc.ch.idsHost, err = g.e.HostAlloc(4 * uint64(capacity)); err != nil {
			cc.Close()
			return nil, fmt.Errorf("gpu: cache: pinned buffer of the prompt's %d ids: %w", capacity, err)
		}
	}
	for i := range cc.tokenRead {
		if cc.tokenRead[i], err = g.e.NewSyncEvent(); err != nil {
			cc.Close()
			return nil, fmt.Errorf("gpu: cache: token event: %w", err)
		}
	}
	// Pinned, so the logits of a step (1 MB at a 248k vocabulary) come back
	// by DMA instead of through the driver's staging copy.
	if cc.logitsPinned, err = g.e.HostAlloc(uint64(4 * c.NVocab)); err != nil {
		cc.Close()
		return nil, fmt.Errorf("gpu: cache: pinned logits buffer (%d floats): %w", c.NVocab, err)
	}
	cc.logitsHost = cuda.HostSlice[float32](cc.logitsPinned, 0, c.NVocab)
	if cc.topPinned, err = g.e.HostAlloc(8 * kernels.TopKMax); err != nil {
		cc.Close()
		return nil, fmt.Errorf("gpu: cache: pinned top-k buffer: %w", err)
	}
	cc.topVals = cuda.HostSlice[float32](cc.topPinned, 0, kernels.TopKMax)
	cc.topIDs = cuda.HostSlice[int32](cc.topPinned, 4*kernels.TopKMax, kernels.TopKMax)
	if err := cc.Reset(); err != nil {
		cc.Close()
		return nil, err
	}
	return cc, nil
}

// bufKind is what a cache buffer holds, for Cache.Bytes and the L2 hold.
type bufKind int

const (
	bufKV      bufKind = iota // the attention layers' keys and values
	bufState                  // the Gated DeltaNet layers' conv and delta states
	bufScratch                // one step's activations, logits and counters
	bufChunk                  // a prompt chunk's activations (prefill.go): after the rest, outside the L2 hold
)

// cacheBuf is one buffer of a cache's arena: the field its pointer goes
// to, its bytes and what it holds.
type cacheBuf struct {
	p     *cuda.DevPtr
	bytes uint64
	kind  bufKind
}

// cacheBufs lists the buffers of cc, a cache of cc.capacity tokens for g, in
// arena order (the KV first, then the states and scratch back to back, which
// the L2 window covers, then the prompt chunk's activations where g primes
// in chunks), and sizes cc's per-layer slices. It allocates
// nothing, so a test can check the sizes without a GPU.
func (g *Model) cacheBufs(cc *Cache) []cacheBuf {
	c := &g.cfg
	dh := c.HeadDimK
	kvElem := g.kvElemBytes()
	var bufs []cacheBuf
	add := func(p *cuda.DevPtr, bytes uint64, kind bufKind) {
		if bytes > 0 {
			bufs = append(bufs, cacheBuf{p, bytes, kind})
		}
	}
	capacity := cc.capacity
	nAttn := c.NumAttention()
	nGDN := c.NLayer - nAttn
	cc.kv = make([]kvLayer, nAttn)
	cc.gdn = make([]gdnLayer, nGDN)
	kvSize := uint64(c.NHeadKV) * uint64(capacity) * uint64(dh)
	for i := range cc.kv {
		add(&cc.kv[i].k, kvSize*kvElem, bufKV)
		add(&cc.kv[i].v, kvSize*kvElem, bufKV)
		if g.opt.KVFP8 {
			add(&cc.kv[i].ks, uint64(c.NHeadKV)*uint64(capacity)*4, bufKV)
			add(&cc.kv[i].vs, uint64(c.NHeadKV)*uint64(capacity)*4, bufKV)
		}
	}
	C := uint64(c.SSMConvChannels())
	for i := range cc.gdn {
		add(&cc.gdn[i].conv, C*uint64(c.SSMConvKernel-1)*4, bufState)
		add(&cc.gdn[i].state, uint64(c.SSMNumVHeads)*kernels.GDNState*kernels.GDNState*4, bufState)
	}
	f := func(n int) uint64 { return uint64(n) * 4 }
	s := &cc.s
	add(&s.x, f(c.NEmbd), bufScratch)
	add(&s.xn, f(c.NEmbd), bufScratch)
	if nAttn > 0 {
		// qg | kraw | v back to back: a fused run of q|k|v writes its parts' at once.
		add(&s.qg, f(g.qgRows()+2*c.NHeadKV*dh), bufScratch)
		add(&s.q, f(c.NHead*dh), bufScratch)
		add(&s.attn, f(c.NHead*dh), bufScratch)
		add(&s.partMS, f(c.NHead*g.maxSplits*2), bufScratch)
		add(&s.partAcc, f(c.NHead*g.maxSplits*dh), bufScratch)
	}
	if nGDN > 0 {
		// qkv | z | b | a back to back: a fused run of the inputs writes its parts' at once.
		add(&s.qkv, f(int(C)+c.SSMInnerSize+2*c.SSMNumVHeads), bufScratch)
		add(&s.y, f(int(C)), bufScratch)
		add(&s.o, f(c.SSMInnerSize), bufScratch)
		add(&s.on, f(c.SSMInnerSize), bufScratch)
	}
	add(&s.fg, f(2*c.NFF), bufScratch) // fg | fu
	add(&s.fh, f(c.NFF), bufScratch)
	add(&s.logits, f(c.NVocab), bufScratch)
	parts := argmaxParts(c.NVocab)
	add(&s.amaxVal, f(parts), bufScratch)
	add(&s.amaxIdx, f(parts), bufScratch)
	if g.scr.on() {
		add(&s.screenA, f(c.NVocab), bufScratch)
		add(&s.screenLo, f(parts), bufScratch)
		add(&s.screenTop, f(parts*kernels.TopKMax), bufScratch)
		add(&s.screenList, f(2*screenTopBlocks(c.NVocab)*kernels.TopKMax), bufScratch)
		add(&s.screenDone, 8, bufScratch)
	}
	add(&s.token, 4, bufScratch)
	add(&s.ctr, kernels.CountersBytes, bufScratch)
	add(&s.topScratch, 2*8*uint64(topKScratchPairs(c.NVocab)), bufScratch)
	add(&s.top, 8*kernels.TopKMax, bufScratch)
	add(&s.draw, kernels.DrawParamsBytes, bufScratch)
	add(&s.pen, kernels.PenaltyBytes, bufScratch)
	add(&s.seen, f(c.NVocab), bufScratch)
	if g.pf != nil {
		ch := &cc.ch
		ch.tokens = g.pf.tokens
		for _, fl := range g.chunkFields(ch) {
			*fl.stride = alignFloats(fl.floats)
			add(fl.base, f(ch.tokens**fl.stride), bufChunk)
		}
		add(&ch.ids, f(capacity), bufChunk)
	}
	return bufs
}

// fusedViews points s's views into its fused buffers: k and v after q in
// qg, z, b and a after the conv input in qkv, up after gate in fg.
func (g *Model) fusedViews(s *scratch) {
	c := &g.cfg
	if c.NumAttention() > 0 {
		s.kraw = s.qg.Add(uint64(g.qgRows()) * 4)
		s.v = s.kraw.Add(uint64(c.NHeadKV*c.HeadDimK) * 4)
	}
	if c.NLayer > c.NumAttention() {
		s.z = s.qkv.Add(uint64(c.SSMConvChannels()) * 4)
		s.b = s.z.Add(uint64(c.SSMInnerSize) * 4)
		s.a = s.b.Add(uint64(c.SSMNumVHeads) * 4)
	}
	s.fu = s.fg.Add(uint64(c.NFF) * 4)
}

// qgRows is the rows of the attention's q (with its output gate, twice
// n_head·Dh) at the front of the fused q|k|v output.
func (g *Model) qgRows() int {
	if g.cfg.AttnOutputGate {
		return 2 * g.cfg.NHead * g.cfg.HeadDimK
	}
	return g.cfg.NHead * g.cfg.HeadDimK
}

// argmaxParts is how many partials argmax_partial writes over n logits:
// one per block, a block per kernels.ArgmaxChunk logits.
func argmaxParts(n int) int { return (n + kernels.ArgmaxChunk - 1) / kernels.ArgmaxChunk }

// Reset empties the cache: position 0, zero recurrent states. KV contents
// need no clearing (attention reads only the first t_kv rows).
func (cc *Cache) Reset() error {
	if err := cc.alive(); err != nil {
		return err
	}
	cc.n, cc.ctrAt = 0, -1
	e := cc.g.e
	err := e.Do(func() error {
		for _, l := range cc.gdn {
			c := &cc.g.cfg
			if err := e.MemsetD32Async(l.conv, 0, uint64(c.SSMConvChannels()*(c.SSMConvKernel-1))); err != nil {
				return err
			}
			if err := e.MemsetD32Async(l.state, 0, uint64(c.SSMNumVHeads*kernels.GDNState*kernels.GDNState)); err != nil {
				return err
			}
		}
		if err := e.MemsetD32Async(cc.s.ctr, 0, kernels.CountersBytes/4); err != nil {
			return err
		}
		// The top kernel's last block leaves these zero for the next; a
		// new cache starts them so.
		if cc.s.screenDone != 0 {
			if err := e.MemsetD32Async(cc.s.screenDone, 0, 2); err != nil {
				return err
			}
		}
		return e.Synchronize()
	})
	if err == nil {
		cc.lost = nil
	}
	return err
}

// lose marks the cache lost by err, a step's that may have stopped
// partway (see lost), and returns err.
func (cc *Cache) lose(err error) error {
	if err != nil {
		cc.lost = err
	}
	return err
}

// Len is the number of tokens in the cache.
func (cc *Cache) Len() int { return cc.n }

// Capacity is the most tokens the cache holds.
func (cc *Cache) Capacity() int { return cc.capacity }

// Bytes reports the device memory of the KV cache, the recurrent states and
// the activations: the step scratch and, where the model primes in chunks,
// the chunk's (prefill.go).
func (cc *Cache) Bytes() (kv, state, scratch uint64) {
	return cc.kvBytes, cc.stateBytes, cc.scratchBytes
}

// Close frees the cache's device and pinned memory.
func (cc *Cache) Close() error {
	var errs []error
	if cc.tokenHost != nil {
		errs = append(errs, cc.tokenHost.Free())
		cc.tokenHost = nil
	}
	if cc.ch.idsHost != nil {
		errs = append(errs, cc.ch.idsHost.Free())
		cc.ch.idsHost = nil
	}
	if cc.logitsPinned != nil {
		errs = append(errs, cc.logitsPinned.Free())
		cc.logitsPinned, cc.logitsHost = nil, nil
	}
	if cc.topPinned != nil {
		errs = append(errs, cc.topPinned.Free())
		cc.topPinned, cc.topVals, cc.topIDs = nil, nil, nil
	}
	for i, ev := range cc.tokenRead {
		if ev != 0 {
			errs = append(errs, cc.g.e.DestroyEvent(ev))
			cc.tokenRead[i] = 0
		}
	}
	if cc.arena != nil {
		errs = append(errs, cc.arena.Free())
		cc.arena = nil
	}
	if cc.ch.replays != nil {
		errs = append(errs, cc.ch.replays.Close())
	}
	errs = append(errs, cc.l2.Release())
	cc.l2 = nil
	return errors.Join(errs...)
}

// full reports why no step can be appended: the cache is closed or full.
func (cc *Cache) full() error {
	if err := cc.open(); err != nil {
		return err
	}
	if cc.n >= cc.capacity {
		return fmt.Errorf("gpu: context full: %d tokens, capacity %d", cc.n, cc.capacity)
	}
	return nil
}

// countersAtLen reports why a device-counter step cannot start at the
// cache's length: its counters are elsewhere (see ctrAt).
func (cc *Cache) countersAtLen() error {
	if cc.ctrAt != cc.n {
		return fmt.Errorf("gpu: the device counters are not at the cache's %d tokens: GenerateGraph, FillSynthetic and device-counter steps set them; Reset clears them and host-path steps (DecodeStep, Feed, a Session's) leave them behind", cc.n)
	}
	return nil
}

// open reports a closed cache, or one whose model is closed: a launch on
// either would read and write freed device memory, which a later
// allocation may own; or one lost by a step that stopped partway.
func (cc *Cache) open() error {
	if err := cc.alive(); err != nil {
		return err
	}
	if cc.lost != nil {
		return fmt.Errorf("gpu: the cache's contents were lost when a step stopped partway (%w): Reset it and feed the prompt again", cc.lost)
	}
	return nil
}

// alive reports a closed cache, or one whose model is closed (Reset's
// check: it is what mends a lost one).
func (cc *Cache) alive() error {
	if cc.arena == nil {
		return errors.New("gpu: cache closed")
	}
	if cc.g.weights == nil {
		return errors.New("gpu: model closed")
	}
	return nil
}

// FillSynthetic makes the cache look as if n tokens had been decoded, for
// benchmarks at long contexts: KV rows [0, n) get random values (the same
// block of random rows in every layer), the Gated DeltaNet delta-rule
// states random values (their conv windows keep what they hold: zeros
// after Reset), and the position and device counters point at n with next
// input token tok. Speed depends on the bytes moved, not on their values,
// so decode timed from here matches decode after a real prompt of n
// tokens; the tokens it produces mean nothing.
func (cc *Cache) FillSynthetic(n int, tok int32, seed uint64) error {
	if err := cc.open(); err != nil {
		return err
	}
	g := cc.g
	c := &g.cfg
	if n < 0 || n >= cc.capacity {
		return fmt.Errorf("gpu: synthetic context %d must be in [0, %d)", n, cc.capacity)
	}
	if tok < 0 || int(tok) >= c.NVocab {
		return fmt.Errorf("gpu: token %d out of range [0, %d)", tok, c.NVocab)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	e := g.e
	// From the first copy on, a failure leaves the cache half written: lost.
	if len(cc.kv) > 0 && n > 0 {
		// One KV head's rows [0, n) for K and V; copied per head and layer.
		dh := c.HeadDimK
		elem := 2
		if g.opt.KVFP8 {
			elem = 1
		}
		row := make([]byte, n*dh*elem)
		for i := 0; i < len(row); i += elem {
			if elem == 2 {
				binary.LittleEndian.PutUint16(row[i:], gguf.F32ToF16(float32(rng.NormFloat64())))
			} else {
				row[i] = kernels.E4M3FromFloat32(float32(rng.NormFloat64()) * 100)
			}
		}
		var scales []byte
		if g.opt.KVFP8 {
			scales = make([]byte, 4*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(scales[4*i:], math.Float32bits(0.01))
			}
		}
		headBytes := uint64(cc.capacity * dh * elem)
		for _, l := range cc.kv {
			for h := 0; h < c.NHeadKV; h++ {
				for _, p := range []cuda.DevPtr{l.k, l.v} {
					if err := e.CopyHtoD(p.Add(uint64(h)*headBytes), row); err != nil {
						return cc.lose(err)
					}
				}
				if scales != nil {
					for _, p := range []cuda.DevPtr{l.ks, l.vs} {
						if err := e.CopyHtoD(p.Add(uint64(h*cc.capacity*4)), scales); err != nil {
							return cc.lose(err)
						}
					}
				}
			}
		}
	}
	if len(cc.gdn) > 0 {
		st := make([]float32, c.SSMNumVHeads*kernels.GDNState*kernels.GDNState)
		for i := range st {
			st[i] = float32(rng.NormFloat64()) * 0.1
		}
		for _, l := range cc.gdn {
			if err := e.CopyHtoD(l.state, cuda.AsBytes(st)); err != nil {
				return cc.lose(err)
			}
		}
	}
	ctr := make([]int32, kernels.CountersBytes/4)
	ctr[kernels.CounterToken/4] = tok
	ctr[kernels.CounterPos/4] = int32(n)
	ctr[kernels.CounterTKV/4] = int32(n + 1)
	if err := e.CopyHtoD(cc.s.ctr, cuda.AsBytes(ctr)); err != nil {
		return cc.lose(err)
	}
	// The token ContinueGraph reads first (queueToken) is the step's, in
	// the ring's place for position n-1, as if that step had picked it.
	*cc.tokenPlace(n - 1) = tok
	cc.n, cc.ctrAt = n, n
	return nil
}

// tokenPlace is the token ring's place for the step at position pos:
// argmax_final and sample_draw store its token at pos & 1 (pos -1,
// FillSynthetic's n = 0, at 1).
func (cc *Cache) tokenPlace(pos int) *int32 {
	return &cuda.HostSlice[int32](cc.tokenHost, 0, 2)[pos&1]
}
