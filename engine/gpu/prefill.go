package gpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// Prefill: a prompt's tokens are known before they are fed, so priming
// runs them through each layer in chunks (Options.PrefillChunk tokens):
// every projection of the layer is one matvec_batch launch (a K-quant's
// after its inputs' stage) that streams the weights once for each pass of
// up to kernels.MatvecBatchTokens of the chunk's tokens, and the kernels
// between the projections run once each over the chunk, each token's
// arithmetic the step kernel's:
// the causal conv and the delta rule (token by token inside), the gated
// norm, the attention's prep, and its split and combine once for each run
// of tokens whose steps share a bucket (the scalar and tensor-core splits,
// which have no chunk form, a launch a token). The batch kernels add each
// token's sums exactly as the decode kernel of the same matrix does
// (matvec_batch.cu), so a chunk leaves the cache the bits that feeding its
// tokens one step at a time leaves (TestGPUPrefillMatchesTokenFeed).
//
// The K-quants' batch kernels read the chunk's inputs as
// matvec_batch_kq_stage stages them into the chunk's kx, once an input
// (and layout: Q6_K's, whose sub-blocks Q3_K, IQ4_XS, Q4_0 and IQ4_NL
// share, has its own), with the values their decode kernels' blocks stage.
// Models loaded with Options.TokenFeed or Omit feed token by token.

// prefillPlan is how a model primes in chunks.
type prefillPlan struct {
	tokens int // per chunk: Options.PrefillChunk
	// stageMax is the dynamic shared memory every staged batch kernel may
	// take beside its rings: a pass's inputs of up to
	// stageMax/(kernels.MatvecBatchTokens·4) columns are copied there.
	stageMax int
	sms      int // the GPU's: whether a launch's blocks take more than one unit each (from)
	// blocks caps each batch grid at the blocks the GPU holds at once (as
	// Model.mvBlocks does the decode grids), keyed by variant and dynamic
	// shared memory (a full pass's).
	blocks map[mvbKey]int
}

type mvbKey struct {
	v      MatvecBatchVariant
	shared int
}

// xFrom is where a batch launch reads its chunk's inputs.
type xFrom int

const (
	fromGlobal xFrom = iota // from global memory as the step lays them out
	fromStaged              // copied into each block's shared memory
	fromLaid                // from global memory, laid out once by matvec_batch_lay
)

// from says where a batch launch of w reads its chunk's inputs
// (matvec_batch.cu). Staged: where w's type has staged kernels (q8_0's),
// the copies fit beside the rings, and a block takes more than one unit,
// over which the copy is spent; with one unit a block, reading x from
// global memory reads it once too (run324, q8_0 for 8 tokens, µs copied /
// from global memory: 1024 × 3584, 128 units, 10.3 / 8.1; 7168 × 1024,
// 224 units, 9.5 / 13.0). q8_0's 16 values a load read 64 bytes of x
// each, which the conflict-free copies serve better than the L1 (12288 ×
// 4096: run314 64 µs copied, 152 from global memory; run324 48 and 72);
// bf16's 8 read 32, and copies with rings beside them take the L1's room,
// one block an SM at 4,096 columns where global reads leave room for two
// (12288 × 4096: run324 53 µs copied, run327 51 from global memory), so
// the 16-bit types and f32 have no staged kernels. Laid: where the copies
// would not fit (the 9B's 12,288-wide down projection), the inputs laid
// out once as the copies are, for the rings to read from global memory
// (docs/perf.md step 118), where the decode kernel takes the 16-byte path
// (w 16-byte aligned; the chunk's inputs are) and so the laid kernel's sums
// are its.
func (p *prefillPlan) from(w dtensor) xFrom {
	bk, ok := batchKernel(batchVariant(w, fromStaged))
	if !ok || (w.rows+bk.RowsPerBlock-1)/bk.RowsPerBlock <= p.sms {
		return fromGlobal
	}
	if kernels.MatvecBatchTokens*w.cols*4 <= p.stageMax {
		return fromStaged
	}
	if _, ok := batchKernel(batchVariant(w, fromLaid)); ok && laidAligned(w) {
		return fromLaid
	}
	return fromGlobal
}

// laidAligned reports whether a laid launch of w may read it: the rings'
// 16-byte weight loads and 4-byte scale words, and matvec_batch_lay's
// slots of 16 columns (q8_0's 4 float4s a load).
func laidAligned(w dtensor) bool {
	return w.ptr%16 == 0 && w.scales%4 == 0 && w.cols%16 == 0
}

// chunk holds a prompt chunk's activations: field f of token t at f +
// t·stride floats. tok[t] is token t's view, the step scratch with those
// fields moved (the attention's q and split partials too, which the chunk
// launches of attn_prep, attn_split and attn_combine pass between them).
type chunk struct {
	tokens                                                                    int
	x, xn, qg, q, ms, acc, attn, qkv, y, o, on, fg, fh, kx, lx                cuda.DevPtr // [tokens][stride] f32 each
	xS, xnS, qgS, qS, msS, accS, attnS, qkvS, yS, oS, onS, fgS, fhS, kxS, lxS int         // their strides in floats
	tok                                                                       []scratch
	// ids: [capacity] int32, the prompt tokens by position, which prefill
	// copies there for each chunk's one embedding launch (embed's dtok) to
	// read: a copy a prefill call, one node a chunk's graph updates. The
	// copy's source is idsHost, pinned, at the same positions: a position
	// is written once between Resets, and Reset synchronises, so no copy
	// still queued reads a slot the host writes again.
	ids     cuda.DevPtr
	idsHost *cuda.HostBuf
	// rec is a full chunk's launches as chunkReplay records them; replays,
	// the graphs of the launch sequences met so far (nil until the first).
	rec     cuda.Recording
	replays *cuda.ReplaySet
}

// chunkField is one field of a chunk: its base and stride, and the floats
// a token's copy holds (its decode scratch's size; kx's, a staged K-quant input's).
type chunkField struct {
	base   *cuda.DevPtr
	stride *int
	floats int
}

// chunkFields lists ch's fields with their sizes; buffers of a layer kind
// the model lacks are left out (zero).
func (g *Model) chunkFields(ch *chunk) []chunkField {
	c := &g.cfg
	fs := []chunkField{{&ch.x, &ch.xS, c.NEmbd}, {&ch.xn, &ch.xnS, c.NEmbd}}
	if c.NumAttention() > 0 {
		fs = append(fs, chunkField{&ch.qg, &ch.qgS, g.qgRows() + 2*c.NHeadKV*c.HeadDimK}, chunkField{&ch.q, &ch.qS, c.NHead * c.HeadDimK},
			chunkField{&ch.ms, &ch.msS, c.NHead * g.maxSplits * 2}, chunkField{&ch.acc, &ch.accS, c.NHead * g.maxSplits * c.HeadDimK},
			chunkField{&ch.attn, &ch.attnS, c.NHead * c.HeadDimK})
	}
	if c.NLayer > c.NumAttention() {
		fs = append(fs, chunkField{&ch.qkv, &ch.qkvS, c.SSMConvChannels() + c.SSMInnerSize + 2*c.SSMNumVHeads},
			chunkField{&ch.y, &ch.yS, c.SSMConvChannels()}, chunkField{&ch.o, &ch.oS, c.SSMInnerSize},
			chunkField{&ch.on, &ch.onS, c.SSMInnerSize})
	}
	fs = append(fs, chunkField{&ch.fg, &ch.fgS, 2 * c.NFF}, chunkField{&ch.fh, &ch.fhS, c.NFF})
	if cols := g.kquantCols(); cols > 0 {
		fs = append(fs, chunkField{&ch.kx, &ch.kxS, kernels.KQStageFloats(cols)}) // the K-quant launches' staged inputs
	}
	if cols := g.laidCols(); cols > 0 {
		fs = append(fs, chunkField{&ch.lx, &ch.lxS, cols}) // the laid launches' inputs
	}
	return fs
}

// laidCols is the widest input of the matrices g's plan lays out (0: none,
// or no plan): only those launches read the chunk's lx.
func (g *Model) laidCols() int {
	if g.pf == nil {
		return 0
	}
	cols := 0
	for i := range g.ls {
		for _, w := range g.ls[i].matrices() {
			if g.pf.from(w) == fromLaid {
				cols = max(cols, w.cols)
			}
		}
	}
	return cols
}

// kquantCols is the widest input of the model's K-quant matrices (0: none).
func (g *Model) kquantCols() int {
	cols := 0
	for i := range g.ls {
		for _, w := range g.ls[i].matrices() {
			if bk, ok := batchKernel(batchVariant(w, fromGlobal)); ok && bk.TensorCore {
				cols = max(cols, w.cols)
			}
		}
	}
	return cols
}

// alignFloats rounds a token's copy up to 64 floats (256 bytes), so every
// token's fields lie as the step scratch's do: 256-byte aligned, which the
// kernels' vector paths test.
func alignFloats(n int) int { return (n + 63) &^ 63 }

// chunkViews builds cc.ch.tok once the chunk's buffers are placed.
func (g *Model) chunkViews(cc *Cache) {
	ch := &cc.ch
	if ch.tokens == 0 {
		return
	}
	at := func(base cuda.DevPtr, stride, t int) cuda.DevPtr {
		if base == 0 {
			return 0
		}
		return base.Add(uint64(t*stride) * 4)
	}
	ch.tok = make([]scratch, ch.tokens)
	for t := range ch.tok {
		s := cc.s
		s.x, s.xn = at(ch.x, ch.xS, t), at(ch.xn, ch.xnS, t)
		s.qg, s.attn = at(ch.qg, ch.qgS, t), at(ch.attn, ch.attnS, t)
		s.q, s.partMS, s.partAcc = at(ch.q, ch.qS, t), at(ch.ms, ch.msS, t), at(ch.acc, ch.accS, t)
		s.qkv, s.on = at(ch.qkv, ch.qkvS, t), at(ch.on, ch.onS, t)
		s.y, s.o = at(ch.y, ch.yS, t), at(ch.o, ch.oS, t)
		s.fg, s.fh = at(ch.fg, ch.fgS, t), at(ch.fh, ch.fhS, t)
		g.fusedViews(&s)
		ch.tok[t] = s
	}
}

// matrices lists the matrices a step multiplies by in layer L: each fused
// matrix (a run of parts, or the FFN's pair), and the parts uploaded alone.
func (L *layerWeights) matrices() []dtensor {
	ws := append(append([]dtensor(nil), L.qkvAttn.launches()...), L.gdnIn.launches()...)
	ws = append(ws, L.o, L.ssmOut)
	if L.ffnGateUp.ptr != 0 {
		ws = append(ws, L.ffnGateUp)
	} else {
		ws = append(ws, L.ffnGate, L.ffnUp)
	}
	ws = append(ws, L.ffnDown)
	out := ws[:0]
	for _, w := range ws {
		if w.ptr != 0 {
			out = append(out, w)
		}
	}
	return out
}

// batchVariant is the matvec_batch kernel whose sums are those of w's
// decode kernel: same type, and wide where w's is (the wave form
// included); the form that reads its inputs from where from says.
func batchVariant(w dtensor, from xFrom) MatvecBatchVariant {
	return MatvecBatchVariant{GgmlType: int(w.typ), Wide: b2i(w.wideKey() != 0), Staged: b2i(from == fromStaged), Laid: b2i(from == fromLaid)}
}

// batchKernel is the kernel of variant v (kernels.MatvecBatchKernels; its
// Of is shared: read it, never write it).
func batchKernel(v MatvecBatchVariant) (kernels.MatvecBatchKernel, bool) {
	bk, ok := batchKernels()[v]
	return bk, ok
}

// batchKernels indexes kernels.MatvecBatchKernels by variant, once: a
// chunk looks its launches' kernels up two or three times each time
// prefillPlan.launch runs (twice for a normed product), and rebuilding the
// list for each took 44% of the host's time for a chunk (perf.md step
// 124).
var batchKernels = sync.OnceValue(func() map[MatvecBatchVariant]kernels.MatvecBatchKernel {
	return indexFirst(kernels.MatvecBatchKernels(), func(bk kernels.MatvecBatchKernel) MatvecBatchVariant {
		return MatvecBatchVariant{GgmlType: bk.GgmlType, Wide: b2i(bk.Wide), Staged: b2i(bk.Staged), Laid: b2i(bk.Laid)}
	})
})

// planPrefill decides whether g primes in chunks and how each launch reads
// its inputs: nil where a layer's matrix has no batch kernel, or Options
// ask for token feed. Every batch kernel may take the shared memory the GPU
// allows a block.
func (g *Model) planPrefill() (*prefillPlan, error) {
	if g.opt.TokenFeed || len(g.opt.Omit) > 0 {
		return nil, nil
	}
	for i := range g.ls {
		for _, w := range g.ls[i].matrices() {
			if _, ok := batchKernel(batchVariant(w, fromGlobal)); !ok {
				return nil, nil
			}
		}
	}
	stageMax, err := batchShared(g.e, g.mod, g.blockShared)
	if err != nil {
		return nil, err
	}
	tokens := g.opt.PrefillChunk
	if tokens == 0 {
		tokens = DefaultPrefillChunk
	}
	p := &prefillPlan{tokens: tokens, stageMax: stageMax, sms: g.e.Info().SMs}
	var launches []mvbKey
	for i := range g.ls {
		for _, w := range g.ls[i].matrices() {
			l, _, _ := p.launch(w) // every matrix has its kernel: checked above
			launches = append(launches, l)
		}
	}
	if p.blocks, err = batchGrids(g.e, g.mod, launches); err != nil {
		return nil, err
	}
	return p, nil
}

// launch is the kernel of a chunk's launch of w, and its key (variant and
// dynamic shared memory); ok is false where w has no batch kernel, which
// planPrefill rules out.
func (p *prefillPlan) launch(w dtensor) (l mvbKey, bk kernels.MatvecBatchKernel, ok bool) {
	v := batchVariant(w, p.from(w))
	bk, ok = batchKernel(v)
	return mvbKey{v, bk.Shared(p.tokens, w.cols)}, bk, ok
}

// batchShared lets every batch kernel with rings (staged, laid, K-quant),
// and the K-quant inputs' stage (Q6_K's layout: cols*4 bytes), take the most dynamic shared
// memory the GPU allows a block beside its static arrays, and returns the
// least of those less the staged (q8_0) kernels' rings: what any staged
// launch may copy (0: nothing stages).
func batchShared(e *cuda.Engine, mod cuda.Module, optin int) (int, error) {
	most := optin
	names := []string{"matvec_batch_kq_stage"}
	ring := map[string]int{}
	for _, bk := range kernels.MatvecBatchKernels() {
		if bk.Staged || bk.Laid || bk.TensorCore {
			names = append(names, bk.Name)
		}
		if bk.Staged {
			ring[bk.Name] = bk.Ring()
		}
	}
	for _, name := range names {
		fn, err := e.Function(mod, name)
		if err != nil {
			return 0, err
		}
		static, err := e.FuncAttribute(fn, cuda.FuncSharedSizeBytes)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		if err := e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, optin-static); err != nil {
			return 0, fmt.Errorf("%s: allow %d bytes of shared memory: %w", name, optin-static, err)
		}
		if r, ok := ring[name]; ok {
			most = max(0, min(most, optin-static-r))
		}
	}
	return most, nil
}

// batchGrids measures how many blocks of each launch's kernel, with its
// dynamic shared memory, the GPU holds at once.
func batchGrids(e *cuda.Engine, mod cuda.Module, launches []mvbKey) (map[mvbKey]int, error) {
	out := map[mvbKey]int{}
	sms := e.Info().SMs
	for _, l := range launches {
		if _, ok := out[l]; ok {
			continue
		}
		bk, ok := batchKernel(l.v)
		if !ok {
			return nil, fmt.Errorf("no batch kernel for %+v", l.v)
		}
		fn, err := e.Function(mod, bk.Name)
		if err != nil {
			return nil, err
		}
		n, err := e.MaxActiveBlocksPerSM(fn, kernels.MatvecThreads, l.shared)
		if err != nil {
			return nil, fmt.Errorf("occupancy of %s: %w", bk.Name, err)
		}
		out[l] = sms * max(n, 0)
	}
	return out, nil
}

// batchBlocks is a batch launch's blocks a pass (grid row) for n tokens:
// a block for every RowsPerBlock rows, at most the resident blocks (0:
// unknown) shared out among the passes (MatvecBatchTokens tokens each), so
// that the passes run side by side and one's weight reads serve the others
// from the L2.
func batchBlocks(rows, n, rowsPerBlock, resident int) int {
	blocks := (rows + rowsPerBlock - 1) / rowsPerBlock
	passes := (n + kernels.MatvecBatchTokens - 1) / kernels.MatvecBatchTokens
	if resident > 0 {
		blocks = min(blocks, max(1, resident/passes))
	}
	return blocks
}

// prefill enqueues the steps of tokens at positions from, from+1, ... in
// chunks, without their logits, on the engine thread; it never
// synchronises. It leaves the cache as feeding them one step at a time.
// With replay (and not Options.EagerChunks) each full chunk runs as a
// graph (chunkReplay); the last, shorter one is launched from the host.
func (g *Model) prefill(cc *Cache, tokens []int32, from int, replay bool) error {
	if len(cc.ch.tok) == 0 {
		return errors.New("prefill: the cache has no chunk (the model feeds prompts token by token)")
	}
	if err := g.chunkIDs(cc, tokens, from); err != nil {
		return err
	}
	return g.prefillChunks(cc, tokens, from, replay)
}

// chunkIDs enqueues the copy of tokens to cc.ch.ids at positions from, ...,
// through the pinned idsHost (a copy from pageable memory may read it after
// returning, and the caller may reuse tokens then).
func (g *Model) chunkIDs(cc *Cache, tokens []int32, from int) error {
	host := cuda.HostSlice[int32](cc.ch.idsHost, 4*from, len(tokens)) // nil past the cache's positions
	if host == nil {
		return fmt.Errorf("prefill %d tokens at %d: past the cache's %d positions", len(tokens), from, cc.capacity)
	}
	copy(host, tokens)
	if err := g.e.CopyHtoDAsync(cc.ch.ids.Add(4*uint64(from)), cuda.AsBytes(host)); err != nil {
		return fmt.Errorf("prefill %d tokens at %d: their ids: %w", len(tokens), from, err)
	}
	return nil
}

// prefillChunks is prefill after chunkIDs.
func (g *Model) prefillChunks(cc *Cache, tokens []int32, from int, replay bool) error {
	g.l2Window(cc)
	replay = replay && !g.opt.EagerChunks
	for i := 0; i < len(tokens); i += cc.ch.tokens {
		part := tokens[i:min(i+cc.ch.tokens, len(tokens))]
		run := g.prefillChunk
		if replay && len(part) == cc.ch.tokens {
			run = g.chunkReplay
		}
		if err := run(cc, part, from+i); err != nil {
			return fmt.Errorf("prefill %d tokens at %d: %w", len(part), from+i, err)
		}
	}
	return nil
}

// DefaultPrefillChunk is the tokens a prefill chunk takes unless
// Options.PrefillChunk says otherwise, and MaxPrefillChunk the most it may.
// Four passes of the batch kernels: on an H100 (perf.md step 127, runs
// 416-418) a 512-token prompt primed in chunks of 32 in 0.69-0.55 of the
// time chunks of 8 took (0.8B bf16 to Q4_K; 9B q8_0 0.82, bf16 0.71), for
// 1.25 MB (0.8B) to 1.5 MB (9B) a token of chunk buffers; 48 and 64
// gained 3-13% more on the 0.8B and lost some of 48's on the 9B.
const (
	DefaultPrefillChunk = 4 * kernels.MatvecBatchTokens
	MaxPrefillChunk     = 64
)

// maxChunkReplays bounds a cache's chunk graphs. A prompt's full chunks
// launch one sequence of kernels while they stay in one attention bucket,
// another where a chunk straddles two buckets (a prompt starting off a
// multiple of the chunk), another where the splits change kernel (the
// scalar or tensor-core splits, per token): a few graphs hold them all.
const maxChunkReplays = 4

// chunkReplay is prefillChunk run as a graph (perf.md step 125): its
// launches are recorded instead of made, and replayed on the cache's graph
// of the same kernels, whose nodes that differ (the ids' offset, the positions,
// the attention bucket's grids and attn_combine's shared memory) are
// updated in place; a new sequence is captured into a graph first, the
// least recently used dropped beyond maxChunkReplays. The same kernels
// with the same arguments as prefillChunk's launches, so the same bits,
// for a fraction of the host's time a launch (cuLaunchKernelEx's ~4 µs,
// step 124).
func (g *Model) chunkReplay(cc *Cache, tokens []int32, from int) error {
	ch := &cc.ch
	if err := g.e.RecordLaunches(&ch.rec, func() error { return g.prefillChunk(cc, tokens, from) }); err != nil {
		return err
	}
	if ch.replays == nil {
		ch.replays = g.e.NewReplaySet(maxChunkReplays)
	}
	if err := ch.replays.Launch(&ch.rec); err != nil {
		return fmt.Errorf("a chunk's graph of %d launches: %w", ch.rec.Len(), err)
	}
	return nil
}

// prefillChunk runs the n ≤ cc.ch.tokens tokens at positions from, ...
// through every layer: the mixer's and FFN's products batched, the
// kernels between them once over the chunk (attnChunk, gdnChunk).
func (g *Model) prefillChunk(cc *Cache, tokens []int32, from int) error {
	ch := &cc.ch
	if err := g.embed(ch.x, 0, ch.ids.Add(4*uint64(from)), int32(len(tokens)), int32(ch.xS)); err != nil {
		return err
	}
	for i := range g.ls {
		L := &g.ls[i]
		if err := g.prefillLayer(cc, L, tokens, from); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return nil
}

// prefillLayer is one layer of prefillChunk: x_t += mixer(rmsnorm(x_t));
// x_t += ffn(rmsnorm(x_t)) for every token t of the chunk.
func (g *Model) prefillLayer(cc *Cache, L *layerWeights, tokens []int32, from int) error {
	ch := &cc.ch
	n := len(tokens)
	t0 := &ch.tok[0]
	if L.kind == model.LayerAttention {
		if err := g.batchNormed(cc, n, L.attnNorm, ch.qgS, L.qkvAttn, mvStore, []cuda.DevPtr{t0.qg, t0.kraw, t0.v}); err != nil {
			return err
		}
		if err := g.attnChunk(cc, L, tokens, from); err != nil {
			return err
		}
		if err := g.batch(cc, n, t0.x, ch.xS, L.o, t0.attn, ch.attnS, mvAccumulate, 0, false); err != nil {
			return err
		}
	} else {
		if err := g.batchNormed(cc, n, L.attnNorm, ch.qkvS, L.gdnIn, mvStore, []cuda.DevPtr{t0.qkv, t0.z, t0.b, t0.a}); err != nil {
			return err
		}
		if err := g.gdnChunk(cc, L, n); err != nil {
			return err
		}
		if err := g.batch(cc, n, t0.x, ch.xS, L.ssmOut, t0.on, ch.onS, mvAccumulate, 0, false); err != nil {
			return err
		}
	}
	if L.ffnGateUp.ptr != 0 {
		if err := g.batchNormed(cc, n, L.ffnNorm, ch.fhS, single(L.ffnGateUp), mvSwiGLU, []cuda.DevPtr{t0.fh}); err != nil {
			return err
		}
	} else {
		if err := g.batchNormed(cc, n, L.ffnNorm, ch.fgS, single(L.ffnGate, L.ffnUp), mvStore, []cuda.DevPtr{t0.fg, t0.fu}); err != nil {
			return err
		}
		for t := range tokens {
			s := &ch.tok[t]
			if err := g.k.SwiGLU(s.fh, s.fg, s.fu, int32(g.cfg.NFF)); err != nil {
				return err
			}
		}
	}
	return g.batch(cc, n, t0.x, ch.xS, L.ffnDown, t0.fh, ch.fhS, mvAccumulate, 0, false)
}

// gdnChunk is gdnKernels for the chunk's n tokens: the conv, the delta
// rule and the gated norm once each over the chunk (each token's
// arithmetic the step kernels').
func (g *Model) gdnChunk(cc *Cache, L *layerWeights, n int) error {
	c := &g.cfg
	ch := &cc.ch
	st := cc.gdn[L.gdnIndex]
	t0 := &ch.tok[0]
	if err := g.k.GDNConvChunk(t0.y, st.conv, t0.qkv, L.conv.ptr, int32(c.SSMConvChannels()), int32(c.SSMConvKernel),
		int32(n), int32(ch.qkvS), int32(ch.yS)); err != nil {
		return err
	}
	K := uint64(c.SSMKeyDim()) * 4
	if err := g.k.GDNDeltaChunk(st.state, t0.o, t0.y, t0.y.Add(K), t0.y.Add(2*K), t0.b, t0.a, L.a.ptr, L.dt.ptr,
		int32(c.SSMGroupCount), int32(c.SSMNumVHeads), 0, model.L2NormEps, int32(n), int32(ch.yS), int32(ch.qkvS), int32(ch.oS)); err != nil {
		return err
	}
	return g.k.RMSNormGatedChunk(t0.on, t0.o, L.ssmNorm.ptr, t0.z, int32(c.SSMNumVHeads), int32(c.SSMHeadDimV), c.NormEps,
		int32(n), int32(ch.onS), int32(ch.oS), int32(ch.qkvS))
}

// attnChunk is attnKernels for the chunk's tokens at positions from, ...:
// one attn_prep launch stores every token's K and V before any token's
// split reads the cache (token t's reads stop at its own position), then
// one split launch and one attn_combine launch for each run of tokens whose
// steps share a bucket.
func (g *Model) attnChunk(cc *Cache, L *layerWeights, tokens []int32, from int) error {
	c := &g.cfg
	ch := &cc.ch
	t0 := &ch.tok[0]
	kv := cc.kv[L.attnCacheIndex]
	n, nh, nkv, dh := int32(len(tokens)), int32(c.NHead), int32(c.NHeadKV), int32(c.HeadDimK)
	qStride, _ := g.attnQ(t0)
	var err error
	if g.opt.KVFP8 {
		err = g.k.AttnPrepFP8Chunk(t0.q, t0.qg, qStride, L.qNorm.ptr, t0.kraw, L.kNorm.ptr, t0.v, kv.k, kv.v, kv.ks, kv.vs,
			nh, nkv, dh, int32(c.NRot), int32(cc.capacity), int32(from), c.RopeBase, c.NormEps, n, int32(ch.qS), int32(ch.qgS))
	} else {
		err = g.k.AttnPrepF16Chunk(t0.q, t0.qg, qStride, L.qNorm.ptr, t0.kraw, L.kNorm.ptr, t0.v, kv.k, kv.v,
			nh, nkv, dh, int32(c.NRot), int32(cc.capacity), int32(from), c.RopeBase, c.NormEps, n, int32(ch.qS), int32(ch.qgS))
	}
	if err != nil {
		return fmt.Errorf("positions %d to %d: %w", from, from+len(tokens)-1, err)
	}
	for lo := 0; lo < len(tokens); {
		b := g.BucketKey(from + lo + 1)
		hi := lo + 1
		for hi < len(tokens) && g.BucketKey(from+hi+1) == b {
			hi++
		}
		if err := g.attnSplitRun(cc, kv, b, from, lo, hi); err != nil {
			return err
		}
		s := &ch.tok[lo]
		_, gate := g.attnQ(s)
		if err := g.k.AttnCombineChunk(s.attn, s.partMS, s.partAcc, gate, nh, dh, int32(b.NSplits), 2*dh, int32(hi-lo),
			int32(ch.attnS), int32(ch.msS), int32(ch.accS), int32(ch.qgS)); err != nil {
			return fmt.Errorf("positions %d to %d: %w", from+lo, from+hi-1, err)
		}
		lo = hi
	}
	return nil
}

// attnSplitRun launches the splits of the chunk's tokens lo..hi-1 (at
// positions from+lo, ...), whose steps share bucket b: one attn_split_chunk
// launch where the step's split is a vector kernel on the CUDA cores (each
// token's bits its step's), else (the scalar and tensor-core splits) the
// step's own launch a token.
func (g *Model) attnSplitRun(cc *Cache, kv kvLayer, b Bucket, from, lo, hi int) error {
	c := &g.cfg
	ch := &cc.ch
	if !b.FAVec || g.attnSplitMMA(b) {
		for t := lo; t < hi; t++ {
			pos := from + t
			if err := g.attnSplit(cc, &ch.tok[t], kv, stepArgs{pos: int32(pos), bucket: b, feed: true}); err != nil {
				return fmt.Errorf("position %d: %w", pos, err)
			}
		}
		return nil
	}
	s := &ch.tok[lo]
	v := AttnSplitChunkVariant{HeadDim: c.HeadDimK, FP8: b2i(g.opt.KVFP8)}
	hpb, scale := g.splitGeom(b)
	if err := g.k.AttnSplitChunk(v, s.partMS, s.partAcc, s.q, kv.k, kv.v, kv.ks, kv.vs, int32(c.NHead), int32(c.NHeadKV), int32(cc.capacity),
		int32(b.NSplits), int32(hpb), int32(from+lo+1), scale, int32(hi-lo), int32(ch.qS), int32(ch.msS), int32(ch.accS)); err != nil {
		return fmt.Errorf("positions %d to %d: %w", from+lo, from+hi-1, err)
	}
	return nil
}

// batchNormed is normed for a chunk: the products of rmsnorm(x_t)·norm by
// grp's matrices, in mode, each into its first part's output in ys (yStride
// floats between tokens). Where the step fuses the norm into
// its products, the K-quant launches' inputs are normalised as
// matvec_batch_kq_stage stages them, as their decode kernels' blocks do,
// and the others' once into xn by matvec_batch_norm (memra_mv_input, the
// values the step's blocks stage); else every input comes normalised into
// xn by one rmsnorm launch over the chunk's rows, as the step's.
func (g *Model) batchNormed(cc *Cache, n int, norm dtensor, yStride int, grp mvGroup, mode int32, ys []cuda.DevPtr) error {
	c := &g.cfg
	ch := &cc.ch
	fuse := g.fusesNorm()
	normalise := g.k.RMSNorm
	if fuse {
		normalise = g.k.MatvecBatchNorm
	}
	normalised := false
	inKX := -1 // the layout kx holds this input in (kqLayout), -1: none yet
	for i, w := range grp.launches() {
		x, xS, nw := ch.xn, ch.xnS, cuda.DevPtr(0)
		_, bk, _ := g.pf.launch(w)
		if fuse && bk.TensorCore {
			x, xS, nw = ch.x, ch.xS, norm.ptr
		} else if !normalised {
			if err := normalise(ch.xn, ch.x, norm.ptr, int32(n), int32(c.NEmbd), int32(ch.xS), int32(ch.xnS), c.NormEps); err != nil {
				return err
			}
			normalised = true
		}
		if err := g.batch(cc, n, ys[grp.first[i]], yStride, w, x, xS, mode, nw, bk.TensorCore && inKX == kqLayout(w)); err != nil {
			return err
		}
		if bk.TensorCore {
			inKX = kqLayout(w)
		}
	}
	return nil
}

// kqLayout is the layout of kx a K-quant launch of w reads
// (matvec_batch_kq_stage's q6).
func kqLayout(w dtensor) int {
	// 0: Q4_K's and Q5_K's; 1: Q6_K's, whose 16-column sub-blocks the other
	// tiled types have.
	return b2i(tiled(w.typ) && w.typ != gguf.TypeQ4_K && w.typ != gguf.TypeQ5_K)
}

// batch computes y_t (+)= W x'_t for the chunk's n tokens (matvec's
// modes), x_t = x + t·xStride and y_t = y + t·yStride floats, with the
// batch kernel whose sums are W's decode kernel's; x'_t = rmsnorm(x_t)·norm
// where norm is not 0 (the K-quant launches alone fuse it). A K-quant
// launch reads the chunk's inputs as matvec_batch_kq_stage stages them
// into kx just before, or, with inKX, as an earlier launch of the same
// inputs left them there in its layout.
func (g *Model) batch(cc *Cache, n int, y cuda.DevPtr, yStride int, w dtensor, x cuda.DevPtr, xStride int, mode int32, norm cuda.DevPtr,
	inKX bool) error {
	if n < 1 || n > g.pf.tokens {
		return fmt.Errorf("%s: a batch of %d tokens (1 to %d)", w.name, n, g.pf.tokens)
	}
	if xStride%4 != 0 {
		// Every token's x 16-byte aligned or none, as the kernels' paths assume (matvec_batch.cu).
		return fmt.Errorf("%s: batch input stride %d floats is not a multiple of 4", w.name, xStride)
	}
	l, bk, ok := g.pf.launch(w)
	if !ok {
		return fmt.Errorf("%s: no batch kernel for %s", w.name, w.typ) // planPrefill checked every matrix
	}
	if bk.Staged && w.scales%4 != 0 {
		// The rings copy each f16 scale as the 4-byte word holding it (matvec_batch.cu memra_cp_f16_word).
		return fmt.Errorf("%s: scales at %#x are not 4-byte aligned", w.name, uint64(w.scales))
	}
	if bk.Laid {
		ch := &cc.ch
		if x%16 != 0 { // the weights' alignment is laidAligned's, which the plan checked before it chose the laid kernel
			return fmt.Errorf("%s: a laid launch needs 16-byte aligned inputs, not %#x (matvec_batch_lay reads float4s)", w.name, uint64(x))
		}
		if w.cols > ch.lxS {
			return fmt.Errorf("%s: %d columns, but the chunk lays out inputs of up to %d", w.name, w.cols, g.laidCols())
		}
		if err := g.k.MatvecBatchLay(ch.lx, x, int32(n), int32(w.cols), int32(xStride), int32(ch.lxS)); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		x, xStride = ch.lx, ch.lxS
	}
	if norm != 0 && (!bk.TensorCore || norm%16 != 0) {
		// memra_stage_x reads norm_w as float4s.
		return fmt.Errorf("%s: %s cannot fuse a norm at %#x", w.name, bk.Name, uint64(norm))
	}
	if bk.TensorCore {
		ch := &cc.ch
		if kernels.KQStageFloats(w.cols) > ch.kxS {
			return fmt.Errorf("%s: %d columns, but the chunk stages K-quant inputs of up to %d", w.name, w.cols, g.kquantCols())
		}
		if !inKX {
			_, normBytes := normArgs(norm, w.cols)
			g.note(launchShape{}, normBytes, 0) // the stage reads the norm weight, the launch below does not
			if err := g.k.MatvecBatchKQStage(ch.kx, x, norm, int32(n), int32(w.cols), int32(xStride), int32(ch.kxS), int32(b2i(norm != 0)),
				g.cfg.NormEps, int32(kqLayout(w))); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
		}
		x, xStride = ch.kx, ch.kxS
	}
	blocks := batchBlocks(w.rows, n, bk.RowsPerBlock, g.pf.blocks[l])
	g.note(launchShape{w.rows, w.cols, "×"}, w.ggufBytes(), 0) // read once for the chunk's tokens
	if err := g.k.MatvecBatch(l.v, y, w.ptr, w.scales, x, int32(w.rows), int32(w.cols), mode, int32(n), int32(xStride), int32(yStride),
		blocks); err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	return nil
}

// PrefillChunk is how many prompt tokens one prefill chunk takes: 1 where
// the model feeds prompts one decode step per token.
func (g *Model) PrefillChunk() int {
	if g.pf == nil {
		return 1
	}
	return g.pf.tokens
}
