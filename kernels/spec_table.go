package kernels

import (
	"fmt"
	"strings"
)

// Block sizes, mirroring the MEMRA_*_THREADS defines of common.cuh (spec_test.go
// checks each kernel's __launch_bounds__ against its Block).
const (
	ewThreads      = 256 // MEMRA_EW_THREADS
	normThreads    = 256 // MEMRA_NORM_THREADS
	mvThreads      = MatvecThreads
	ropeThreads    = 64   // MEMRA_ROPE_THREADS
	kvThreads      = 128  // MEMRA_KV_THREADS
	attnThreads    = 256  // MEMRA_ATTN_THREADS
	combineThreads = 128  // MEMRA_COMBINE_THREADS
	gdnThreads     = 128  // MEMRA_GDN_THREADS
	gdnRows        = 16   // MEMRA_GDN_ROWS: state rows per delta-rule block
	argmaxThreads  = 256  // MEMRA_ARGMAX_THREADS
	ctrThreads     = 32   // MEMRA_CTR_THREADS
	topkThreads    = 1024 // MEMRA_TOPK_THREADS
	drawThreads    = 32   // MEMRA_DRAW_THREADS
	penaltyThreads = 256  // MEMRA_PENALTY_THREADS
)

// GDNState is the Gated DeltaNet head dim the kernels are built for
// (MEMRA_GDN_S): the K head dim (ssm.state_size) and the V head dim, the
// state [H_v][GDNState][GDNState] f32.
const GDNState = 128

// ArgmaxChunk is how many logits one argmax_partial block reduces
// (MEMRA_ARGMAX_CHUNK): the kernel's grid and the host's count of partials.
const ArgmaxChunk = 8192

// ScreenTopChunk is how many rows one logits_screen_top block takes: a
// quarter of an argmax chunk, so that a sampled step's few hundred
// candidates' sums spread over more SMs (docs/perf.md step 134).
const ScreenTopChunk = 2048

// blocksFor is the grid expression of one block per per items of n (an
// expression): ceil(n/per).
func blocksFor(n string, per int) string { return fmt.Sprintf("(%s+%d)/%d", n, per-1, per) }

// screenKernel is one of logits_screen.cu's kernels over a 16-bit logits
// matrix of type typ ("bf16", "f16"; the kernels of a pair differ only in
// the weights' conversion): verify (a greedy step's argmax) or top (a
// sampled step's top k). The verify's blocks are argmax chunks, the top's
// ScreenTopChunk rows.
func screenKernel(kind, typ, doc string) Kernel {
	out := []Param{param("part_val", Ptr), param("part_idx", Ptr), param("exact", Ptr)}
	lim, chunk := param("part_lo", Ptr), ArgmaxChunk
	if kind == "top" {
		out, lim, chunk = []Param{param("top", Ptr), param("list", Ptr), param("done", Ptr), param("exact", Ptr)}, param("part_top", Ptr), ScreenTopChunk
	}
	return Kernel{
		Name: "logits_screen_" + kind + "_" + typ, File: "logits_screen.cu", Doc: doc,
		Params: append(out, param("a", Ptr), param("c", Ptr), lim,
			param("W", Ptr), param("x", Ptr), param("norm_w", Ptr), param("xnorm", I32), param("eps", F32), param("n", I32), param("cols", I32)),
		Block: [3]int{mvThreads, 1, 1}, Grid: [3]string{blocksFor("n", chunk), "1", "1"}, Shared: "xnorm * cols * 4",
	}
}

// Top-k selection (topk.cu): MEMRA_TOPK_SLICE pairs sorted per block, the
// first MEMRA_TOPK_MAX of each kept; TopKMax is the largest k served.
const (
	TopKSlice = 4096
	TopKMax   = 64
)

// The sampling parameters sample_draw reads (struct memra_draw, draw.cu):
// DrawParamsBytes in device memory, fields at these byte offsets. Seed and
// Index are uint64, K int32, the rest float32.
const (
	DrawParamsBytes = 32
	DrawSeed        = 0
	DrawIndex       = 8
	DrawK           = 16
	DrawTemperature = 20
	DrawTopP        = 24
	DrawMinP        = 28
)

// Q8LanePairs is how many lane pairs split a row in matvec_q8_0_wide
// (MEMRA_Q8_LANE_PAIRS). That kernel reads a row's q8_0 scales in lane
// order: pair j's, blocks j, j + 64, j + 128, ..., side by side, so one
// 4-byte load serves a trip of two chunks (matvec.cu memra_q8_lane_layout).
const Q8LanePairs = 64

// Q8LaneLayout is the lane order of a row of cols q8_0 values: trips per
// pair T = ceil(cols/32 / Q8LanePairs), tp = T rounded up to even (1 when T
// is 1), and the f16 scales between rows (stride: Q8LanePairs·tp, or cols/32
// when T is 1, where the order is the plain one); the padding is zero.
func Q8LaneLayout(cols int) (tp, stride int) {
	nb := cols / 32
	trips := (nb + Q8LanePairs - 1) / Q8LanePairs
	if trips <= 1 {
		return 1, nb
	}
	tp = (trips + 1) &^ 1
	return tp, Q8LanePairs * tp
}

// Q8LaneIndex is where block b's scale lies in a lane-ordered row.
func Q8LaneIndex(b, tp int) int { return b%Q8LanePairs*tp + b/Q8LanePairs }

// Q8LaneOrder writes one row's f16 scales, plain (cols/32 of them, 2 bytes
// each), into dst in lane order (2·stride bytes of Q8LaneLayout); dst's
// padding is zeroed.
func Q8LaneOrder(dst, plain []byte, cols int) {
	tp, _ := Q8LaneLayout(cols)
	clear(dst)
	for b := range cols / 32 {
		i := Q8LaneIndex(b, tp)
		dst[2*i], dst[2*i+1] = plain[2*b], plain[2*b+1]
	}
}

// Q8PlainOrder is Q8LaneOrder's inverse.
func Q8PlainOrder(dst, lane []byte, cols int) {
	tp, _ := Q8LaneLayout(cols)
	for b := range cols / 32 {
		i := Q8LaneIndex(b, tp)
		dst[2*b], dst[2*b+1] = lane[2*i], lane[2*i+1]
	}
}

// The repetition penalty's state (struct memra_penalty, penalty.cu):
// PenaltyBytes in device memory; Penalty float32, Window and Stamp int32,
// N int64 (tokens appended), then the ring of PenaltyMaxWindow int32.
const (
	PenaltyMaxWindow = 4096 // MEMRA_PENALTY_MAX_WINDOW
	PenaltyBytes     = 24 + 4*PenaltyMaxWindow
	PenaltyPenalty   = 0
	PenaltyWindow    = 4
	PenaltyN         = 8
	PenaltyStamp     = 16
	PenaltyRing      = 24
)

// AttnHeadDims are the head dims the attention split kernels are built for.
var attnHeadDims = []int{64, 128, 256}

// CountersBytes is the size of struct memra_counters in device memory:
// int32 {token, pos, t_kv, step} at byte offsets 0, 4, 8, 12.
const CountersBytes = 16

// NoToken is what argmax_final and sample_draw write as the step's token
// (out[0], the 4 bytes read back) when every logit is NaN; the counters'
// token then gets 0 (MEMRA_NO_TOKEN, common.cuh's memra_end_step).
const NoToken = -1

// Byte offsets of the fields of struct memra_counters (common.cuh).
const (
	CounterToken = 0
	CounterPos   = 4
	CounterTKV   = 8
	CounterStep  = 12
)

// AttnSplitName returns the split kernel for a head dim, KV type and variant:
// attn_split_[vec_]{f16,fp8}_d{64,128,256} on the CUDA cores, and with mma
// attention_mma.cu's attn_split_mma_{f16,fp8}_d256 on the tensor cores,
// which exist for head dim 256 over the vector layout only.
func AttnSplitName(headDim int, fp8, vec, mma bool) (string, error) {
	ok := false
	for _, d := range attnHeadDims {
		ok = ok || d == headDim
	}
	if !ok {
		return "", fmt.Errorf("attention: head_dim %d has no kernel (built for %v)", headDim, attnHeadDims)
	}
	kv := "f16"
	if fp8 {
		kv = "fp8"
	}
	switch {
	case mma && (headDim != attnMMAHeadDim || !vec):
		return "", fmt.Errorf("attention: the tensor-core split is built for head_dim %d over the vector layout, not head_dim %d (vector %v)", attnMMAHeadDim, headDim, vec)
	case mma:
		kv = "mma_" + kv
	case vec:
		kv = "vec_" + kv
	}
	return fmt.Sprintf("attn_split_%s_d%d", kv, headDim), nil
}

// attnMMAHeadDim is the one head dim attention_mma.cu's splits are built for.
const attnMMAHeadDim = 256

// AttnSplitMMABlocksPerSM is how many tensor-core split blocks fit an SM:
// one (186 registers over e4m3, 238 over f16; docs/perf.md step 68), so at
// the split cap they run in two waves of the vector kernels' one
// (TestAttnSplitResidency checks the build).
const AttnSplitMMABlocksPerSM = 1

// attnSplitKernel is the spec entry of one attn_split family member (built:
// AttnSplitName accepts it). Every member takes the same parameters (ks and
// vs, the e4m3 scales, over an fp8 cache) and grid.
func attnSplitKernel(headDim int, fp8, vec, mma bool) Kernel {
	name, _ := AttnSplitName(headDim, fp8, vec, mma) // the callers pass built variants: no error
	params := []Param{param("part_ms", Ptr), param("part_acc", Ptr), param("q", Ptr), param("kc", Ptr), param("vc", Ptr)}
	kv := "f16"
	if fp8 {
		params = append(params, param("ks", Ptr), param("vs", Ptr))
		kv = "e4m3"
	}
	params = append(params, param("n_head", I32), param("n_kv", I32), param("capacity", I32), param("n_splits", I32),
		param("hpb", I32), param("t_kv", I32), param("dt_kv", Ptr), param("scale", F32))
	file, doc := "attention.cu", fmt.Sprintf("flash-decoding split of head_dim %d over a %s KV cache: partial (max, sum, acc) per (q head, split), hpb <= %d q heads per block",
		headDim, kv, AttnHeadsPerBlock(headDim, vec))
	if mma {
		file, doc = "attention_mma.cu", fmt.Sprintf("flash-decoding split of head_dim %d over a %s KV cache on the tensor cores: partial (max, sum, acc) per (q head, split), hpb <= 4 q heads per block",
			headDim, kv)
	}
	return Kernel{
		Name: name, File: file, Doc: doc,
		Params:  params,
		Block:   [3]int{AttnSplitThreads, 1, 1},
		Grid:    [3]string{"n_kv", "n_splits", "(n_head/n_kv+hpb-1)/hpb"},
		Family:  "attn_split",
		Variant: map[string]int{"head_dim": headDim, "fp8": b2i(fp8), "vec": b2i(vec), "mma": b2i(mma)},
	}
}

// attnSplitChunkKernel is the spec entry of the chunk form of the vector
// split of a head dim and cache (attention.cu attn_split_chunk_*): the step
// kernel's parameters less dt_kv, and each token's stride, its grid the step
// launch's with one depth a token.
func attnSplitChunkKernel(headDim int, fp8 bool) Kernel {
	kv := "f16"
	params := []Param{param("part_ms", Ptr), param("part_acc", Ptr), param("q", Ptr), param("kc", Ptr), param("vc", Ptr)}
	if fp8 {
		kv = "fp8"
		params = append(params, param("ks", Ptr), param("vs", Ptr))
	}
	params = append(params, param("n_head", I32), param("n_kv", I32), param("capacity", I32), param("n_splits", I32),
		param("hpb", I32), param("t_kv", I32), param("scale", F32), param("n_tok", I32), param("q_tok", I32), param("ms_tok", I32),
		param("acc_tok", I32))
	return Kernel{
		Name: fmt.Sprintf("attn_split_chunk_%s_d%d", kv, headDim), File: "attention.cu",
		Doc: fmt.Sprintf("attn_split_vec_%s_d%d for the n_tok tokens of a prompt chunk in one bucket at t_kv, t_kv+1, ... keys: token t's q, part_ms and part_acc t*q_tok, t*ms_tok and t*acc_tok floats on",
			kv, headDim),
		Params:  params,
		Block:   [3]int{AttnSplitThreads, 1, 1},
		Grid:    [3]string{"n_kv", "n_splits", "(n_head/n_kv+hpb-1)/hpb*n_tok"},
		Family:  "attn_split_chunk",
		Variant: map[string]int{"head_dim": headDim, "fp8": b2i(fp8)},
	}
}

// attnPrepSplitKernel is the decode step's attn_prep_f16 and vector f16
// split of a head dim as one launch (attn_prep_split.cu): the split's grid,
// the position of the row it prepares from dpos as attn_prep takes it.
func attnPrepSplitKernel(headDim int) Kernel {
	return Kernel{
		Name: fmt.Sprintf("attn_prep_split_f16_d%d", headDim), File: "attn_prep_split.cu",
		Doc: fmt.Sprintf("attn_prep_f16 then attn_split_vec_f16_d%d in one launch: each block prepares its q heads, and the step's own k and v where its keys hold them; the last split's first block of each KV head stores them", headDim),
		Params: []Param{param("part_ms", Ptr), param("part_acc", Ptr), param("qg", Ptr), param("q_stride", I32), param("q_norm", Ptr),
			param("kraw", Ptr), param("k_norm", Ptr), param("vtok", Ptr), param("kc", Ptr), param("vc", Ptr), param("n_head", I32),
			param("n_kv", I32), param("n_rot", I32), param("capacity", I32), param("n_splits", I32), param("hpb", I32),
			param("t_kv", I32), param("dt_kv", Ptr), param("pos", I32), param("dpos", Ptr), param("base", F32), param("eps", F32),
			param("scale", F32)},
		Block:   [3]int{AttnSplitThreads, 1, 1},
		Grid:    [3]string{"n_kv", "n_splits", "(n_head/n_kv+hpb-1)/hpb"},
		Family:  "attn_prep_split",
		Variant: map[string]int{"head_dim": headDim},
	}
}

// AttnHeadsPerBlock is G, the query heads one attention split block serves
// (attention.cu memra_attn_geom): a lane holds PD dims of q and of the
// accumulator per head, and G*PD stays within the registers the kernel's
// residency leaves (AttnSplitBlocksPerSM): at most GM = 32/warps heads and
// G*PD <= 8*GM (8 warps: G = min(4, 32/PD)).
//
// EPL (elements a lane loads at once, 2-byte f16 or 1-byte e4m3) is 1 for
// the scalar kernels, 8 for vec_f16 and vec_fp8. LPK = min(32, headDim/EPL)
// lanes share a key.
func AttnHeadsPerBlock(headDim int, vec bool) int {
	epl := 1
	if vec {
		epl = 8
	}
	lpk := min(32, headDim/epl)
	pd := headDim / lpk
	gm := 32 / (AttnSplitThreads / 32)
	return min(gm, 8*gm/pd)
}

// AttnSplitThreads is the block size of the attention split kernels, 8 warps
// over an f16 or an e4m3 cache (docs/perf.md steps 59 and 61).
const AttnSplitThreads = attnThreads

// AttnSplitBlocksPerSM is how many attention split blocks the vector kernels
// fit on an SM at once: 2 blocks of 8 warps at up to 128 registers a thread
// (2 × 256 × 128 = the 65,536 registers of an SM) over either cache
// (TestAttnSplitResidency checks the build). The host's
// grid rules (engine/gpu maxSplits, splitHeads) size one wave by it. The
// scalar kernels may fit fewer and take more waves; every head dim built
// holds whole vectors, so only the tests run them.
const AttnSplitBlocksPerSM = 2

// MatvecThreads is the block size of every matvec kernel (MEMRA_MV_THREADS).
const MatvecThreads = 256

// MatvecKernel is one member of the matvec family.
type MatvecKernel struct {
	Name         string
	GgmlType     int  // ggml type id of W: 0 f32, 1 f16, 30 bf16, 2 q4_0, 8 q8_0, 11 q3_K, 12 q4_K, 13 q5_K, 14 q6_K, 20 iq4_nl, 23 iq4_xs
	Wide         bool // each row split over 8 warps (for matrices of few rows)
	RowsPerBlock int  // rows in one unit of a block's loop: (8/KW)*R of the template
	// TensorCore: a kernel of matvec_q4k.cu (Q4_K, Q5_K) or matvec_q6k.cu (tiled weights,
	// mma.m16n8k16), which always stages x in shared memory (cols*4 +
	// cols/8 bytes) and streams its tiles through Ring slots per warp
	// (mvring.cuh memra_mvt's S).
	TensorCore bool
	Ring       int
	// Wave: a second wide form for matrices of more than 2,048 rows
	// (gpu.MatvecWave), with more blocks an SM: q8_0's held to 4, so that
	// the 512 units of a 4,096-row matrix run in one wave (matvec_q8_0_wave,
	// up to 4,096 rows; docs/perf.md step 57); Q4_K's with a 2-slot ring, two
	// blocks an SM at 12,288 columns (matvec_q4_k_wave; steps 74 and 95). Its
	// variant key is wide = 2 (WideKey).
	Wave bool
	// Lean: a tensor-core kernel's form with one ring slot a warp
	// (matvec_lean.cu), same KW and sums, for a GPU that allows a block
	// too little shared memory for the usual kernel at a matrix's width
	// (gpu.Load picks it; sm_86 and sm_89 allow 99 KiB). Its variant key
	// is lean = 1.
	Lean bool
}

// WideKey is the kernel's "wide" variant key: 0 plain, 1 wide, 2 wave.
func (m MatvecKernel) WideKey() int {
	if m.Wave {
		return 2
	}
	return b2i(m.Wide)
}

// Bytes of one tile of 16 rows × 256 columns (kquant.cuh MEMRA_Q4T_BYTES,
// MEMRA_Q5T_BYTES, MEMRA_Q6T_BYTES, MEMRA_Q3T_BYTES, which MEMRA_IQ4T_BYTES
// equals, and MEMRA_Q40T_BYTES, which MEMRA_IQ4NLT_BYTES equals;
// engine/internal/ktile Q4K, Q5K, Q6K, Q3K, IQ4XS, Q40, IQ4NL).
const (
	q4TileBytes  = 2368
	q5TileBytes  = 2880
	q6TileBytes  = 3360
	q3TileBytes  = 2336
	q40TileBytes = 2304
)

// File is the source of the kernel.
func (m MatvecKernel) File() string {
	switch {
	case m.Lean:
		return "matvec_lean.cu"
	case m.TensorCore && m.GgmlType != 12 && m.GgmlType != 13: // all but Q4_K's and Q5_K's
		return "matvec_q6k.cu"
	case m.TensorCore:
		return "matvec_q4k.cu"
	}
	return "matvec.cu"
}

// tileBytes is the bytes of one of the kernel's tiles (tensor-core kernels).
func (m MatvecKernel) tileBytes() int {
	switch m.GgmlType {
	case 13:
		return q5TileBytes
	case 14:
		return q6TileBytes
	case 11, 23: // IQ4_XS's tile has Q3_K's shape
		return q3TileBytes
	case 2, 20: // Q4_0's and IQ4_NL's
		return q40TileBytes
	}
	return q4TileBytes
}

// Shared is the dynamic shared memory of a launch over cols columns, with or
// without the fused norm: the normalised x (cols f32) when xnorm; for the
// tensor-core kernels x split into f16 hi and lo (cols*4 bytes), the sums
// of its 32-column runs (cols/32 f32) and the 8 warps' rings of tiles, norm
// or not. The spec's Shared expression says the same (a test in engine/gpu
// compares them).
func (m MatvecKernel) Shared(cols int, xnorm bool) int {
	switch {
	case m.TensorCore:
		return cols*4 + cols/8 + m.ringBytes()
	case xnorm:
		return cols * 4
	}
	return 0
}

// LaneScales reports whether the kernel reads q8_0 scales in lane order
// (Q8LaneLayout) instead of [rows][cols/32].
func (m MatvecKernel) LaneScales() bool { return m.GgmlType == 8 && m.Wide }

func (m MatvecKernel) ringBytes() int { return MatvecThreads / 32 * m.Ring * m.tileBytes() }

func (m MatvecKernel) sharedExpr() string {
	if m.TensorCore {
		return fmt.Sprintf("cols*4 + cols/8 + %d", m.ringBytes())
	}
	return "xnorm * cols * 4"
}

// MatvecKernels lists the matvec family with the geometry of its template
// arguments: matvec.cu's memra_mv (R rows per warp group, KW warps per row)
// and mvring.cuh's memra_mvt (one 16-row tile per warp group, KW).
func MatvecKernels() []MatvecKernel {
	return []MatvecKernel{
		{"matvec_f32", 0, false, 8, false, 0, false, false},       // R4 KW4
		{"matvec_f16", 1, false, 8, false, 0, false, false},       // R4 KW4 HL1, 4 blocks an SM
		{"matvec_f16_wide", 1, true, 4, false, 0, false, false},   // R4 KW8 HL2 (92 registers: 2 blocks an SM)
		{"matvec_bf16", 30, false, 8, false, 0, false, false},     // R4 KW4 HL1, 4 blocks an SM
		{"matvec_bf16_wide", 30, true, 4, false, 0, false, false}, // R4 KW8 HL2 (92 registers: 2 blocks an SM)
		{"matvec_q8_0", 8, false, 32, false, 0, false, false},     // R4 KW1 HL1, 3 blocks an SM
		{"matvec_q8_0_wide", 8, true, 8, false, 0, false, false},  // R4 KW4 TB
		{"matvec_q8_0_wave", 8, true, 8, false, 0, true, false},   // R4 KW4, 4 blocks an SM
		{"matvec_q4_k", 12, false, 32, true, 3, false, false},     // 16-row tiles, KW4, 3 slots
		{"matvec_q4_k_wide", 12, true, 16, true, 4, false, false}, // 16-row tiles, KW8, 4 slots
		{"matvec_q4_k_wave", 12, true, 16, true, 2, true, false},  // 16-row tiles, KW8, 2 slots
		{"matvec_q5_k", 13, false, 32, true, 2, false, false},     // 16-row tiles, KW4, 2 slots
		{"matvec_q5_k_wide", 13, true, 16, true, 2, false, false}, // 16-row tiles, KW8, 2 slots
		{"matvec_q6_k", 14, false, 32, true, 2, false, false},     // 16-row tiles, KW4, 2 slots
		{"matvec_q6_k_wide", 14, true, 16, true, 2, false, false}, // 16-row tiles, KW8, 2 slots
		{"matvec_q3_k", 11, false, 32, true, 2, false, false},     // Q6_K's geometry and slots
		{"matvec_q3_k_wide", 11, true, 16, true, 2, false, false},
		{"matvec_iq4_xs", 23, false, 32, true, 2, false, false}, // Q6_K's geometry and slots
		{"matvec_iq4_xs_wide", 23, true, 16, true, 2, false, false},
		{"matvec_q4_0", 2, false, 32, true, 2, false, false}, // Q6_K's geometry and slots
		{"matvec_q4_0_wide", 2, true, 16, true, 2, false, false},
		{"matvec_iq4_nl", 20, false, 32, true, 2, false, false},
		{"matvec_iq4_nl_wide", 20, true, 16, true, 2, false, false},
		// One slot a warp, where the kernels above do not fit (matvec_lean.cu).
		{"matvec_q4_k_lean", 12, false, 32, true, 1, false, true},
		{"matvec_q4_k_wide_lean", 12, true, 16, true, 1, false, true},
		{"matvec_q5_k_lean", 13, false, 32, true, 1, false, true},
		{"matvec_q5_k_wide_lean", 13, true, 16, true, 1, false, true},
		{"matvec_q6_k_lean", 14, false, 32, true, 1, false, true},
		{"matvec_q6_k_wide_lean", 14, true, 16, true, 1, false, true},
		{"matvec_q3_k_lean", 11, false, 32, true, 1, false, true},
		{"matvec_q3_k_wide_lean", 11, true, 16, true, 1, false, true},
		{"matvec_iq4_xs_lean", 23, false, 32, true, 1, false, true},
		{"matvec_iq4_xs_wide_lean", 23, true, 16, true, 1, false, true},
		{"matvec_q4_0_lean", 2, false, 32, true, 1, false, true},
		{"matvec_q4_0_wide_lean", 2, true, 16, true, 1, false, true},
		{"matvec_iq4_nl_lean", 20, false, 32, true, 1, false, true},
		{"matvec_iq4_nl_wide_lean", 20, true, 16, true, 1, false, true},
	}
}

// MatvecMixKernel is one member of the matvec_mix family (matvec_mix.cu):
// a Q6_K matrix A and a Q4_K or Q5_K matrix B that read one input, in one
// launch, as llama-quantize's mixed files give a layer's input
// projections. Blocks [0, blocks_a) run A as the decode kernel A names
// would on blocks_a blocks, the others B, so each part's sums are that
// kernel's bit for bit; both parts stream through rings of MatvecMixRing
// slots (the ring does not enter the sums), so that three blocks fit an
// SM of an H100 or H200 at the presets' widths (gpu.Load takes a mixed
// launch wherever one block fits, and sizes the grid by what fits).
type MatvecMixKernel struct {
	Name string
	A, B string // the decode kernels (MatvecKernels) whose sums the parts repeat
}

// MatvecMixRing is a warp's ring slots in a matvec_mix launch.
const MatvecMixRing = 2

// MatvecMixKernels lists the matvec_mix family: a Q6_K part plain or wide
// beside a Q4_K or Q5_K part plain or wide (the presets' and Qwen3.5's
// Q4_K_M and Q5_K_M layers: a Gated DeltaNet layer's Q6_K attn_qkv, plain,
// beside its gate|beta|alpha, plain or wide; an attention layer's Q6_K
// attn_v, wide, beside q|k, plain; small models' both wide).
func MatvecMixKernels() []MatvecMixKernel {
	var ks []MatvecMixKernel
	for _, b := range []string{"q4_k", "q5_k"} {
		for _, wa := range []string{"", "_wide"} {
			for _, wb := range []string{"", "_wide"} {
				ks = append(ks, MatvecMixKernel{"matvec_mix_q6_k" + wa + "_" + b + wb, "matvec_q6_k" + wa, "matvec_" + b + wb})
			}
		}
	}
	return ks
}

// Parts is the decode kernels of m's parts A and B (the zero MatvecKernel
// for a name MatvecKernels lacks, which a spec test rules out).
func (m MatvecMixKernel) Parts() (a, b MatvecKernel) {
	for _, mk := range MatvecKernels() {
		switch mk.Name {
		case m.A:
			a = mk
		case m.B:
			b = mk
		}
	}
	return a, b
}

// Shared is the dynamic shared memory of a launch over cols columns: the
// staged x as the tensor-core kernels stage it, and 8 warps' rings of
// MatvecMixRing slots of the larger tile.
func (m MatvecMixKernel) Shared(cols int) int { return cols*4 + cols/8 + m.ringBytes() }

func (m MatvecMixKernel) ringBytes() int {
	a, b := m.Parts()
	return MatvecThreads / 32 * MatvecMixRing * max(a.tileBytes(), b.tileBytes())
}

// MatvecBatchTokens is the most tokens one pass of a matvec_batch launch
// serves (MEMRA_MVB_TOKENS: a lane's sums, a block's copies of x); a
// launch takes a prompt chunk of engine/gpu's prefill in passes of so many,
// a row of its grid each.
const MatvecBatchTokens = 8

// MatvecBatchKernel is one member of the matvec_batch family
// (matvec_batch.cu, matvec_batch_kq.cu): a prompt chunk's products with the
// sums of the decode kernel Of, bit for bit.
type MatvecBatchKernel struct {
	Name     string
	GgmlType int
	Wide     bool // the wide decode kernels' split (and q8_0's lane-order scales)
	// Of names the decode kernels whose sums it repeats: same KW, same
	// scale order (TestMatvecBatchMatchesDecode compares the templates).
	Of           []string
	RowsPerBlock int  // rows in one unit of a block's loop: (8/KW)*4, the K-quants' (8/KW)*16
	Staged       bool // x copied into shared memory, the loads through the warps' rings (else x read from global memory)
	// TensorCore: a K-quant kernel of matvec_batch_kq.cu, which reads the
	// chunk's inputs as matvec_batch_kq_stage stages them (as its decode
	// kernel's blocks would) and streams the tiles through
	// MatvecBatchTileSlots slots a warp.
	TensorCore bool
	// Laid: x read from global memory laid out as the staged copies are
	// (matvec_batch_lay), the loads through the warps' rings: where the
	// copies would not fit in shared memory.
	Laid bool
}

// MatvecBatchKernels lists the matvec_batch family: one kernel for each
// decode kernel's type and width (the wave and lean forms' sums are the
// wide or plain ones'), and q8_0's staged and laid forms.
func MatvecBatchKernels() []MatvecBatchKernel {
	return []MatvecBatchKernel{
		{"matvec_batch_f32", 0, false, []string{"matvec_f32"}, 8, false, false, false},
		{"matvec_batch_f16", 1, false, []string{"matvec_f16"}, 16, false, false, false},
		{"matvec_batch_f16_wide", 1, true, []string{"matvec_f16_wide"}, 4, false, false, false},
		{"matvec_batch_bf16", 30, false, []string{"matvec_bf16"}, 16, false, false, false},
		{"matvec_batch_bf16_wide", 30, true, []string{"matvec_bf16_wide"}, 4, false, false, false},
		{"matvec_batch_q8_0", 8, false, []string{"matvec_q8_0"}, 32, false, false, false},
		{"matvec_batch_q8_0_wide", 8, true, []string{"matvec_q8_0_wide", "matvec_q8_0_wave"}, 8, false, false, false},
		{"matvec_batch_q8_0_staged", 8, false, []string{"matvec_q8_0"}, 32, true, false, false},
		{"matvec_batch_q8_0_wide_staged", 8, true, []string{"matvec_q8_0_wide", "matvec_q8_0_wave"}, 8, true, false, false},
		{"matvec_batch_q8_0_laid", 8, false, []string{"matvec_q8_0"}, 32, false, false, true},
		{"matvec_batch_q8_0_wide_laid", 8, true, []string{"matvec_q8_0_wide", "matvec_q8_0_wave"}, 8, false, false, true},
		{"matvec_batch_q4_k", 12, false, []string{"matvec_q4_k", "matvec_q4_k_lean"}, 32, false, true, false},
		{"matvec_batch_q4_k_wide", 12, true, []string{"matvec_q4_k_wide", "matvec_q4_k_wave", "matvec_q4_k_wide_lean"}, 16, false, true, false},
		{"matvec_batch_q5_k", 13, false, []string{"matvec_q5_k", "matvec_q5_k_lean"}, 32, false, true, false},
		{"matvec_batch_q5_k_wide", 13, true, []string{"matvec_q5_k_wide", "matvec_q5_k_wide_lean"}, 16, false, true, false},
		{"matvec_batch_q6_k", 14, false, []string{"matvec_q6_k", "matvec_q6_k_lean"}, 32, false, true, false},
		{"matvec_batch_q6_k_wide", 14, true, []string{"matvec_q6_k_wide", "matvec_q6_k_wide_lean"}, 16, false, true, false},
		{"matvec_batch_q3_k", 11, false, []string{"matvec_q3_k", "matvec_q3_k_lean"}, 32, false, true, false},
		{"matvec_batch_q3_k_wide", 11, true, []string{"matvec_q3_k_wide", "matvec_q3_k_wide_lean"}, 16, false, true, false},
		{"matvec_batch_iq4_xs", 23, false, []string{"matvec_iq4_xs", "matvec_iq4_xs_lean"}, 32, false, true, false},
		{"matvec_batch_iq4_xs_wide", 23, true, []string{"matvec_iq4_xs_wide", "matvec_iq4_xs_wide_lean"}, 16, false, true, false},
		{"matvec_batch_q4_0", 2, false, []string{"matvec_q4_0", "matvec_q4_0_lean"}, 32, false, true, false},
		{"matvec_batch_q4_0_wide", 2, true, []string{"matvec_q4_0_wide", "matvec_q4_0_wide_lean"}, 16, false, true, false},
		{"matvec_batch_iq4_nl", 20, false, []string{"matvec_iq4_nl", "matvec_iq4_nl_lean"}, 32, false, true, false},
		{"matvec_batch_iq4_nl_wide", 20, true, []string{"matvec_iq4_nl_wide", "matvec_iq4_nl_wide_lean"}, 16, false, true, false},
	}
}

// MatvecBatchTileSlots is a warp's ring slots in a K-quant matvec_batch
// launch (MEMRA_MVBK_SLOTS): the fewest a ring takes, so that two blocks
// fit an SM.
const MatvecBatchTileSlots = 2

// KQStageFloats is the floats of one token's staged copy of cols columns
// (matvec_batch_kq_stage): x' split into hi and lo f16 (cols floats), the
// sums of its 32-column runs and its 2^-k. The stage kernel takes cols*4
// bytes of dynamic shared memory for Q6_K's layout.
func KQStageFloats(cols int) int { return cols + cols/32 + 1 }

// MatvecBatchSlots is a warp's ring slots in a staged matvec_batch launch
// (MEMRA_MVB_SLOTS): its weight loads stream SLOTS - 1 items ahead.
const MatvecBatchSlots = 4

// Shared is the dynamic shared memory of a launch over n tokens of cols
// columns: a staged kernel's rings and then every token's copy of x (a
// pass's: up to MatvecBatchTokens); a
// K-quant or laid kernel's rings; none for the others.
func (m MatvecBatchKernel) Shared(n, cols int) int {
	switch {
	case m.TensorCore, m.Laid:
		return m.Ring()
	case m.Staged:
		return m.Ring() + min(n, MatvecBatchTokens)*cols*4
	}
	return 0
}

// Ring is the bytes of a kernel's rings: a staged or laid kernel's
// (matvec_batch.cu memra_mvb_ring_geom: per warp MatvecBatchSlots slots of
// the lanes' 16-byte q8_0 loads of 4 rows and a 4-byte word each for its
// scale), a K-quant kernel's (per warp MatvecBatchTileSlots tiles); 0 for
// the others.
func (m MatvecBatchKernel) Ring() int {
	switch {
	case m.TensorCore:
		return MatvecThreads / 32 * MatvecBatchTileSlots * (MatvecKernel{GgmlType: m.GgmlType}).tileBytes()
	case m.Staged, m.Laid:
		return MatvecThreads / 32 * MatvecBatchSlots * mvbSlot
	}
	return 0
}

// mvbSlot is a ring slot's bytes (MEMRA_MVB_SLOT): 4 rows × 32 lanes × 16
// bytes of quants and 4 × 32 scale words.
const mvbSlot = 4*32*16 + 4*32*4

// matvecWhat names a matvec kernel's weight layout for its doc line.
func matvecWhat(ggmlType int) string {
	switch ggmlType {
	case 0:
		return "f32"
	case 1:
		return "f16"
	case 30:
		return "bf16"
	case 8:
		return "q8_0 (quants W, scales S: repacked)"
	case 12:
		return "q4_K (16-row tiles, engine/internal/ktile)"
	case 13:
		return "q5_K (16-row tiles, engine/internal/ktile)"
	case 14:
		return "q6_K (16-row tiles, engine/internal/ktile)"
	case 11:
		return "q3_K (16-row tiles, engine/internal/ktile)"
	case 23:
		return "iq4_xs (16-row tiles, engine/internal/ktile)"
	case 2:
		return "q4_0 (16-row tiles, engine/internal/ktile)"
	case 20:
		return "iq4_nl (16-row tiles, engine/internal/ktile)"
	}
	return fmt.Sprintf("ggml type %d", ggmlType)
}

// matvecSide reports whether a matvec kernel or embedding table of ggml
// type t takes the side array S: q8_0's block scales.
func matvecSide(t int) bool { return t == 8 }

func param(name string, kind ParamKind) Param { return Param{Name: name, Kind: kind} }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Spec lists every extern "C" kernel of the fatbin with its parameters in
// signature order and its launch geometry. gen/ turns it into typed
// launchers; spec_test.go checks it against the .cu sources.
func Spec() []Kernel {
	one := "1"
	var ks []Kernel

	for _, t := range []string{"f32", "f16", "bf16", "q8_0", "q4_k", "q5_k", "q6_k", "q3_k", "iq4_xs", "q4_0", "iq4_nl"} {
		ps := []Param{param("x", Ptr), param("table", Ptr)}
		if t == "q8_0" { // repacked: f16 block scales in scales
			ps = append(ps, param("scales", Ptr))
		}
		ks = append(ks, Kernel{
			Name: "embed_" + t, File: "embed.cu",
			Doc: "x_t[n_embd] f32 = row token (dtoken ? dtoken[t] : token) of a " + t + " embedding table for the n tokens t, x_t = x + t*x_stride",
			Params: append(ps, param("n_embd", I32), param("n_vocab", I32),
				param("token", I32), param("dtoken", Ptr), param("n", I32), param("x_stride", I32)),
			Block: [3]int{ewThreads, 1, 1}, Grid: [3]string{blocksFor("n_embd", ewThreads), "n", one},
		})
	}

	ks = append(ks,
		Kernel{
			Name: "rmsnorm", File: "rmsnorm.cu",
			Doc: "out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w for rows strided rows of n",
			Params: []Param{param("out", Ptr), param("x", Ptr), param("w", Ptr), param("rows", I32), param("n", I32),
				param("x_stride", I32), param("out_stride", I32), param("eps", F32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"rows", one, one},
		},
		Kernel{
			Name: "rmsnorm_gated", File: "rmsnorm.cu",
			Doc: "out[r] = rmsnorm(x[r]) * w * silu(z[r]) (Gated DeltaNet output norm)",
			Params: []Param{param("out", Ptr), param("x", Ptr), param("w", Ptr), param("z", Ptr), param("rows", I32), param("n", I32),
				param("eps", F32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"rows", one, one},
		},
		Kernel{
			Name: "rmsnorm_gated_chunk", File: "rmsnorm.cu",
			Doc: "rmsnorm_gated for the n_tok tokens of a prompt chunk, token t's out, x and z t*out_stride, t*x_stride and t*z_stride floats on",
			Params: []Param{param("out", Ptr), param("x", Ptr), param("w", Ptr), param("z", Ptr), param("rows", I32), param("n", I32),
				param("eps", F32), param("n_tok", I32), param("out_stride", I32), param("x_stride", I32), param("z_stride", I32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"rows", "n_tok", one},
		},
	)

	// The matvec family (matvec.cu; MatvecKernels). Every block loops over
	// row units (unit = blockIdx.x, += gridDim.x), so the caller sizes the
	// grid: one block per unit, or fewer (the resident blocks the GPU
	// holds) so that each block's prologue is paid once.
	for _, m := range MatvecKernels() {
		ps := []Param{param("y", Ptr), param("W", Ptr)}
		what := matvecWhat(m.GgmlType)
		if matvecSide(m.GgmlType) {
			ps = append(ps, param("S", Ptr))
		}
		ps = append(ps, param("x", Ptr), param("rows", I32), param("cols", I32), param("mode", I32),
			param("norm_w", Ptr), param("xnorm", I32), param("eps", F32))
		ks = append(ks, Kernel{
			Name: m.Name, File: m.File(),
			Doc: "y (+)= W x' or the SwiGLU of row pairs (mode 0/1/2), W [rows][cols] " + what +
				fmt.Sprintf(", x' = x or, with xnorm, rmsnorm(x)*norm_w; blocks loop over units of %d rows", m.RowsPerBlock),
			Params: ps,
			Dims:   []string{"blocks"},
			Block:  [3]int{mvThreads, 1, 1}, Grid: [3]string{"blocks", one, one},
			Shared:  m.sharedExpr(),
			Family:  "matvec",
			Variant: map[string]int{"ggml_type": m.GgmlType, "wide": m.WideKey(), "lean": b2i(m.Lean)},
		})
	}

	// The matvec_mix family (matvec_mix.cu; MatvecMixKernels): two matrices
	// of different K-quant types that read one input, the grid split
	// between them by the caller (blocks_a for A, the rest for B).
	for _, m := range MatvecMixKernels() {
		a, b := m.Parts()
		ks = append(ks, Kernel{
			Name: m.Name, File: "matvec_mix.cu",
			Doc: fmt.Sprintf("ya (+)= Wa x' on blocks [0, blocks_a) as %s, yb (+)= Wb x' on the others as %s (mode 0/1), "+
				"Wa [rows_a][cols] %s, Wb [rows_b][cols] %s, x' = x or, with xnorm, rmsnorm(x)*norm_w", m.A, m.B,
				matvecWhat(a.GgmlType), matvecWhat(b.GgmlType)),
			Params: []Param{param("ya", Ptr), param("Wa", Ptr), param("rows_a", I32), param("blocks_a", I32), param("yb", Ptr),
				param("Wb", Ptr), param("rows_b", I32), param("x", Ptr), param("cols", I32), param("mode", I32),
				param("norm_w", Ptr), param("xnorm", I32), param("eps", F32)},
			Dims:  []string{"blocks"},
			Block: [3]int{mvThreads, 1, 1}, Grid: [3]string{"blocks", one, one},
			Shared:  fmt.Sprintf("cols*4 + cols/8 + %d", m.ringBytes()),
			Family:  "matvec_mix",
			Variant: map[string]int{"type_a": a.GgmlType, "wide_a": a.WideKey(), "type_b": b.GgmlType, "wide_b": b.WideKey()},
		})
	}

	// The matvec_batch family (matvec_batch.cu; MatvecBatchKernels): the
	// matvec family's products for n tokens at once, x and y strided.
	for _, m := range MatvecBatchKernels() {
		ps := []Param{param("y", Ptr), param("W", Ptr)}
		if matvecSide(m.GgmlType) {
			ps = append(ps, param("S", Ptr))
		}
		ps = append(ps, param("x", Ptr), param("rows", I32), param("cols", I32), param("mode", I32),
			param("n", I32), param("x_stride", I32), param("y_stride", I32))
		from, shared := "x_t read from global memory", ""
		switch {
		case m.TensorCore:
			from = "x_t the staged copies of matvec_batch_kq_stage, the tiles through per-warp rings"
			shared = fmt.Sprint(m.Ring())
		case m.Staged:
			from, shared = "x_t copied into shared memory, the loads through per-warp rings", fmt.Sprintf("%d + min(n, %d)*cols*4", m.Ring(), MatvecBatchTokens)
		case m.Laid:
			from, shared = "x_t laid out by matvec_batch_lay, the loads through per-warp rings", fmt.Sprint(m.Ring())
		}
		file := "matvec_batch.cu"
		if m.TensorCore {
			file = "matvec_batch_kq.cu"
		}
		ks = append(ks, Kernel{
			Name: m.Name, File: file,
			Doc: "y_t (+)= W x_t for tokens t < n (mode 0/1/2 as the matvec family; " + from + "), W [rows][cols] " + matvecWhat(m.GgmlType) +
				fmt.Sprintf(", x_t = x + t*x_stride, y_t = y + t*y_stride; sums bit for bit %s's; blocks loop over units of %d rows; grid row p takes tokens %d*p on, up to %d",
					strings.Join(m.Of, "'s and "), m.RowsPerBlock, MatvecBatchTokens, MatvecBatchTokens),
			Params: ps,
			Dims:   []string{"blocks"},
			Block:  [3]int{mvThreads, 1, 1}, Grid: [3]string{"blocks", blocksFor("n", MatvecBatchTokens), one},
			Shared:  shared,
			Family:  "matvec_batch",
			Variant: map[string]int{"ggml_type": m.GgmlType, "wide": b2i(m.Wide), "staged": b2i(m.Staged), "laid": b2i(m.Laid)},
		})
	}

	ks = append(ks, Kernel{
		Name: "matvec_batch_kq_stage", File: "matvec_batch_kq.cu",
		Doc: "xk_t = x'_t split as the K-quant matvecs' blocks stage it (x' = x_t or, with xnorm, rmsnorm(x_t)*norm_w; with q6 in Q6_K's layout), its run sums and 2^-k, for tokens t < n, a block a token",
		Params: []Param{param("xk", Ptr), param("x", Ptr), param("norm_w", Ptr), param("n", I32), param("cols", I32),
			param("x_stride", I32), param("xk_stride", I32), param("xnorm", I32), param("eps", F32), param("q6", I32)},
		Block: [3]int{mvThreads, 1, 1}, Grid: [3]string{"n", one, one},
		Shared: "q6 * cols * 4",
	})
	ks = append(ks, Kernel{
		Name: "matvec_batch_lay", File: "matvec_batch.cu",
		Doc: "xl_t = x_t laid out as q8_0's staged copies (memra_xs_slot) for tokens t < n, a block a token; cols % 16 == 0",
		Params: []Param{param("xl", Ptr), param("x", Ptr), param("n", I32), param("cols", I32), param("x_stride", I32),
			param("xl_stride", I32)},
		Block: [3]int{mvThreads, 1, 1}, Grid: [3]string{"n", one, one},
	})
	ks = append(ks, Kernel{
		Name: "matvec_batch_norm", File: "matvec_batch.cu",
		Doc: "xn_t = rmsnorm(x_t)*norm_w for tokens t < n with the matvec kernels' fused norm (memra_mv_input), a block a token",
		Params: []Param{param("xn", Ptr), param("x", Ptr), param("norm_w", Ptr), param("n", I32), param("cols", I32),
			param("x_stride", I32), param("xn_stride", I32), param("eps", F32)},
		Block: [3]int{mvThreads, 1, 1}, Grid: [3]string{"n", one, one},
	})

	ks = append(ks,
		Kernel{
			Name: "rope_neox", File: "rope.cu",
			Doc: "in-place NEOX rope of x [heads][head_dim] on dims [0, n_rot) at pos (dpos ? *dpos : pos)",
			Params: []Param{param("x", Ptr), param("heads", I32), param("head_dim", I32), param("n_rot", I32),
				param("pos", I32), param("dpos", Ptr), param("base", F32)},
			Block: [3]int{ropeThreads, 1, 1}, Grid: [3]string{"heads", one, one},
		},
		Kernel{
			Name: "attn_prep_f16", File: "attn_prep.cu",
			Doc: "q = rope(rmsnorm(q heads of qg)*q_norm); k = rope(rmsnorm(kraw)*k_norm); store k, v as f16 at slot pos",
			Params: []Param{param("q", Ptr), param("qg", Ptr), param("q_stride", I32), param("q_norm", Ptr), param("kraw", Ptr),
				param("k_norm", Ptr), param("v", Ptr), param("kc", Ptr), param("vc", Ptr), param("n_head", I32), param("n_kv", I32),
				param("head_dim", I32), param("n_rot", I32), param("capacity", I32), param("pos", I32), param("dpos", Ptr),
				param("base", F32), param("eps", F32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"n_head+n_kv", one, one},
		},
		Kernel{
			Name: "attn_prep_fp8", File: "attn_prep.cu",
			Doc: "attn_prep_f16 with an e4m3 cache and one f32 scale per (KV head, token)",
			Params: []Param{param("q", Ptr), param("qg", Ptr), param("q_stride", I32), param("q_norm", Ptr), param("kraw", Ptr),
				param("k_norm", Ptr), param("v", Ptr), param("kc", Ptr), param("vc", Ptr), param("kscale", Ptr), param("vscale", Ptr),
				param("n_head", I32), param("n_kv", I32), param("head_dim", I32), param("n_rot", I32), param("capacity", I32),
				param("pos", I32), param("dpos", Ptr), param("base", F32), param("eps", F32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"n_head+n_kv", one, one},
		},
		Kernel{
			Name: "attn_prep_f16_chunk", File: "attn_prep.cu",
			Doc: "attn_prep_f16 for the n_tok tokens of a prompt chunk at positions pos, pos+1, ...: token t's q t*q_tok floats on, its qg, kraw and v t*in_tok",
			Params: []Param{param("q", Ptr), param("qg", Ptr), param("q_stride", I32), param("q_norm", Ptr), param("kraw", Ptr),
				param("k_norm", Ptr), param("v", Ptr), param("kc", Ptr), param("vc", Ptr), param("n_head", I32), param("n_kv", I32),
				param("head_dim", I32), param("n_rot", I32), param("capacity", I32), param("pos", I32),
				param("base", F32), param("eps", F32), param("n_tok", I32), param("q_tok", I32), param("in_tok", I32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"n_head+n_kv", "n_tok", one},
		},
		Kernel{
			Name: "attn_prep_fp8_chunk", File: "attn_prep.cu",
			Doc: "attn_prep_fp8 for the n_tok tokens of a prompt chunk, strided as attn_prep_f16_chunk",
			Params: []Param{param("q", Ptr), param("qg", Ptr), param("q_stride", I32), param("q_norm", Ptr), param("kraw", Ptr),
				param("k_norm", Ptr), param("v", Ptr), param("kc", Ptr), param("vc", Ptr), param("kscale", Ptr), param("vscale", Ptr),
				param("n_head", I32), param("n_kv", I32), param("head_dim", I32), param("n_rot", I32), param("capacity", I32),
				param("pos", I32), param("base", F32), param("eps", F32), param("n_tok", I32), param("q_tok", I32), param("in_tok", I32)},
			Block: [3]int{normThreads, 1, 1}, Grid: [3]string{"n_head+n_kv", "n_tok", one},
		},
		Kernel{
			Name: "kv_store_f16", File: "kv_store.cu",
			Doc: "write k, v [n_kv][head_dim] as f16 into cache slot pos of [n_kv][capacity][head_dim]",
			Params: []Param{param("kc", Ptr), param("vc", Ptr), param("k", Ptr), param("v", Ptr), param("n_kv", I32),
				param("head_dim", I32), param("capacity", I32), param("pos", I32), param("dpos", Ptr)},
			Block: [3]int{kvThreads, 1, 1}, Grid: [3]string{"n_kv", one, one},
		},
		Kernel{
			Name: "kv_store_fp8", File: "kv_store.cu",
			Doc: "write k, v as e4m3 with one f32 scale (amax/448) per (kv head, token) into slot pos",
			Params: []Param{param("kc", Ptr), param("vc", Ptr), param("ks", Ptr), param("vs", Ptr), param("k", Ptr), param("v", Ptr),
				param("n_kv", I32), param("head_dim", I32), param("capacity", I32), param("pos", I32), param("dpos", Ptr)},
			Block: [3]int{kvThreads, 1, 1}, Grid: [3]string{"n_kv", one, one},
		},
	)

	for _, d := range attnHeadDims {
		for _, v := range []struct{ fp8, vec bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
			ks = append(ks, attnSplitKernel(d, v.fp8, v.vec, false))
		}
	}
	for _, d := range attnHeadDims {
		ks = append(ks, attnSplitChunkKernel(d, false), attnSplitChunkKernel(d, true))
	}
	// The tensor-core splits (attention_mma.cu): head_dim 256 over the
	// vector layout, one block an SM; in the family, so a bucket's split is
	// one table lookup whichever unit runs it.
	for _, fp8 := range []bool{false, true} {
		ks = append(ks, attnSplitKernel(attnMMAHeadDim, fp8, true, true))
	}
	for _, d := range attnHeadDims {
		ks = append(ks, attnPrepSplitKernel(d))
	}

	ks = append(ks,
		Kernel{
			Name: "attn_combine", File: "attention.cu",
			Doc: "merge the n_splits partials of each q head (32 dims per block); out *= sigmoid(gate) when gate != 0",
			Params: []Param{param("out", Ptr), param("part_ms", Ptr), param("part_acc", Ptr), param("gate", Ptr), param("n_head", I32),
				param("head_dim", I32), param("n_splits", I32), param("gate_stride", I32)},
			Block: [3]int{combineThreads, 1, 1}, Grid: [3]string{"n_head", "(head_dim+31)/32", one}, Shared: "n_splits*4",
		},
		Kernel{
			Name: "attn_combine_chunk", File: "attention.cu",
			Doc: "attn_combine for the n_tok tokens of a prompt chunk in one bucket: token t's out, part_ms, part_acc and gate t*out_tok, t*ms_tok, t*acc_tok and t*gate_tok floats on",
			Params: []Param{param("out", Ptr), param("part_ms", Ptr), param("part_acc", Ptr), param("gate", Ptr), param("n_head", I32),
				param("head_dim", I32), param("n_splits", I32), param("gate_stride", I32), param("n_tok", I32), param("out_tok", I32),
				param("ms_tok", I32), param("acc_tok", I32), param("gate_tok", I32)},
			Block: [3]int{combineThreads, 1, 1}, Grid: [3]string{"n_head", "(head_dim+31)/32", "n_tok"}, Shared: "n_splits*4",
		},
		Kernel{
			Name: "gdn_conv", File: "gdn.cu",
			Doc: "Gated DeltaNet causal conv step: y = silu(conv(state ++ x, w)), state shifted by one",
			Params: []Param{param("y", Ptr), param("state", Ptr), param("x", Ptr), param("w", Ptr), param("channels", I32),
				param("kern", I32)},
			Block: [3]int{ewThreads, 1, 1}, Grid: [3]string{blocksFor("channels", ewThreads), one, one},
		},
		Kernel{
			Name: "gdn_delta", File: "gdn.cu",
			Doc: "Gated DeltaNet delta-rule step on state [h_v][128][128] f32 held in registers: o = M q after M = decay*M + beta*(v - M k) k^T",
			Params: []Param{param("state", Ptr), param("o", Ptr), param("q", Ptr), param("k", Ptr), param("v", Ptr), param("b", Ptr),
				param("a", Ptr), param("ssm_a", Ptr), param("dt_bias", Ptr), param("h_k", I32), param("h_v", I32), param("head_map", I32),
				param("l2_eps", F32)},
			Block: [3]int{gdnThreads, 1, 1}, Grid: [3]string{"h_v", fmt.Sprintf("%d/%d", GDNState, gdnRows), one},
		},
		Kernel{
			Name: "gdn_delta_normed", File: "gdn.cu",
			Doc: "gdn_delta then rmsnorm_gated on its output in one launch, a head's 8 blocks a cluster (sm_90 only): on = rmsnorm(o) * norm_w * silu(z), o not stored",
			Params: []Param{param("state", Ptr), param("on", Ptr), param("q", Ptr), param("k", Ptr), param("v", Ptr), param("b", Ptr),
				param("a", Ptr), param("ssm_a", Ptr), param("dt_bias", Ptr), param("norm_w", Ptr), param("z", Ptr), param("h_k", I32),
				param("h_v", I32), param("head_map", I32), param("l2_eps", F32), param("eps", F32)},
			Block: [3]int{gdnThreads, 1, 1}, Grid: [3]string{"h_v", fmt.Sprintf("%d/%d", GDNState, gdnRows), one},
		},
		Kernel{
			Name: "gdn_conv_chunk", File: "gdn.cu",
			Doc: "gdn_conv for the n tokens of a prompt chunk, x_t and y_t strided, each token's sum gdn_conv's",
			Params: []Param{param("y", Ptr), param("state", Ptr), param("x", Ptr), param("w", Ptr), param("channels", I32),
				param("kern", I32), param("n", I32), param("x_stride", I32), param("y_stride", I32)},
			Block: [3]int{ewThreads, 1, 1}, Grid: [3]string{blocksFor("channels", 32), one, one},
		},
		Kernel{
			Name: "gdn_delta_chunk", File: "gdn.cu",
			Doc: "gdn_delta for the n tokens of a prompt chunk, the state's rows in registers across them, inputs and o strided",
			Params: []Param{param("state", Ptr), param("o", Ptr), param("q", Ptr), param("k", Ptr), param("v", Ptr), param("b", Ptr),
				param("a", Ptr), param("ssm_a", Ptr), param("dt_bias", Ptr), param("h_k", I32), param("h_v", I32), param("head_map", I32),
				param("l2_eps", F32), param("n", I32), param("qkv_stride", I32), param("ba_stride", I32), param("o_stride", I32)},
			Block: [3]int{gdnThreads, 1, 1}, Grid: [3]string{"h_v", fmt.Sprintf("%d/%d", GDNState, gdnRows), one},
		},
		Kernel{
			Name: "swiglu", File: "elementwise.cu",
			Doc:    "out = silu(gate) * up over n elements",
			Params: []Param{param("out", Ptr), param("gate", Ptr), param("up", Ptr), param("n", I32)},
			Block:  [3]int{ewThreads, 1, 1}, Grid: [3]string{blocksFor("n", ewThreads), one, one},
		},
		Kernel{
			Name: "add", File: "elementwise.cu",
			Doc:    "y += x over n elements",
			Params: []Param{param("y", Ptr), param("x", Ptr), param("n", I32)},
			Block:  [3]int{ewThreads, 1, 1}, Grid: [3]string{blocksFor("n", ewThreads), one, one},
		},
		Kernel{
			Name: "sigmoid_mul", File: "elementwise.cu",
			Doc:    "x[r][i] *= sigmoid(gate[r*gate_stride + i]) for rows of n",
			Params: []Param{param("x", Ptr), param("gate", Ptr), param("rows", I32), param("n", I32), param("gate_stride", I32)},
			Block:  [3]int{ewThreads, 1, 1}, Grid: [3]string{blocksFor("rows*n", ewThreads), one, one},
		},
		Kernel{
			Name: "argmax_partial", File: "argmax.cu",
			Doc:    fmt.Sprintf("per %d-logit chunk: the largest value and its lowest index", ArgmaxChunk),
			Params: []Param{param("part_val", Ptr), param("part_idx", Ptr), param("logits", Ptr), param("n", I32)},
			Block:  [3]int{argmaxThreads, 1, 1}, Grid: [3]string{blocksFor("n", ArgmaxChunk), one, one},
		},
		Kernel{
			Name: "argmax_final", File: "argmax.cu",
			Doc:    "reduce the argmax partials to out[0] (NoToken when every logit is NaN) and, when ctr != 0, end the device-counter step: token = out[0] (0 for NoToken), pos, t_kv, step + 1, and, when ring != 0, ring[pos & 1] = out[0] (the step's pos)",
			Params: []Param{param("out", Ptr), param("ring", Ptr), param("ctr", Ptr), param("part_val", Ptr), param("part_idx", Ptr), param("n", I32)},
			Block:  [3]int{argmaxThreads, 1, 1}, Grid: [3]string{one, one, one},
		},
		Kernel{
			Name: "logits_screen_bound", File: "logits_screen.cu",
			Doc: fmt.Sprintf("per %d-row chunk of a, the logits of a q8_0 copy of the logits matrix: the largest lower bound a_r - c_r·|x'|_1 on a row's exact logit (x' = x or, with xnorm, rmsnorm(x)*norm_w), and, when part_top is not null, its m largest there for a sampled step's threshold (m: at least 2·64 over the chunks, at most 64 a chunk)", ArgmaxChunk),
			Params: []Param{param("part_lo", Ptr), param("part_top", Ptr), param("a", Ptr), param("c", Ptr), param("x", Ptr), param("norm_w", Ptr), param("xnorm", I32),
				param("eps", F32), param("n", I32), param("cols", I32)},
			Block: [3]int{mvThreads, 1, 1}, Grid: [3]string{blocksFor("n", ArgmaxChunk), one, one}, Shared: "xnorm * cols * 4",
		},
		screenKernel("verify", "bf16", "per argmax chunk: the exact bf16 logits (matvec_bf16's sums) of the rows whose upper bound a_r + c_r·|x'|_1 reaches the largest lower bound, and their argmax into argmax_partial's partials (each candidate's logit into exact when not null)"),
		screenKernel("verify", "f16", "logits_screen_verify_bf16 for an f16 logits matrix (matvec_f16's sums)"),
		screenKernel("top", "bf16", "the full logits' top 64 into top, as topk_select writes it: the exact bf16 logits (logits_screen_verify's sums) of the rows whose upper bound reaches the 64th largest of logits_screen_bound's part_top, each block's best 64 of them appended to list, and the last block (counted in done, which it zeroes) merging them (each row's exact logit or -Inf into exact when not null)"),
		screenKernel("top", "f16", "logits_screen_top_bf16 for an f16 logits matrix"),
		Kernel{
			Name: "topk_select", File: "topk.cu",
			Doc:    "per 4096-pair slice of (in_v, in_i or the index): its 64 best (value descending, NaN last, ties by lower id) to out_v, out_i",
			Params: []Param{param("out_v", Ptr), param("out_i", Ptr), param("in_v", Ptr), param("in_i", Ptr), param("n", I32)},
			Block:  [3]int{topkThreads, 1, 1}, Grid: [3]string{blocksFor("n", TopKSlice), one, one},
		},
		Kernel{
			Name: "sample_draw", File: "draw.cu",
			Doc:    "draw a token from the top k (temperature, top-p, min-p; NaNs dropped; splitmix64 draw p.index, then p.index+1) into out[0] (NoToken when every logit is NaN) and, when ctr != 0, end the device-counter step as argmax_final does (ring too)",
			Params: []Param{param("out", Ptr), param("ring", Ptr), param("ctr", Ptr), param("top", Ptr), param("p", Ptr), param("trace", Ptr)},
			Block:  [3]int{drawThreads, 1, 1}, Grid: [3]string{one, one, one},
		},
		Kernel{
			Name: "repeat_penalty", File: "penalty.cu",
			Doc:    "append the counters' token to the penalty's history, then divide (positive) or multiply each distinct token's logit among its last window by the penalty",
			Params: []Param{param("logits", Ptr), param("ctr", Ptr), param("p", Ptr), param("seen", Ptr), param("n_vocab", I32)},
			Block:  [3]int{penaltyThreads, 1, 1}, Grid: [3]string{one, one, one},
		},
		Kernel{
			Name: "counters_set", File: "counters.cu",
			Doc:    "initialise the device counters {token, pos, t_kv, step = 0}",
			Params: []Param{param("ctr", Ptr), param("token", I32), param("pos", I32), param("t_kv", I32)},
			Block:  [3]int{ctrThreads, 1, 1}, Grid: [3]string{one, one, one},
		},
	)
	return ks
}
