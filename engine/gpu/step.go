package gpu

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// stepArgs are the values one step reads. On the eager path token and pos
// come from the host and the device pointers are zero; on the device-counter
// path the pointers address the counters and the host values are ignored.
type stepArgs struct {
	token       int32
	pos         int32
	dtok, dpos  cuda.DevPtr
	dtkv        cuda.DevPtr
	bucket      Bucket
	deviceToken bool // pick the next token on the device and advance the counters (DC path)
	topK        bool // select the top kernels.TopKMax logits into scratch.top (sampling)
	draw        bool // with deviceToken: draw the token from the top k (scratch.draw's parameters), not argmax
	feed        bool // host path only: append the token and stop before the logits (a prompt token before the last)
	penalty     bool // with deviceToken: the repetition penalty on the logits first (scratch.pen)
}

// enqueue launches one decode step on the engine stream. It must run on the
// engine thread (inside Engine.Do); it never synchronises, so it is what a
// CUDA graph captures.
//
// x = embed(token); per layer: x += mixer(rmsnorm(x)); x += ffn(rmsnorm(x));
// logits = W_out rmsnorm(x). Everything is f32 between kernels.
func (g *Model) enqueue(cc *Cache, a stepArgs) error {
	c := &g.cfg
	s := &cc.s
	if a.feed && a.deviceToken {
		return errors.New("a feed step takes its token and position from the host") // nothing would advance the counters
	}
	g.l2Window(cc)
	if !g.omit.embed {
		if err := g.embed(s.x, a.token, a.dtok, 1, 0); err != nil {
			return err
		}
	}
	for i := range g.ls {
		L := &g.ls[i]
		var err error
		if L.kind == model.LayerAttention {
			err = g.attention(cc, L, a)
		} else {
			err = g.deltaNet(cc, L)
		}
		if err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		if g.omit.ffn {
			continue
		}
		if err := g.ffn(cc, L); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	if a.feed {
		return nil
	}
	if g.screened(a) {
		return g.screenedToken(cc)
	}
	if g.screenedTop(a) {
		if err := g.screenedTopK(cc); err != nil {
			return err
		}
	} else if err := g.logitsTopK(cc, a); err != nil {
		return err
	}
	if !a.deviceToken {
		return nil
	}
	if a.draw { // sample_draw ends the step as argmax_final does
		return g.k.SampleDraw(s.token, cc.tokenHost.DevPtr(), s.ctr, s.top, s.draw, 0)
	}
	if err := g.k.ArgMaxPartial(s.amaxVal, s.amaxIdx, s.logits, int32(c.NVocab)); err != nil {
		return err
	}
	// argmax_final also ends the step: token, pos, t_kv and step advance.
	return g.k.ArgMaxFinal(s.token, cc.tokenHost.DevPtr(), s.ctr, s.amaxVal, s.amaxIdx, int32(c.NVocab))
}

// logitsTopK writes step a's logits (unless omitted), applies the
// penalty to them, and selects their top k where a wants it.
func (g *Model) logitsTopK(cc *Cache, a stepArgs) error {
	c := &g.cfg
	s := &cc.s
	if !g.omit.logits {
		if err := g.normed(cc, g.norm, single(g.out), mvStore, []cuda.DevPtr{s.logits}); err != nil {
			return err
		}
	}
	if a.penalty {
		if !a.deviceToken {
			return errors.New("the repetition penalty on the device appends the counters' token") // the host path has none
		}
		if err := g.k.RepeatPenalty(s.logits, s.ctr, s.pen, s.seen, int32(c.NVocab)); err != nil {
			return err
		}
	}
	if a.topK || a.draw {
		return topK(g.k, s.top, s.topScratch, s.logits, c.NVocab)
	}
	return nil
}

// l2Window gives the launches that follow the L2 window over cc's state and
// scratch where cc holds a part of the L2 for them, and none otherwise.
func (g *Model) l2Window(cc *Cache) {
	if cc.l2 != nil {
		g.e.SetL2Window(cc.hot, cc.hotBytes)
	} else {
		g.e.SetL2Window(0, 0)
	}
}

// attention is the (gated) attention mixer for one token:
// q,gate = W_q xn; q = rmsnorm(q)·q_norm; k = rmsnorm(W_k xn)·k_norm; v = W_v xn;
// RoPE(q, k); store k, v at pos (those four in one kernel); o = softmax(q Kᵀ/√Dh) V; o *= sigmoid(gate);
// x += W_o o.
func (g *Model) attention(cc *Cache, L *layerWeights, a stepArgs) error {
	s := &cc.s
	kv := cc.kv[L.attnCacheIndex]
	if !g.omit.mixerMV {
		if err := g.normed(cc, L.attnNorm, L.qkvAttn, mvStore, []cuda.DevPtr{s.qg, s.kraw, s.v}); err != nil {
			return err
		}
	}
	if err := g.attnKernels(cc, s, L, a, kv); err != nil {
		return err
	}
	if g.omit.mixerMV {
		return nil
	}
	return g.matvec(s.x, L.o, s.attn, mvAccumulate, 0)
}

// attnKernels runs the attention between the mixer's projections:
// q/k norms, RoPE and the KV store, the splits, and their combine, on the
// step's activations s.
func (g *Model) attnKernels(cc *Cache, s *scratch, L *layerWeights, a stepArgs, kv kvLayer) error {
	c := &g.cfg
	dh := int32(c.HeadDimK)
	nh, nkv := int32(c.NHead), int32(c.NHeadKV)
	qStride, gate := g.attnQ(s)
	// q/k norms, RoPE and the KV store in one launch (attn_prep.cu).
	capacity := int32(cc.capacity)
	kvHeads := uint64(c.NHeadKV) * 2 * g.kvVecBytes() // one position's K and V vectors
	fused := g.prepInSplit(a.bucket)
	if fused {
		// And that launch inside the split's (attn_prep_split.cu): one
		// node a layer fewer, the same bits.
		hpb, scale := g.splitGeom(a.bucket)
		g.note(launchShape{n: a.bucket.NSplits, unit: "splits"}, L.qNorm.ggufBytes()+L.kNorm.ggufBytes(), uint64(a.pos+2)*kvHeads)
		if err := g.k.AttnPrepSplit(AttnPrepSplitVariant{HeadDim: c.HeadDimK}, s.partMS, s.partAcc, s.qg, qStride, L.qNorm.ptr, s.kraw,
			L.kNorm.ptr, s.v, kv.k, kv.v, nh, nkv, int32(c.NRot), capacity, int32(a.bucket.NSplits), int32(hpb), a.pos+1, a.dtkv,
			a.pos, a.dpos, c.RopeBase, c.NormEps, scale); err != nil {
			return err
		}
	} else if !g.omit.attnPrep {
		g.note(launchShape{}, L.qNorm.ggufBytes()+L.kNorm.ggufBytes(), kvHeads)
		var err error
		if g.opt.KVFP8 {
			err = g.k.AttnPrepFP8(s.q, s.qg, qStride, L.qNorm.ptr, s.kraw, L.kNorm.ptr, s.v, kv.k, kv.v, kv.ks, kv.vs,
				nh, nkv, dh, int32(c.NRot), capacity, a.pos, a.dpos, c.RopeBase, c.NormEps)
		} else {
			err = g.k.AttnPrepF16(s.q, s.qg, qStride, L.qNorm.ptr, s.kraw, L.kNorm.ptr, s.v, kv.k, kv.v,
				nh, nkv, dh, int32(c.NRot), capacity, a.pos, a.dpos, c.RopeBase, c.NormEps)
		}
		if err != nil {
			return err
		}
	}
	if !g.omit.attnSplit && !fused {
		// The keys up to the step's position (a.pos: a device-counter
		// step's kernels read it from the counters, and ProfileGraphStep
		// sets it for this note).
		g.note(launchShape{n: a.bucket.NSplits, unit: "splits"}, 0, uint64(a.pos+1)*kvHeads)
		if err := g.attnSplit(cc, s, kv, a); err != nil {
			return err
		}
	}
	if g.omit.attnCombine {
		return nil
	}
	return g.k.AttnCombine(s.attn, s.partMS, s.partAcc, gate, nh, dh, int32(a.bucket.NSplits), 2*dh)
}

// prepInSplit reports whether the bucket's step prepares its token inside
// the split launch (attn_prep_split.cu): over an f16 cache with the vector
// CUDA-core splits, where each split block serves one q head, and only
// where neither part is omitted. Each block prepares its q heads after its
// wait, on the path of every block: with one head a block the launch saved
// pays (0.8B at 1k +0.4% to +0.9% on an H100), with two or four it does not
// (0.8B at 4k -0.5% to -0.8%, at 8k -1.1% to -2.3%; perf.md step 143), nor
// with a block's heads prepared at once (step 144). A function of the
// bucket, so eager and graph steps run the same kernels.
func (g *Model) prepInSplit(b Bucket) bool {
	if g.opt.KVFP8 || !b.FAVec || g.attnSplitMMA(b) || g.omit.attnPrep || g.omit.attnSplit {
		return false
	}
	hpb, _ := g.splitGeom(b)
	return hpb == 1
}

// attnSplit launches the split kernel of the bucket's variant, through the
// generated per-bucket table (kernels.Spec family attn_split): the CUDA-core
// kernels, or the tensor-core ones where attnSplitMMA takes them.
func (g *Model) attnSplit(cc *Cache, s *scratch, kv kvLayer, a stepArgs) error {
	c := &g.cfg
	v := AttnSplitVariant{HeadDim: c.HeadDimK, FP8: b2i(g.opt.KVFP8), Vec: b2i(a.bucket.FAVec), MMA: b2i(g.attnSplitMMA(a.bucket))}
	hpb, scale := g.splitGeom(a.bucket)
	return g.k.AttnSplit(v, s.partMS, s.partAcc, s.q, kv.k, kv.v, kv.ks, kv.vs,
		int32(c.NHead), int32(c.NHeadKV), int32(cc.capacity), int32(a.bucket.NSplits), int32(hpb), a.pos+1, a.dtkv, scale)
}

// attnQ is where the attention's q heads lie in s.qg (qStride floats
// apart: per head q(Dh), then its output gate(Dh) where the model gates)
// and the first head's gate (0 without one).
func (g *Model) attnQ(s *scratch) (qStride int32, gate cuda.DevPtr) {
	dh := int32(g.cfg.HeadDimK)
	if !g.cfg.AttnOutputGate {
		return dh, 0
	}
	return 2 * dh, s.qg.Add(uint64(dh) * 4)
}

// splitGeom is a split launch's q heads a block (splitHeads, for the
// bucket's kernel) and score scale, 1/sqrt(head_dim).
func (g *Model) splitGeom(b Bucket) (hpb int, scale float32) {
	c := &g.cfg
	hpb = splitHeads(b.NSplits, c.NHead, c.NHeadKV, kernels.AttnHeadsPerBlock(c.HeadDimK, b.FAVec), splitWave(g.sms))
	return hpb, float32(1 / math.Sqrt(float64(c.HeadDimK)))
}

// attnSplitMMA reports whether the bucket's splits run on the tensor cores
// (attention_mma.cu, head_dim 256 over the vector layout): by default on
// Hopper over an FP8 cache in the buckets at the split cap, where each split
// covers at least 64 keys and the CUDA-core split is bound by its work per
// key (perf.md step 68; older GPUs decode e4m3 in software there, not
// measured). MEMRA_ATTN_MMA (attnMMAFromEnv) overrides it. A function of
// the bucket, so eager and graph steps run the same kernel.
func (g *Model) attnSplitMMA(b Bucket) bool {
	if g.cfg.HeadDimK != 256 || !b.FAVec {
		return false
	}
	capped := b.NSplits >= g.maxSplits
	switch g.attnMMA {
	case mmaOff:
		return false
	case mmaAll:
		return true
	case mmaCap:
		return capped
	}
	return capped && g.opt.KVFP8 && g.hopper
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// deltaNet is the Gated DeltaNet mixer for one token (qwen35-gguf.md):
// qkv = W_qkv xn; z = W_gate xn; b = W_beta xn; a = W_alpha xn;
// y = silu(conv(qkv)); o = delta-rule(y, b, a); on = rmsnorm(o)·ssm_norm·silu(z);
// x += W_ssm_out on.
func (g *Model) deltaNet(cc *Cache, L *layerWeights) error {
	s := &cc.s
	if !g.omit.mixerMV {
		if err := g.normed(cc, L.attnNorm, L.gdnIn, mvStore, []cuda.DevPtr{s.qkv, s.z, s.b, s.a}); err != nil {
			return err
		}
	}
	if err := g.gdnKernels(cc, s, L); err != nil {
		return err
	}
	if g.omit.mixerMV {
		return nil
	}
	return g.matvec(s.x, L.ssmOut, s.on, mvAccumulate, 0)
}

// gdnKernels runs the Gated DeltaNet between the mixer's projections: the
// causal conv, the delta rule and the gated output norm, on the step's
// activations s. On sm_90 the last two are one launch (gdn_delta_normed)
// where the output projection that follows is not a K-quant's.
func (g *Model) gdnKernels(cc *Cache, s *scratch, L *layerWeights) error {
	c := &g.cfg
	st := cc.gdn[L.gdnIndex]
	C := c.SSMConvChannels()
	if !g.omit.gdnConv {
		g.note(launchShape{n: C, unit: "channels"}, L.conv.ggufBytes(), 2*uint64(C*(c.SSMConvKernel-1))*4)
		if err := g.k.GDNConv(s.y, st.conv, s.qkv, L.conv.ptr, int32(C), int32(c.SSMConvKernel)); err != nil {
			return err
		}
	}
	K := uint64(c.SSMKeyDim()) * 4
	stateBytes := 2 * uint64(c.SSMNumVHeads) * kernels.GDNState * kernels.GDNState * 4
	if g.hopper && !tiled(L.ssmOut.typ) && !g.omit.gdnDelta && !g.omit.gdnNorm {
		// The delta rule and the gated norm as one launch, a head's blocks
		// a cluster (sm_90): one node a layer fewer, the same bits. Only
		// before a CUDA-core output projection: before a tiled (K-quant)
		// one the 0.8B decoded 3-4% slower with it (Q5_K, Q6_K; run468),
		// where the 16-bit and q8_0 models gained 0.3-1.4% (run462).
		g.note(launchShape{n: c.SSMNumVHeads, unit: "heads"}, L.a.ggufBytes()+L.dt.ggufBytes()+L.ssmNorm.ggufBytes(), stateBytes)
		return g.k.GDNDeltaNormed(st.state, s.on, s.y, s.y.Add(K), s.y.Add(2*K), s.b, s.a, L.a.ptr, L.dt.ptr, L.ssmNorm.ptr, s.z,
			int32(c.SSMGroupCount), int32(c.SSMNumVHeads), 0, model.L2NormEps, c.NormEps)
	}
	if !g.omit.gdnDelta {
		g.note(launchShape{n: c.SSMNumVHeads, unit: "heads"}, L.a.ggufBytes()+L.dt.ggufBytes(), stateBytes)
		if err := g.k.GDNDelta(st.state, s.o, s.y, s.y.Add(K), s.y.Add(2*K), s.b, s.a, L.a.ptr, L.dt.ptr,
			int32(c.SSMGroupCount), int32(c.SSMNumVHeads), 0, model.L2NormEps); err != nil {
			return err
		}
	}
	if g.omit.gdnNorm {
		return nil
	}
	return g.gdnNorm(s, L)
}

// gdnNorm is the Gated DeltaNet's output norm: on = rmsnorm(o)·ssm_norm·silu(z).
func (g *Model) gdnNorm(s *scratch, L *layerWeights) error {
	c := &g.cfg
	g.note(launchShape{}, L.ssmNorm.ggufBytes(), 0)
	return g.k.RMSNormGated(s.on, s.o, L.ssmNorm.ptr, s.z, int32(c.SSMNumVHeads), int32(c.SSMHeadDimV), c.NormEps)
}

// ffn is the SwiGLU block: x += W_down (silu(W_gate h) ⊙ W_up h), h = rmsnorm(x)·ffn_norm.
// With gate and up uploaded row-interleaved, the SwiGLU is the matvec's
// epilogue; otherwise two products and the swiglu kernel.
func (g *Model) ffn(cc *Cache, L *layerWeights) error {
	c := &g.cfg
	s := &cc.s
	if L.ffnGateUp.ptr != 0 {
		if err := g.normed(cc, L.ffnNorm, single(L.ffnGateUp), mvSwiGLU, []cuda.DevPtr{s.fh}); err != nil {
			return err
		}
	} else {
		if err := g.normed(cc, L.ffnNorm, single(L.ffnGate, L.ffnUp), mvStore, []cuda.DevPtr{s.fg, s.fu}); err != nil {
			return err
		}
		if err := g.k.SwiGLU(s.fh, s.fg, s.fu, int32(c.NFF)); err != nil {
			return err
		}
	}
	return g.matvec(s.x, L.ffnDown, s.fh, mvAccumulate, 0)
}

// embed writes row token of token_embd into x as f32 (dtok ≠ 0: the token
// at dtok instead); with n > 1 the rows of the n tokens at dtok into x +
// t·xStride floats, one launch (a prompt chunk's).
func (g *Model) embed(x cuda.DevPtr, token int32, dtok cuda.DevPtr, n, xStride int32) error {
	t := g.tok
	ne, nv := int32(t.cols), int32(t.rows)
	unit := "row"
	if n > 1 {
		unit = "rows"
	}
	g.note(launchShape{t.rows, t.cols, unit}, uint64(n)*uint64(t.rowBytes()), 0)
	switch t.typ {
	case gguf.TypeF32:
		return g.k.EmbedF32(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeF16:
		return g.k.EmbedF16(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeBF16:
		return g.k.EmbedBF16(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeQ8_0:
		return g.k.EmbedQ8_0(x, t.ptr, t.scales, ne, nv, token, dtok, n, xStride)
	case gguf.TypeQ4_K:
		return g.k.EmbedQ4K(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeQ5_K:
		return g.k.EmbedQ5K(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeQ6_K:
		return g.k.EmbedQ6K(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeQ3_K:
		return g.k.EmbedQ3K(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeIQ4_XS:
		return g.k.EmbedIQ4XS(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeQ4_0:
		return g.k.EmbedQ4_0(x, t.ptr, ne, nv, token, dtok, n, xStride)
	case gguf.TypeIQ4_NL:
		return g.k.EmbedIQ4NL(x, t.ptr, ne, nv, token, dtok, n, xStride)
	}
	return fmt.Errorf("embed: %s is %s", t.name, t.typ)
}

// matvec modes (matvec.cu): store y = W x', add into y, or the SwiGLU of
// (gate, up) row pairs into y[rows/2].
const (
	mvStore      int32 = 0
	mvAccumulate int32 = 1
	mvSwiGLU     int32 = 2
)

// matvecs computes several products of the same input: one launch (with the
// given mode) per matrix of grp, a run of parts uploaded as one or a part
// alone, into its first part's output in ys (the parts' outputs lie back to
// back, so a run's rows land in each part's), or one launch for two
// (grp.mix, mix.go). With norm != 0 the kernels normalise x by RMSNorm with
// weight norm first.
func (g *Model) matvecs(grp mvGroup, mode int32, x cuda.DevPtr, ys []cuda.DevPtr, norm cuda.DevPtr) error {
	if grp.mix.on() {
		return g.matvecMix(grp, mode, x, ys, norm)
	}
	for i, w := range grp.launches() {
		if err := g.matvec(ys[grp.first[i]], w, x, mode, norm); err != nil {
			return err
		}
	}
	return nil
}

// maxFusedNormCols is the widest input the norm-fused matvec stages in shared
// memory: 48 KiB of shared memory per block without opt-in, less 1 KiB for
// the kernels' static reduction arrays (160 bytes today).
const maxFusedNormCols = (48*1024 - 1024) / 4

// fusesNorm says whether normed fuses the norm into the matvecs (the
// residual stream fits their shared memory) rather than launching it into xn.
func (g *Model) fusesNorm() bool { return g.cfg.NEmbd <= maxFusedNormCols }

// normed computes products of rmsnorm(x)·norm (x the residual stream), with
// the norm fused into the matvecs when the row fits shared memory, else as
// its own kernel into xn.
func (g *Model) normed(cc *Cache, norm dtensor, grp mvGroup, mode int32, ys []cuda.DevPtr) error {
	c := &g.cfg
	s := &cc.s
	if g.fusesNorm() {
		return g.matvecs(grp, mode, s.x, ys, norm.ptr)
	}
	g.note(launchShape{}, norm.ggufBytes(), 0)
	if err := g.k.RMSNorm(s.xn, s.x, norm.ptr, 1, int32(c.NEmbd), int32(c.NEmbd), int32(c.NEmbd), c.NormEps); err != nil {
		return err
	}
	return g.matvecs(grp, mode, s.xn, ys, 0)
}

// MatvecWide reports whether a matrix of rows rows of type t takes the
// family's wide kernel (each row split over 8 warps, 4 for q8_0): matrices of few rows,
// where one or two warps per row leave the GPU idle. The thresholds are where
// the wide and plain kernels crossed on the H200 (docs/perf.md steps 14, 42,
// 45 and 73: the K-quants gain on the 9B's 4,096-row matrices, Q5_K since its
// wide kernel's ring shrank to 2 slots, even on 4096 × 12288 and faster on
// 4096 × 4096; bf16 loses). The q8_0 and K-quant kernels stay wide up to
// 5,120 rows where the rows are longer than wideLongCols: the 27B preset's
// output and down projections (6,144 and 17,408 columns), where the plain
// kernels' 32-row units give 160 blocks of long streams to 132 SMs (step 95:
// 27B q8_0 +6.7%, Q4_K +0.9%; step 96: Q5_K +4.7%, Q6_K +4.4%). The 0.8B's
// fused 5120 × 1024 attention q|k|v lost 0.9% on the wide q8_0 kernel and
// the 2B's 5120 × 2048 was even; the 9B's 10,240- and 12,352-row q8_0
// matrices lose on it (−4.5%).
func MatvecWide(t gguf.Type, rows, cols int) bool {
	switch {
	case t == gguf.TypeF16 || t == gguf.TypeBF16:
		return rows <= 2048
	case t == gguf.TypeQ8_0 || tiled(t): // Q3_K, IQ4_XS, Q4_0, IQ4_NL: Q6_K's rule, not measured apart
		return rows <= 4096 || rows <= 5120 && cols > wideLongCols
	}
	return false
}

// wideLongCols: past 4,096 rows the wide kernels pay only on rows longer
// than this (step 95 measured 1,024 and 2,048 columns against 6,144 and
// 17,408; the bound lies between).
const wideLongCols = 4096

// MatvecWave reports whether a wide rows × cols matrix of type t takes the
// wave form of its wide kernel (kernels.MatvecKernel.Wave): q8_0 matrices of
// 2,049 to 4,096 rows, whose units fill one wave of 4 blocks an SM; with
// fewer units the 64-register code loses (docs/perf.md step 57), and with
// more, 5,120 rows' 640 units, a second wave of 112 blocks loses to the
// wide kernel (step 95). Q4_K matrices of more than 2,048 rows and more
// than q4kWaveCols columns, where the wide kernel's 4-slot ring and x's
// copy leave room for one block an SM and the wave form's 2 slots for two
// (step 74).
func MatvecWave(t gguf.Type, rows, cols int) bool {
	if rows <= 2048 || !MatvecWide(t, rows, cols) {
		return false
	}
	return t == gguf.TypeQ8_0 && rows <= 4096 || t == gguf.TypeQ4_K && cols > q4kWaveCols
}

// matvecKey is the MatvecVariant.Wide that MatvecWide and MatvecWave pick
// for a rows × cols matrix of type t: 0 plain, 1 wide, 2 the wide kernel's
// wave form.
func matvecKey(t gguf.Type, rows, cols int) int {
	switch {
	case !MatvecWide(t, rows, cols):
		return 0
	case MatvecWave(t, rows, cols):
		return 2
	}
	return 1
}

// q4kWaveCols: up to ~9,500 columns two blocks of the 4-slot wide Q4_K
// kernel fit an SM's 228 KiB (cols·4.125 + 75,776 bytes each, and 1.6 KiB
// static and reserved); the 9B's rows are 4,096 (two fit; 2 slots lost
// there, step 73) or 12,288 (one fits; 2 slots gained).
const q4kWaveCols = 8192

// matvecKernel is the kernel of variant v (kernels.MatvecKernels).
func matvecKernel(v MatvecVariant) (kernels.MatvecKernel, bool) {
	mk, ok := matvecKernels()[v]
	return mk, ok
}

// matvecKernels indexes kernels.MatvecKernels by variant, once, as
// batchKernels does the batch kernels: an eager step looks one up for each
// of its matvec launches.
var matvecKernels = sync.OnceValue(func() map[MatvecVariant]kernels.MatvecKernel {
	return indexFirst(kernels.MatvecKernels(), variantOf)
})

// indexFirst maps each key of list's items to the first item with it, as
// an in-order search of list would find it.
func indexFirst[K comparable, V any](list []V, key func(V) K) map[K]V {
	m := make(map[K]V, len(list))
	for _, v := range list {
		k := key(v)
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// mvRoom is, per tensor-core matvec kernel, the dynamic shared memory a
// block of it may take on the GPU: what the GPU (or MEMRA_SHARED_LIMIT)
// allows a block, less the kernel's static arrays.
type mvRoom map[MatvecVariant]int

// variantOf is kernel mk's variant key.
func variantOf(mk kernels.MatvecKernel) MatvecVariant {
	return MatvecVariant{GgmlType: mk.GgmlType, Wide: mk.WideKey(), Lean: b2i(mk.Lean)}
}

// leanOf is the lean form of a tensor-core kernel's variant v: the wide
// one's for the wave form, whose sums are the wide kernel's.
func leanOf(v MatvecVariant) MatvecVariant {
	return MatvecVariant{GgmlType: v.GgmlType, Wide: min(v.Wide, 1), Lean: 1}
}

// variant is the kernel a matrix of type t and cols columns takes, given
// key (its MatvecVariant.Wide): the usual one where its shared memory at
// cols fits what the GPU allows, else the form with the same sums (same
// type and split of a row, the ring not entering the sums) and the most
// ring slots, fewer than the usual one's, that fits: for the wide Q4_K
// kernel its wave form, else the lean form (kernels.MatvecKernel.Lean, one
// slot a warp). ok is false where none fits.
func (r mvRoom) variant(t gguf.Type, key, cols int) (v MatvecVariant, ok bool) {
	v, _, ok = r.pick(t, key, cols)
	return v, ok
}

// pick is variant with the kernel it names (the zero MatvecKernel where t
// has no kernel of that key).
func (r mvRoom) pick(t gguf.Type, key, cols int) (MatvecVariant, kernels.MatvecKernel, bool) {
	v := MatvecVariant{GgmlType: int(t), Wide: key}
	usual, found := matvecKernel(v)
	if !found || !usual.TensorCore || usual.Shared(cols, false) <= r[v] {
		return v, usual, true
	}
	best := kernels.MatvecKernel{}
	for _, mk := range kernels.MatvecKernels() {
		if mk.GgmlType == v.GgmlType && mk.Wide == usual.Wide && mk.Ring < usual.Ring && mk.Ring > best.Ring &&
			mk.Shared(cols, false) <= r[variantOf(mk)] {
			best = mk
		}
	}
	if best.Ring == 0 {
		lean, _ := matvecKernel(leanOf(v))
		return leanOf(v), lean, false
	}
	return variantOf(best), best, true
}

// matvecUnits is the number of row units of a rows-row matrix in kernel v
// (kernels.MatvecKernels): the grid that gives every block one unit.
func matvecUnits(v MatvecVariant, rows int) int {
	mk, _ := matvecKernel(v)
	return kernelUnits(mk, rows)
}

// kernelUnits is matvecUnits for kernel mk (the zero MatvecKernel: none).
func kernelUnits(mk kernels.MatvecKernel, rows int) int {
	if mk.RowsPerBlock == 0 {
		return 1 // no such kernel: Matvec reports the variant
	}
	return (rows + mk.RowsPerBlock - 1) / mk.RowsPerBlock
}

// normArgs is a matvec's xnorm argument for the norm weight norm (0: none)
// of a cols-column input, and the bytes that weight adds to the launch's.
func normArgs(norm cuda.DevPtr, cols int) (xnorm int32, bytes uint64) {
	if norm == 0 {
		return 0, 0
	}
	return 1, uint64(cols) * 4 // f32 like every norm (model.Load checks)
}

// tensorCoreAligned checks the inputs of a tensor-core matvec: the engine's
// buffers are 256-byte aligned, and a view that is not would make the
// kernel's 16-byte loads of x fault.
func tensorCoreAligned(x, norm cuda.DevPtr) error {
	if x%16 != 0 || norm%16 != 0 {
		return fmt.Errorf("the tensor-core matvec needs x (%#x) and the norm weight (%#x) 16-byte aligned", x, norm)
	}
	return nil
}

// matvec computes y = W x' (mode mvStore), y += W x' (mvAccumulate) or the
// SwiGLU of row pairs (mvSwiGLU) with the kernel for W's type and shape,
// where x' = x, or rmsnorm(x)·norm when norm != 0.
func (g *Model) matvec(y cuda.DevPtr, w dtensor, x cuda.DevPtr, mode int32, norm cuda.DevPtr) error {
	xnorm, normBytes := normArgs(norm, w.cols)
	bytes := w.ggufBytes() + normBytes
	v, mk, _ := g.mvRoom.pick(w.typ, w.wideKey(), w.cols) // none fits: Load refused the model; no kernel: Matvec reports the variant
	blocks := kernelUnits(mk, w.rows)
	if mk.TensorCore {
		if err := tensorCoreAligned(x, norm); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
	}
	if c := g.mvBlocks[mvKey{v, mk.Shared(w.cols, xnorm != 0)}]; c > 0 && c < blocks {
		blocks = c
	}
	g.note(launchShape{w.rows, w.cols, "×"}, bytes, 0)
	if err := g.k.Matvec(v, y, w.ptr, w.scales, x, int32(w.rows), int32(w.cols), mode, norm, xnorm, g.cfg.NormEps, blocks); err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	return nil
}
