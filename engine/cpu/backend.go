// Package cpu is the pure-Go CPU backend: caches, the one-token forward pass
// and the building-block ops. It is the oracle every GPU kernel is checked
// against (f32 math, the same model code path), and the fallback when no GPU
// is present. Weights are read in place from the GGUF mmap in their stored
// type; matrix-vector products use a fixed pool of workers.
//
// To generate text: gguf.Open the file (keep it open while the model is in
// use: its weights are views of the mapping), model.Load it, tokenizer.FromGGUF
// for the vocabulary, New for a Backend, then sample.Generate from the
// prompt's ids; Example does all of it.
package cpu

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/memra-ai/memra/engine/model"
)

// DefaultContext caps the cache when Options.Ctx is 0 and the model's
// context_length is larger (or unknown): the KV cache is allocated up front.
const DefaultContext = 4096

// MaxThreads bounds Options.Threads: each worker is a goroutine with its
// own slice of every matrix, so a mistyped count is refused rather than
// spawned.
const MaxThreads = 1024

// Options configures a Backend.
type Options struct {
	// Ctx is the cache capacity in tokens; 0 means min(context_length,
	// DefaultContext).
	Ctx int
	// Threads is the number of matvec workers, at most MaxThreads; 0 means
	// GOMAXPROCS.
	Threads int
}

// mat is a weight matrix with its dot kernel chosen at load time.
type mat struct {
	t   *model.Tensor
	dot dotFunc
}

// layerW holds one layer's weights ready for the forward pass: matrices in
// place, small F32 tensors copied to []float32.
type layerW struct {
	kind              model.LayerKind
	attnNorm, ffnNorm []float32

	q, k, v, o   mat
	qNorm, kNorm []float32

	qkv, gate, beta, alpha, ssmOut mat
	conv, dt, a, ssmNorm           []float32

	ffnGate, ffnUp, ffnDown mat
}

// Backend runs a model on the CPU for one sequence. It implements the
// Decoder contract (DecodeStep, Reset, Len, Capacity). Not safe for
// concurrent use. Make one with New (the zero Backend is not usable) and
// Close it when done.
type Backend struct {
	m      *model.Model
	cfg    *model.Config
	pool   *Pool
	cache  *Cache
	embd   *model.Tensor
	out    mat
	outNrm []float32
	layers []layerW

	// Scratch, all f32, sized once (scratchFor); a layer kind's buffers are
	// empty where the model has no such layer.
	x, xn, y []float32 // [n_embd]: residual stream, its norm, a block's output
	// Attention (Dh the key head size, Dv the value's): qg [n_head][2·Dh]
	// (per head q then gate; [n_head][Dh] without the output gate), q
	// [n_head][Dh], k [n_kv][Dh], v [n_kv][Dv], att [n_head][Dv], scores
	// [n_head][capacity], cos and sin [n_rot/2] for the step's position.
	qg, q, k, v, att []float32
	scores, cos, sin []float32
	// Gated DeltaNet: qkv (W_qkv x) and conv (its conv + SiLU) [C] = q
	// [H_k][S] · k [H_k][S] · v [H_v][Sv]; z (W_gate x) and o (the heads'
	// output) [H_v][Sv]; bet and alp (W_beta x, W_alpha x) [H_v].
	qkv, conv, z, o []float32
	bet, alp        []float32
	ffnG, ffnU      []float32 // [n_ff]
	logits          []float32 // [n_vocab]
}

// New prepares a backend for m: checks every weight has a CPU kernel, copies
// the small F32 tensors, allocates the cache and starts the worker pool.
// Close stops the pool.
func New(m *model.Model, opts Options) (*Backend, error) {
	cfg := &m.Config
	if err := m.CheckOpen(); err != nil { // New reads the small tensors
		return nil, fmt.Errorf("cpu backend: %w", err)
	}
	if opts.Threads < 0 || opts.Threads > MaxThreads {
		return nil, fmt.Errorf("cpu backend: %d threads: want 0 (GOMAXPROCS) to %d", opts.Threads, MaxThreads)
	}
	capacity := opts.Ctx
	if capacity <= 0 {
		capacity = DefaultContext
		if cfg.ContextLength > 0 {
			capacity = min(capacity, cfg.ContextLength)
		}
	}
	// The scratch is checked with the cache, before either is allocated: a
	// buffer that does not fit would end the process.
	sz := scratchFor(cfg, capacity)
	cache, err := newCache(cfg, capacity, sz.bytes())
	if err != nil {
		return nil, err
	}
	b := &Backend{m: m, cfg: cfg, cache: cache, embd: m.TokenEmbd}
	var errs []error
	matOf := func(t *model.Tensor) mat {
		if t == nil {
			return mat{}
		}
		d, err := dotFor(t.Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("tensor %s: %w", t.Name, err))
		}
		return mat{t, d}
	}
	f32 := func(t *model.Tensor) []float32 {
		if t == nil {
			return nil
		}
		v, err := Float32s(t)
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	b.out = matOf(m.Output)
	b.outNrm = f32(m.OutputNorm)
	b.layers = make([]layerW, len(m.Layers))
	for i := range m.Layers {
		L := &m.Layers[i]
		b.layers[i] = layerW{
			kind: L.Kind, attnNorm: f32(L.AttnNorm), ffnNorm: f32(L.FFNNorm),
			q: matOf(L.AttnQ), k: matOf(L.AttnK), v: matOf(L.AttnV), o: matOf(L.AttnOutput),
			qNorm: f32(L.AttnQNorm), kNorm: f32(L.AttnKNorm),
			qkv: matOf(L.AttnQKV), gate: matOf(L.AttnGate), beta: matOf(L.SSMBeta), alpha: matOf(L.SSMAlpha),
			ssmOut: matOf(L.SSMOut),
			conv:   f32(L.SSMConv), dt: f32(L.SSMDt), a: f32(L.SSMA), ssmNorm: f32(L.SSMNorm),
			ffnGate: matOf(L.FFNGate), ffnUp: matOf(L.FFNUp), ffnDown: matOf(L.FFNDown),
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("cpu backend: %v", errs[0])
	}
	if _, err := dotFor(m.TokenEmbd.Type); err != nil {
		return nil, fmt.Errorf("cpu backend: tensor %s: %w", m.TokenEmbd.Name, err)
	}

	b.x, b.xn, b.y = make([]float32, sz.embd), make([]float32, sz.embd), make([]float32, sz.embd)
	b.qg, b.q = make([]float32, sz.qg), make([]float32, sz.q)
	b.k, b.v = make([]float32, sz.k), make([]float32, sz.v)
	b.att, b.scores = make([]float32, sz.att), make([]float32, sz.scores)
	b.cos, b.sin = make([]float32, sz.rot), make([]float32, sz.rot)
	b.qkv, b.conv = make([]float32, sz.conv), make([]float32, sz.conv)
	b.z, b.o = make([]float32, sz.inner), make([]float32, sz.inner)
	b.bet, b.alp = make([]float32, sz.vHeads), make([]float32, sz.vHeads)
	b.ffnG, b.ffnU = make([]float32, sz.ff), make([]float32, sz.ff)
	b.logits = make([]float32, sz.vocab)
	b.pool = NewPool(opts.Threads)
	return b, nil
}

// scratch is the length of each scratch buffer (float32s) for a cache of
// capacity tokens. A layer kind's buffers exist only where the model has
// such layers: the metadata of a kind it lacks matched no tensor shape
// (model.MaxDim bounds it, no more).
type scratch struct {
	embd, qg, q, k, v, att, scores, rot int
	conv, inner, vHeads, ff, vocab      int
}

func scratchFor(cfg *model.Config, capacity int) scratch {
	s := scratch{embd: cfg.NEmbd, ff: cfg.NFF, vocab: cfg.NVocab}
	if cfg.NumAttention() > 0 {
		s.rot = cfg.NRot / 2
		s.q = cfg.NHead * cfg.HeadDimK
		s.qg = s.q
		if cfg.AttnOutputGate {
			s.qg *= 2
		}
		s.k, s.v = cfg.NHeadKV*cfg.HeadDimK, cfg.NHeadKV*cfg.HeadDimV
		s.att, s.scores = cfg.NHead*cfg.HeadDimV, cfg.NHead*capacity
	}
	if cfg.NumAttention() < cfg.NLayer {
		s.conv, s.inner, s.vHeads = cfg.SSMConvChannels(), cfg.SSMInnerSize, cfg.SSMNumVHeads
	}
	return s
}

// bytes is the scratch's total size.
func (s scratch) bytes() uint64 {
	n := 3*s.embd + s.qg + s.q + s.k + s.v + s.att + s.scores + 2*s.rot + 2*s.conv + 2*s.inner + 2*s.vHeads + 2*s.ff + s.vocab
	return 4 * uint64(n)
}

// Close stops the worker pool. DecodeStep and Feed on a closed backend
// return an error; Len, Capacity and Reset still work.
func (b *Backend) Close() { b.pool.Close() }

// Model returns the model the backend runs.
func (b *Backend) Model() *model.Model { return b.m }

// Cache exposes the backend's state (for tests and state comparisons).
func (b *Backend) Cache() *Cache { return b.cache }

// Pool returns the backend's worker pool, for callers that run the exported
// ops on the same workers.
func (b *Backend) Pool() *Pool { return b.pool }

// Reset empties the cache, starting a new sequence.
func (b *Backend) Reset() { b.cache.Reset() }

// Len returns the number of tokens in the cache.
func (b *Backend) Len() int { return b.cache.Len() }

// Capacity returns the most tokens the cache holds.
func (b *Backend) Capacity() int { return b.cache.Capacity() }

type job struct {
	dst []float32
	w   mat
	x   []float32
}

func (b *Backend) mv(jobs ...job) {
	bound := make([]boundJob, len(jobs))
	for i, j := range jobs {
		bound[i] = boundJob{MatVecJob{Dst: j.dst, W: j.w.t, X: j.x}, j.w.dot}
	}
	runJobs(b.pool, bound)
}

// DecodeStep appends token at position Len() and returns the logits for the
// next token ([n_vocab], a fresh slice the caller owns).
func (b *Backend) DecodeStep(token int32) ([]float32, error) {
	if err := b.step(token, true); err != nil {
		return nil, err
	}
	return append([]float32(nil), b.logits...), nil
}

// Feed appends tokens without computing their logits (sample.Feeder), as
// DecodeStep would one by one; it stops at the first token that cannot be
// appended, the ones before it kept.
func (b *Backend) Feed(tokens []int32) error {
	return b.FeedContext(context.Background(), tokens)
}

// FeedContext is Feed that stops before its next token once ctx is done,
// returning ctx's error (sample.ContextFeeder): a prompt's tokens take a
// tenth of a second or more each here, so a long one would otherwise hold
// a ^C for minutes.
func (b *Backend) FeedContext(ctx context.Context, tokens []int32) error {
	for _, t := range tokens {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.step(t, false); err != nil {
			return err
		}
	}
	return nil
}

// step appends token; with logits it also computes the next token's logits
// into b.logits.
func (b *Backend) step(token int32, logits bool) error {
	cfg := b.cfg
	if b.pool.closed { // the backend's Close closes its pool
		return errors.New("decode: cpu backend closed")
	}
	if err := b.m.CheckOpen(); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if token < 0 || int(token) >= cfg.NVocab {
		return fmt.Errorf("decode: token %d out of range [0, %d)", token, cfg.NVocab)
	}
	if err := b.cache.checkRoom(); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	pos := b.cache.n
	if err := DequantizeRow(b.x, b.embd, int(token)); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if len(b.cos) > 0 { // attention layers only
		RopeCosSin(b.cos, b.sin, pos, cfg.NRot, cfg.RopeBase)
	}
	for il := range b.layers {
		L := &b.layers[il]
		RMSNorm(b.xn, b.x, L.attnNorm, cfg.NormEps)
		if L.kind == model.LayerAttention {
			b.attention(il, L, pos)
		} else {
			b.deltaNet(il, L)
		}
		Add(b.x, b.y)

		RMSNorm(b.xn, b.x, L.ffnNorm, cfg.NormEps)
		b.mv(job{b.ffnG, L.ffnGate, b.xn}, job{b.ffnU, L.ffnUp, b.xn})
		SwiGLU(b.ffnG, b.ffnG, b.ffnU)
		b.mv(job{b.y, L.ffnDown, b.ffnG})
		Add(b.x, b.y)
	}
	if logits {
		RMSNorm(b.xn, b.x, b.outNrm, cfg.NormEps)
		b.mv(job{b.logits, b.out, b.xn})
	}
	b.cache.n++
	return nil
}

// attention: gated (qwen35) or plain (qwen3) GQA attention for one token at
// pos, writing the layer output to b.y: q (and gate), k, v = W·x_n; q_norm,
// k_norm per head; RoPE on dims [0, n_rot); k, v appended to the cache;
// softmax(q·Kᵀ/sqrt(Dh))·V; times sigmoid(gate) (qwen35); y = W_o att.
func (b *Backend) attention(il int, L *layerW, pos int) {
	cfg := b.cfg
	dh, nh, nkv := cfg.HeadDimK, cfg.NHead, cfg.NHeadKV
	qStride := dh
	if cfg.AttnOutputGate {
		qStride = 2 * dh // per head: q(Dh) then gate(Dh)
	}
	b.mv(job{b.qg, L.q, b.xn}, job{b.k, L.k, b.xn}, job{b.v, L.v, b.xn})
	RMSNormHeads(b.qg, nh, dh, qStride, L.qNorm, cfg.NormEps)
	RMSNormHeads(b.k, nkv, dh, dh, L.kNorm, cfg.NormEps)
	RoPE(b.qg, nh, qStride, b.cos, b.sin)
	RoPE(b.k, nkv, dh, b.cos, b.sin)
	for h := range nh {
		copy(b.q[h*dh:(h+1)*dh], b.qg[h*qStride:h*qStride+dh])
	}
	kRow, vRow := len(b.k), len(b.v)
	K, V := b.cache.K[il], b.cache.V[il]
	copy(K[pos*kRow:(pos+1)*kRow], b.k)
	copy(V[pos*vRow:(pos+1)*vRow], b.v)
	t := pos + 1
	Attention(b.pool, b.att, b.q, K[:t*kRow], V[:t*vRow], t, nh, nkv, dh,
		float32(1/math.Sqrt(float64(dh))), b.scores)
	if cfg.AttnOutputGate {
		for h := range nh {
			gate := b.qg[h*qStride+dh : (h+1)*qStride]
			a := b.att[h*dh : (h+1)*dh]
			for d := range a {
				a[d] *= Sigmoid(gate[d])
			}
		}
	}
	b.mv(job{b.y, L.o, b.att})
}

// deltaNet: one Gated DeltaNet step, writing the layer output to b.y:
// qkv, z, b, a = W·x_n; conv = silu(causal conv(qkv)); q, k L2-normalised per
// K head (q also by 1/sqrt(S)); per V head h, reading K head SSMKHead(h):
// beta = sigmoid(b), g = ssm_a·softplus(a + dt_bias) (ssm_a holds
// −exp(A_log)), the delta rule on state[h], then rmsnorm(o)·ssm_norm·silu(z);
// y = W_ssm_out o.
func (b *Backend) deltaNet(il int, L *layerW) {
	cfg := b.cfg
	S, Sv, Hk, Hv := cfg.SSMStateSize, cfg.SSMHeadDimV, cfg.SSMGroupCount, cfg.SSMNumVHeads
	K := cfg.SSMKeyDim()
	b.mv(job{b.qkv, L.qkv, b.xn}, job{b.z, L.gate, b.xn}, job{b.bet, L.beta, b.xn}, job{b.alp, L.alpha, b.xn})
	ConvStep(b.conv, b.cache.Conv[il], b.qkv, L.conv, cfg.SSMConvChannels(), cfg.SSMConvKernel)
	q, k, v := b.conv[:K], b.conv[K:2*K], b.conv[2*K:]
	qScale := float32(1 / math.Sqrt(float64(S)))
	for h := range Hk {
		qh := q[h*S : (h+1)*S]
		L2Norm(qh, model.L2NormEps)
		for i := range qh {
			qh[i] *= qScale
		}
		L2Norm(k[h*S:(h+1)*S], model.L2NormEps)
	}
	state := b.cache.State[il]
	b.pool.Parallel(Hv, 1, func(_, lo, hi int) {
		for h := lo; h < hi; h++ {
			hk := cfg.SSMKHead(h)
			beta := Sigmoid(b.bet[h])
			g := L.a[h] * Softplus(b.alp[h]+L.dt[h])
			oh := b.o[h*Sv : (h+1)*Sv]
			DeltaRuleStep(state[h*Sv*S:(h+1)*Sv*S], q[hk*S:(hk+1)*S], k[hk*S:(hk+1)*S], v[h*Sv:(h+1)*Sv], oh, g, beta)
			GatedRMSNorm(oh, oh, b.z[h*Sv:(h+1)*Sv], L.ssmNorm, cfg.NormEps)
		}
	})
	b.mv(job{b.y, L.ssmOut, b.o})
}
