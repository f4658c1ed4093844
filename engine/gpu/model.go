// Package gpu is memra's CUDA backend: the model's weights uploaded once in
// their GGUF types, a per-sequence device cache, and the three decode paths
// of the seed's contract: eager DecodeStep (the host passes position and
// attention length), DecodeStepDC (token, position, KV slot and t_kv live in
// device counters and are advanced by kernels), and GenerateGraph (one CUDA
// graph per attention bucket, replayed with only a 4-byte token read back).
//
// Eager and graph decoding launch the same kernels with the same geometry;
// kernels read position-like values through (value, device pointer) pairs,
// so the two paths compute the same bits.
package gpu

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/ktile"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// offByDefault reads a switch that is off unless name=1: unset or 0 is
// false, 1 true, and any other value an error naming the variable and what
// 1 means (before, "yes" or "true" read as off without a word).
func offByDefault(name, one string) (bool, error) {
	switch v := os.Getenv(name); v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want 1 (%s) or 0 or unset", name, v, one)
	}
}

// KVFP8FromEnv reports whether MEMRA_KV_FP8=1 asks for an FP8 KV cache (0
// or unset: f16).
func KVFP8FromEnv() (bool, error) { return offByDefault("MEMRA_KV_FP8", "an FP8 e4m3 KV cache") }

// FullLogitsFromEnv reports whether MEMRA_FULL_LOGITS=1 asks greedy and
// sampled steps to read the whole logits matrix (Options.FullLogits: no 8-bit copy, so
// none of its device memory).
func FullLogitsFromEnv() (bool, error) {
	return offByDefault("MEMRA_FULL_LOGITS", "greedy and sampled steps read the whole logits matrix, without its 8-bit copy")
}

// Values of MEMRA_ATTN_MMA: off, every bucket, the buckets at the split cap
// over either cache; unset, the default rule (attnSplitMMA).
const (
	mmaDefault = ""
	mmaOff     = "0"
	mmaAll     = "1"
	mmaCap     = "cap"
)

// attnMMAFromEnv reads MEMRA_ATTN_MMA, naming its values when it holds
// another.
func attnMMAFromEnv() (string, error) {
	v := os.Getenv("MEMRA_ATTN_MMA")
	switch v {
	case mmaDefault, mmaOff, mmaAll, mmaCap:
		return v, nil
	}
	return "", fmt.Errorf("MEMRA_ATTN_MMA=%q: want 0 (CUDA-core attention splits), 1 (tensor-core splits at head_dim 256) or cap (those past the split cap), or unset", v)
}

// CheckEnv returns the error Load gives for a MEMRA_ATTN_MMA, MEMRA_MIX or
// MEMRA_SHARED_LIMIT value it does not take, so that a command can refuse
// the value before it looks for a GPU: one that falls back to the CPU when
// Load fails (memra run --device auto) would otherwise run on the CPU
// because of a typo.
func CheckEnv() error {
	if _, err := attnMMAFromEnv(); err != nil {
		return err
	}
	if _, err := mixOffFromEnv(); err != nil {
		return err
	}
	_, err := sharedLimitFromEnv()
	return err
}

// Options configure the device model.
type Options struct {
	// KVFP8 stores the KV cache as e4m3 with one f32 scale per (KV head,
	// token) vector instead of f16.
	KVFP8 bool
	// Omit leaves the named parts out of every decode step (StepParts
	// lists them), so that a step with and without a part, both captured
	// as graphs, measure what the part costs where kernels overlap (bench
	// -omit). The tokens of such a step are meaningless.
	Omit []string
	// TokenFeed primes prompts one decode step per token instead of in
	// chunks (prefill.go), as models whose matrices have no batch kernel
	// always do; bench -token-feed compares the two.
	TokenFeed bool
	// EagerChunks launches each prefill chunk's kernels from the host
	// instead of replaying them as a graph (prefill.go chunkReplay): the
	// same bits; bench -eager-chunks compares the two.
	EagerChunks bool
	// PrefillChunk is the tokens a prefill chunk takes: 0 for
	// DefaultPrefillChunk, else 2 to MaxPrefillChunk (TokenFeed feeds
	// one at a time). A chunk's batch
	// products take its tokens in passes of kernels.MatvecBatchTokens
	// within one launch, and the kernels between them all at once, so a
	// longer chunk makes fewer launches a token (perf.md step 127); every
	// length leaves the same bits. bench -chunk compares lengths.
	PrefillChunk int
	// FullLogits has greedy steps and those that select the top k
	// (sampling, Session.DecodeTop) read the whole logits matrix, as before
	// docs/perf.md steps 132 and 133, instead of its 8-bit copy and the
	// rows that can win or rank (screen.go): the same tokens and top k,
	// without the copy's device memory (about half the matrix's). Only 16-bit logits matrices have
	// a copy; bench -full-logits compares the two.
	FullLogits bool
	// Fatbin, if not nil, is the kernel image loaded instead of the
	// embedded kernels.Fatbin: another build of the same sources (another
	// nvcc, other flags), so that bench -fatbin compares two builds on one
	// machine in one run. It must hold every kernel of kernels.Spec.
	Fatbin []byte
}

// The parts of a decode step that Options.Omit can leave out: the token
// embedding; each kernel between a Gated DeltaNet mixer's projections (the
// causal conv, the delta rule, the gated norm) and between an attention
// mixer's (q/k norm + RoPE + KV store, the splits, their combine); the
// mixers' input and output projections, the FFN's and the logits' matvecs,
// each with the RMSNorm and SwiGLU kernels that run beside them where the
// matvec cannot fuse them. On sm_90 the delta rule and the gated norm are
// one launch (gdn_delta_normed) before a 16-bit, f32 or q8_0 output
// projection: omitting either alone runs the other's kernel of its own in
// its place (gdn_delta, rmsnorm_gated), so the step keeps its node count,
// and only both together drop that launch. On any GPU, q/k norm + RoPE +
// KV store and the splits are one launch (attn_prep_split) over an f16
// cache with the vector CUDA-core splits where a split block serves one q
// head (the 0.8B up to 2k of context), under the same rule.
const (
	partEmbed       = "embed"
	partGDNConv     = "gdn-conv"
	partGDNDelta    = "gdn-delta"
	partGDNNorm     = "gdn-norm"
	partAttnPrep    = "attn-prep"
	partAttnSplit   = "attn-split"
	partAttnCombine = "attn-combine"
	partMixerMV     = "mixer-mv"
	partFFN         = "ffn"
	partLogits      = "logits"
)

// StepParts lists the parts Options.Omit can name, besides the groups "gdn"
// and "attn" (their three kernels each).
func StepParts() []string {
	return []string{partEmbed, partGDNConv, partGDNDelta, partGDNNorm, partAttnPrep, partAttnSplit, partAttnCombine,
		partMixerMV, partFFN, partLogits}
}

// CheckOmit reports whether Options.Omit may hold names.
func CheckOmit(names []string) error {
	_, err := omitSet(names)
	return err
}

// stepOmit is Options.Omit as the step reads it: one flag per part, so the
// eager path pays a field load, not a map lookup, per launch.
type stepOmit struct {
	embed, gdnConv, gdnDelta, gdnNorm, attnPrep, attnSplit, attnCombine, mixerMV, ffn, logits bool
}

// omitSet checks names against StepParts and the two groups.
func omitSet(names []string) (stepOmit, error) {
	var o stepOmit
	flags := map[string][]*bool{
		partEmbed: {&o.embed}, partGDNConv: {&o.gdnConv}, partGDNDelta: {&o.gdnDelta}, partGDNNorm: {&o.gdnNorm},
		partAttnPrep: {&o.attnPrep}, partAttnSplit: {&o.attnSplit}, partAttnCombine: {&o.attnCombine},
		partMixerMV: {&o.mixerMV}, partFFN: {&o.ffn}, partLogits: {&o.logits},
		"gdn":  {&o.gdnConv, &o.gdnDelta, &o.gdnNorm},
		"attn": {&o.attnPrep, &o.attnSplit, &o.attnCombine},
	}
	for _, n := range names {
		fs, ok := flags[n]
		if !ok {
			return stepOmit{}, fmt.Errorf("gpu: unknown step part %q to omit (have %s, and gdn, attn)", n, strings.Join(StepParts(), ", "))
		}
		for _, f := range fs {
			*f = true
		}
	}
	return o, nil
}

// dtensor is a weight tensor on the device, in its GGUF type. q8_0 matrices
// are split (upload.go, splitOf): ptr holds the int8 quants [rows][cols]
// and scales the f16s [rows][cols/32] (for the wide kernel's matrices in
// its lane order, kernels.Q8LaneLayout: laneScales), so rows stay 16-byte
// aligned for the matvec's vector loads; the K-quants are tiled, 16 rows × 256 columns per
// tile (upload.go tileOf, engine/internal/ktile) for the tensor-core
// matvecs. The bytes are ggml's, reordered.
type dtensor struct {
	name       string
	ptr        cuda.DevPtr
	scales     cuda.DevPtr // split types only
	typ        gguf.Type
	rows, cols int
	laneScales bool // q8_0: scales in the wide kernel's lane order (upload.go laneScales)
}

// layerWeights holds one layer's device tensors; fields of the other layer
// kind are zero.
type layerWeights struct {
	kind              model.LayerKind
	attnNorm, ffnNorm dtensor
	// The launches of the matrices that read the mixer's input: q|k|v, and
	// qkv|gate|beta|alpha, each run of parts of one type and row length
	// fused into one matrix (rows back to back). ffnGateUp interleaves the
	// rows of gate and up (gate 0, up 0, gate 1, …) for the matvec's SwiGLU
	// epilogue, or is zero when they differ.
	qkvAttn, gdnIn mvGroup
	ffnGateUp      dtensor
	// attention
	q, k, v, o     dtensor
	qNorm, kNorm   dtensor
	qRows          int // rows of attn_q: n_head·Dh, or 2·n_head·Dh with the output gate
	attnCacheIndex int // index into Cache.kv
	// gated deltanet
	qkv, gate, conv, dt, a, beta, alpha, ssmNorm, ssmOut dtensor
	gdnIndex                                             int // index into Cache.gdn
	// ffn
	ffnGate, ffnUp, ffnDown dtensor
}

// Model is a model's weights on one GPU plus the loaded kernels. It is not
// safe for concurrent use: one sequence decodes at a time.
type Model struct {
	e    *cuda.Engine
	mod  cuda.Module
	k    *Kernels
	cfg  model.Config
	opt  Options
	omit stepOmit // Options.Omit
	tok  dtensor  // token_embd
	out  dtensor  // output (== tok when tied)
	norm dtensor  // output_norm
	ls   []layerWeights

	// attnMMA is MEMRA_ATTN_MMA, which overrides where head_dim 256's
	// attention splits run on the tensor cores (attnSplitMMA); hopper is
	// compute capability 9 or later, where the default rule applies.
	attnMMA string
	hopper  bool

	weights     *cuda.Arena
	weightBytes uint64
	// stepBytes is the weight bytes a decode step reads (an untied
	// embedding table one row of it): what the L2 window is weighed against.
	stepBytes uint64
	maxSplits int
	sms       int // the GPU's SMs, which the splits' geometry fills (splitGeom)
	// mvBlocks caps each matvec grid at the blocks the GPU holds at once
	// (SMs × resident blocks per SM with the launch's dynamic shared
	// memory): each block then loops over row units and pays its prologue
	// once. Absent entries mean one block per unit.
	mvBlocks map[mvKey]int
	// mvRoom picks each tensor-core matvec's kernel: a form with fewer
	// ring slots where the usual one does not fit the GPU's shared memory
	// at its width.
	mvRoom mvRoom
	// blockShared is the shared memory a block may take (blockShared);
	// sharedCapped, that MEMRA_SHARED_LIMIT set it below the GPU's.
	blockShared  int
	sharedCapped bool
	// scr is the logits' 8-bit copy greedy and top-k steps read (screen.go); zero: none.
	scr screen
	// pf is how prompts are primed in chunks (planPrefill); nil: token by token.
	pf *prefillPlan
	// recoded counts the matrices stored as a wider type (deviceType).
	recoded recodings

	// prof is set while ProfileStep captures a step: the launch about to be
	// made, as the step code describes it (note). nil otherwise.
	prof *launchNote
}

// mvKey names one matvec kernel and the dynamic shared memory of a launch
// (kernels.MatvecKernel.Shared).
type mvKey struct {
	v      MatvecVariant
	shared int
}

// CheckFatbin loads image as Options.Fatbin would and looks up every
// kernel of kernels.Spec in it, so that a caller with several models to
// load learns once that the image will not do. It leaves nothing loaded.
func CheckFatbin(e *cuda.Engine, image []byte) error {
	mod, _, err := loadImage(e, image)
	if err != nil {
		return err
	}
	return e.UnloadModule(mod)
}

// loadImage loads a kernel image and looks up every kernel in it; on an
// error nothing stays loaded.
func loadImage(e *cuda.Engine, image []byte) (cuda.Module, *Kernels, error) {
	mod, err := e.LoadModule(image)
	if err != nil {
		return 0, nil, err
	}
	k, err := loadKernels(e, mod)
	if err != nil {
		_ = e.UnloadModule(mod)
		return 0, nil, err
	}
	return mod, k, nil
}

// Load uploads m's weights to e's GPU and loads the kernels. The weights
// keep their GGUF types (F32, F16, BF16, Q8_0, Q3_K, Q4_K, Q5_K, Q6_K,
// IQ4_XS, Q4_0, IQ4_NL matrices), or take the wider type that holds their
// values (deviceType: Q5_0, and Q4_0 and IQ4_NL rows that are not whole
// 256-column tiles); any other type is an error naming the tensor.
// progress, if not nil, is called with the bytes uploaded so far and the
// total (in the device types' GGUF sizes).
func Load(e *cuda.Engine, m *model.Model, opt Options, progress func(done, total int64)) (*Model, error) {
	if err := m.CheckOpen(); err != nil { // the upload reads every tensor
		return nil, fmt.Errorf("gpu: %w", err)
	}
	if err := supported(m); err != nil {
		return nil, err
	}
	omit, err := omitSet(opt.Omit)
	if err != nil {
		return nil, err
	}
	if opt.PrefillChunk < 0 || opt.PrefillChunk == 1 || opt.PrefillChunk > MaxPrefillChunk {
		return nil, fmt.Errorf("gpu: a prefill chunk of %d tokens: give 2 to %d, or 0 for the default %d (Options.TokenFeed feeds one at a time)",
			opt.PrefillChunk, MaxPrefillChunk, DefaultPrefillChunk)
	}
	mma, err := attnMMAFromEnv()
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	mixOff, err := mixOffFromEnv()
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	image, from := kernels.Fatbin(), "the embedded fatbin"
	if opt.Fatbin != nil {
		image, from = opt.Fatbin, "Options.Fatbin"
	}
	mod, k, err := loadImage(e, image)
	if err != nil {
		return nil, fmt.Errorf("gpu: load kernels from %s: %w", from, err)
	}
	g := &Model{e: e, mod: mod, k: k, cfg: m.Config, opt: opt, omit: omit, attnMMA: mma, hopper: e.Info().Major >= 9}
	g.sms = e.Info().SMs
	g.maxSplits = maxSplits(splitWave(g.sms), m.NHeadKV)
	if g.blockShared, g.sharedCapped, err = blockShared(e); err != nil {
		_ = e.UnloadModule(mod)
		return nil, fmt.Errorf("gpu: %w", err)
	}
	if g.mvBlocks, g.mvRoom, err = matvecGrids(e, mod, g.blockShared, m.NEmbd, tiledLaunches(m)); err != nil {
		_ = e.UnloadModule(mod)
		return nil, fmt.Errorf("gpu: %w", err)
	}

	// One arena for every weight: sizes are known up front, and one
	// allocation keeps the device free of fragments.
	ts := m.Tensors()
	var total uint64 // arena bytes: every buffer 256-byte aligned
	var bytes int64  // progress total: the bytes that travel
	for _, t := range ts {
		// Lane order where it may apply: its padding makes the bound.
		rb := devRowBytes(t)
		total += align(devBytes(deviceType(t.Type, t.Cols()), t.Rows(), t.Cols(), rb, true))
		bytes += int64(t.Rows()) * int64(rb) // what put reports: rows in the device type's GGUF bytes
	}
	screenOut := !opt.FullLogits && screenable(m.Output)
	var scrHost screenHost
	var scrBuilt sync.WaitGroup
	if screenOut {
		total += screenArenaBytes(m.Output.Rows(), m.Output.Cols())
		bytes += int64(m.Output.Rows()) * int64(screenRowBytes(m.Output.Cols()))
		scrBuilt.Add(1)
		go func() {
			defer scrBuilt.Done()
			scrHost = buildScreen(m.Output)
		}()
	}
	// The builder reads the model's mapping, which the caller may close
	// once Load returns, failed or not.
	defer scrBuilt.Wait()
	if g.weights, err = e.NewArena(total); err != nil {
		g.Close()
		return nil, fmt.Errorf("gpu: weights (%d tensors, %d bytes): %w", len(ts), total, err)
	}
	up := map[*model.Tensor]dtensor{}
	var done int64
	var errs []error
	var errMu sync.Mutex // recoding's failures come from the upload's workers
	var stage staging
	// place uploads a matrix whose device row i is rowOf(i) (GGUF bytes), in
	// the device layout of its type (an embedding table: q8_0 scales in the
	// plain order embed_q8_0 reads), and reports progress.
	place := func(name string, typ gguf.Type, rows, cols int, table bool, rowOf func(i int) []byte) dtensor {
		rb, err := gguf.RowBytes(typ, int64(cols))
		if err != nil {
			errs = append(errs, fmt.Errorf("gpu: upload %s: %w", name, err))
			return dtensor{}
		}
		lane := laneScales(typ, rows, cols) && !table
		p, err := g.weights.Alloc(devBytes(typ, rows, cols, int(rb), lane))
		if err != nil {
			errs = append(errs, fmt.Errorf("gpu: upload %s: %w", name, err))
			return dtensor{}
		}
		d := dtensor{name: name, ptr: p, typ: typ, rows: rows, cols: cols, laneScales: lane}
		if l, ok := splitOf(typ); ok {
			wb, _ := l.rowBytes(cols, lane)
			d.scales = p.Add(uint64(rows) * uint64(wb))
		}
		if err := g.put(d, rowOf, int(rb), &stage, func(n int64) {
			done += n
			if progress != nil {
				progress(done, bytes)
			}
		}); err != nil {
			errs = append(errs, fmt.Errorf("gpu: upload %s: %w", name, err))
			return dtensor{}
		}
		return d
	}
	// rowsOf gives t's rows in its device type's GGUF bytes: recoded
	// (deviceType) when that is not its own, which g.recoded counts.
	rowsOf := func(t *model.Tensor) func(int) []byte {
		rb := len(t.Data) / t.Rows()
		rows := func(i int) []byte { return t.Data[i*rb : (i+1)*rb] }
		if deviceType(t.Type, t.Cols()) == t.Type {
			return rows
		}
		g.recoded.note(t)
		return recoded(t.Type, devRowBytes(t), rows, func(err error) {
			errMu.Lock()
			defer errMu.Unlock()
			errs = append(errs, fmt.Errorf("gpu: upload %s (%s as %s): %w", t.Name, t.Type, deviceType(t.Type, t.Cols()), err))
		})
	}
	u := func(t *model.Tensor) dtensor {
		if t == nil {
			return dtensor{}
		}
		if d, ok := up[t]; ok {
			return d
		}
		d := place(t.Name, deviceType(t.Type, t.Cols()), t.Rows(), t.Cols(), t == m.TokenEmbd, rowsOf(t))
		up[t] = d
		return d
	}
	// fuse uploads f's parts, each run of them (fusion.runs) as one matrix,
	// so one matvec launch covers the run: rows back to back, the parts
	// views of it, or for the FFN's pair row-interleaved, with no views (so
	// no tile rule: a pair never straddles a tile). A part alone is uploaded
	// as itself.
	fuse := func(f fusion) {
		for _, run := range f.runs() {
			if len(run) == 1 {
				i := run[0]
				*f.into[i] = u(f.parts[i])
				if !f.pair {
					f.group.add(*f.into[i], i)
				}
				continue
			}
			rows := 0
			var srcs []func(int) []byte
			var first []int
			for _, i := range run {
				first = append(first, rows)
				srcs = append(srcs, rowsOf(f.parts[i]))
				rows += f.parts[i].Rows()
			}
			rowOf := func(i int) []byte {
				k := len(first) - 1
				for first[k] > i {
					k--
				}
				return srcs[k](i - first[k])
			}
			if f.pair {
				rowOf = func(i int) []byte { return srcs[i%2](i / 2) }
			}
			t0 := f.parts[run[0]]
			d := place(f.name(run), deviceType(t0.Type, t0.Cols()), rows, t0.Cols(), false, rowOf)
			if f.pair {
				*f.pairInto = d
				continue
			}
			f.group.add(d, run[0])
			if d.ptr == 0 {
				continue
			}
			for k, i := range run {
				t := f.parts[i]
				*f.into[i] = d.rowsView(t.Name, first[k], t.Rows())
				up[t] = *f.into[i]
			}
		}
	}
	g.tok = u(m.TokenEmbd)
	g.out = u(m.Output)
	g.norm = u(m.OutputNorm)
	nAttn, nGDN := 0, 0
	for i := range m.Layers {
		L := &m.Layers[i]
		lw := layerWeights{kind: L.Kind, attnNorm: u(L.AttnNorm), ffnNorm: u(L.FFNNorm), ffnDown: u(L.FFNDown)}
		for _, f := range fusions(L, &lw) {
			fuse(f)
		}
		if L.Kind == model.LayerAttention {
			lw.o = u(L.AttnOutput)
			lw.qNorm, lw.kNorm = u(L.AttnQNorm), u(L.AttnKNorm)
			lw.qRows = L.AttnQ.Rows()
			lw.attnCacheIndex = nAttn
			nAttn++
		} else {
			lw.conv, lw.dt, lw.a = u(L.SSMConv), u(L.SSMDt), u(L.SSMA)
			lw.ssmNorm, lw.ssmOut = u(L.SSMNorm), u(L.SSMOut)
			lw.gdnIndex = nGDN
			nGDN++
		}
		g.ls = append(g.ls, lw)
		if len(errs) > 0 {
			break
		}
	}
	if screenOut && len(errs) == 0 { // last, so that its building overlapped the rest
		scrBuilt.Wait()
		if g.scr, err = g.placeScreen(m.Output, scrHost, place); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		g.Close()
		return nil, errors.Join(errs...)
	}
	if !mixOff {
		for i := range g.ls {
			for _, grp := range []*mvGroup{&g.ls[i].qkvAttn, &g.ls[i].gdnIn} {
				if err := g.planMix(grp, g.blockShared, e.Info().SMs); err != nil {
					g.Close()
					return nil, fmt.Errorf("gpu: %w", err)
				}
			}
		}
	}
	g.weightBytes = g.weights.Used()
	g.stepBytes = deviceStepBytes(m)
	if g.pf, err = g.planPrefill(); err != nil {
		g.Close()
		return nil, fmt.Errorf("gpu: prefill: %w", err)
	}
	return g, nil
}

// Fallbacks says, for a command to print, which matrices the GPU does not
// run as their file's type would suggest: a line for each file type stored
// as a wider one (deviceType), and one for each kernel and width that runs
// a form of its K-quant kernel with fewer ring slots than on a GPU with
// more shared memory a block (mvRoom.variant; README.md), naming the first
// matrix and counting the others. None for the synth presets of the
// GPU's own types on an H100 or H200 without MEMRA_SHARED_LIMIT. Products
// that Options.Omit leaves out count too.
func (g *Model) Fallbacks() []string {
	type use struct {
		got, usual string
		cols, need int
	}
	count := map[use]int{}
	first := map[use]string{}
	var order []use
	ws := []dtensor{g.out}
	for i := range g.ls {
		ws = append(ws, g.ls[i].matrices()...)
	}
	for _, w := range ws {
		usual := MatvecVariant{GgmlType: int(w.typ), Wide: w.wideKey()}
		v, _ := g.mvRoom.variant(w.typ, usual.Wide, w.cols)
		if w.ptr == 0 || v == usual {
			continue
		}
		uk, _ := matvecKernel(usual)
		vk, _ := matvecKernel(v)
		u := use{vk.Name, uk.Name, w.cols, uk.Shared(w.cols, false) + g.blockShared - g.mvRoom[usual]} // static included
		if count[u] == 0 {
			order = append(order, u)
			first[u] = w.name
		}
		count[u]++
	}
	limit := fmt.Sprintf("this GPU allows %d", g.blockShared)
	if g.sharedCapped {
		limit = fmt.Sprintf("MEMRA_SHARED_LIMIT allows %d", g.blockShared)
	}
	var out []string
	for _, r := range g.recoded {
		what, its := fmt.Sprintf("%s (%s) is", r.first, r.from), "its"
		if r.n > 1 {
			what, its = fmt.Sprintf("%s and %d more %s matrices are", r.first, r.n-1, r.from), "their"
		}
		to := recodeTo(r.from)
		why := fmt.Sprintf("the CUDA backend has no %s kernel", r.from)
		if tiled(r.from) {
			why = fmt.Sprintf("the CUDA backend's %s kernels take rows of whole 256-column tiles", r.from)
		}
		out = append(out, fmt.Sprintf("%s stored and read as %s, which holds %s values exactly, at %.2fx the bytes (%s for %s in the file): %s; the tokens are those of a %s file of the same values",
			what, to, its, float64(r.dev)/float64(r.file), sizeText(r.dev), sizeText(r.file), why, to))
	}
	for _, u := range order {
		what := fmt.Sprintf("%s (%d columns) runs", first[u], u.cols)
		if n := count[u] - 1; n > 0 {
			what = fmt.Sprintf("%s and %d more matrices of %d columns run", first[u], n, u.cols)
		}
		out = append(out, fmt.Sprintf("%s %s: %s needs %d bytes of shared memory a block there, and %s (the same tokens, likely more slowly)",
			what, u.got, u.usual, u.need, limit))
	}
	return out
}

// matvecGrids measures, for every matvec kernel, how many blocks the GPU
// holds at once with the dynamic shared memory of each launch the model can
// make: none, or the fused norm's copy of x (nEmbd floats: the norm-fused
// matvecs read the residual stream); for the tensor-core kernels x's split
// copy and their rings at each column count they will be launched at,
// tiledCols, where a width too wide for a kernel goes to the form of it
// with fewer ring slots that mvRoom.variant picks. Those kernels are also
// allowed the shared memory the widest needs (past 48 KiB at 12,288
// columns), or it fails naming the matrix. It returns the tensor-core
// kernels' room too, which picks each launch's kernel the same way.
func matvecGrids(e *cuda.Engine, mod cuda.Module, optin, nEmbd int, tiledCols tiledShapes) (map[mvKey]int, mvRoom, error) {
	out := map[mvKey]int{}
	sms := e.Info().SMs
	room, err := matvecRoom(e, mod, optin)
	if err != nil {
		return nil, nil, err
	}
	launched, err := room.shapes(tiledCols, optin)
	if err != nil {
		return nil, nil, err
	}
	for _, mk := range kernels.MatvecKernels() {
		v := variantOf(mk)
		fn, err := e.Function(mod, mk.Name)
		if err != nil {
			return nil, nil, err
		}
		var shared []int
		if mk.TensorCore {
			cols := launched[v]
			widest := 0
			for c := range cols {
				widest = max(widest, c)
			}
			if widest == 0 {
				continue
			}
			need := mk.Shared(widest, false)
			if err := e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, need); err != nil {
				return nil, nil, fmt.Errorf("%s: allow %d bytes of shared memory: %w", mk.Name, need, err)
			}
			for c := range cols {
				shared = append(shared, mk.Shared(c, false))
			}
		} else {
			shared = append(shared, mk.Shared(nEmbd, false))
			if nEmbd <= maxFusedNormCols {
				shared = append(shared, mk.Shared(nEmbd, true))
			}
		}
		for _, sh := range shared {
			n, err := e.MaxActiveBlocksPerSM(fn, kernels.MatvecThreads, sh)
			if err != nil {
				return nil, nil, fmt.Errorf("occupancy of %s: %w", mk.Name, err)
			}
			if n > 0 {
				out[mvKey{v, sh}] = sms * n
			}
		}
	}
	return out, room, nil
}

// matvecRoom is the room of mod's tensor-core matvec kernels where a block
// may take optin bytes of shared memory (blockShared): optin less each
// kernel's static arrays.
func matvecRoom(e *cuda.Engine, mod cuda.Module, optin int) (mvRoom, error) {
	room := mvRoom{}
	for _, mk := range kernels.MatvecKernels() {
		if !mk.TensorCore {
			continue
		}
		fn, err := e.Function(mod, mk.Name)
		if err != nil {
			return nil, err
		}
		static, err := e.FuncAttribute(fn, cuda.FuncSharedSizeBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mk.Name, err)
		}
		room[variantOf(mk)] = optin - static
	}
	return room, nil
}

// shapes is ts with each width under the kernel its launches take
// (variant): a width the usual kernel has no room for moves to a form with
// fewer slots. A width no form fits is an error naming the widest such
// matrix, its width, what the usual kernel and the lean form need, and
// optin, the shared memory the GPU allows a block (static arrays included).
func (r mvRoom) shapes(ts tiledShapes, optin int) (tiledShapes, error) {
	out := tiledShapes{}
	for _, mk := range kernels.MatvecKernels() { // spec order: the same error every time
		v := variantOf(mk)
		worst := 0
		for c, name := range ts[v] {
			to, ok := r.variant(gguf.Type(v.GgmlType), v.Wide, c)
			if !ok {
				worst = max(worst, c)
				continue
			}
			if out[to] == nil {
				out[to] = map[int]string{}
			}
			if _, seen := out[to][c]; !seen {
				out[to][c] = name
			}
		}
		if worst == 0 {
			continue
		}
		lean := leanOf(v)
		lk, _ := matvecKernel(lean)
		static := optin - r[v]
		need := fmt.Sprintf("%d bytes of shared memory per block in %s", mk.Shared(worst, false)+static, mk.Name)
		if lk.TensorCore {
			need += fmt.Sprintf(", %d in %s", lk.Shared(worst, false)+optin-r[lean], lk.Name)
		}
		return nil, fmt.Errorf("tensor %s: %d columns need %s; this GPU allows %d "+
			"(use --device cpu or convert with --type q8_0)", ts[v][worst], worst, need, optin)
	}
	return out, nil
}

// blockShared is the shared memory a block may take, static and dynamic:
// what the GPU allows with its opt-in, or MEMRA_SHARED_LIMIT bytes where
// that is less (capped), so that a GPU can load a model as one with less
// would (sm_86 and sm_89 allow 101,376 bytes).
func blockShared(e *cuda.Engine) (optin int, capped bool, err error) {
	optin, err = e.Attribute(cuda.AttrMaxSharedMemoryPerBlockOptin)
	if err != nil {
		return 0, false, err
	}
	limit, err := sharedLimitFromEnv()
	if err != nil {
		return 0, false, err
	}
	if limit > 0 && limit < optin {
		return limit, true, nil
	}
	return optin, false, nil
}

// sharedLimitFromEnv reads MEMRA_SHARED_LIMIT: unset or empty 0 (no
// limit), else a number of bytes, at least minBlockShared: below it the
// prompt's batch kernels and their stage, which do not adapt, would fail at
// their first launch, and no GPU the kernels are built for allows less.
func sharedLimitFromEnv() (int, error) {
	v := os.Getenv("MEMRA_SHARED_LIMIT")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minBlockShared {
		return 0, fmt.Errorf("MEMRA_SHARED_LIMIT=%q: want the bytes of shared memory a block may take, %d (as on sm_86 and sm_89 GPUs) or more, or unset", v, minBlockShared)
	}
	return n, nil
}

// minBlockShared is the least shared memory a block may take, with its
// opt-in, on the GPUs the fatbin holds code for (kbuild.Flags: sm_80,
// sm_86, sm_89, sm_90): sm_86's and sm_89's 99 KiB (NVIDIA's CUDA C++
// Programming Guide, technical specifications per compute capability).
const minBlockShared = 99 << 10

// sameShape reports whether ts have one device type (deviceType) and one
// row length.
func sameShape(ts ...*model.Tensor) bool {
	for _, t := range ts {
		if deviceType(t.Type, t.Cols()) != deviceType(ts[0].Type, ts[0].Cols()) || t.Cols() != ts[0].Cols() {
			return false
		}
	}
	return true
}

// fusable reports whether Load uploads ts as one matrix, rows back to back:
// parts of the same type and row length, and for a tiled type every part
// but the last a whole number of tiles, so each part's view starts on a
// tile.
func fusable(ts ...*model.Tensor) bool {
	for _, t := range ts[:len(ts)-1] {
		if tiled(deviceType(t.Type, t.Cols())) && t.Rows()%ktile.Rows != 0 {
			return false
		}
	}
	return sameShape(ts...)
}

// pairable reports whether Load uploads an FFN's gate and up
// row-interleaved, one matrix of twice the rows.
func pairable(gate, up *model.Tensor) bool { return sameShape(gate, up) && gate.Rows() == up.Rows() }

// fusion is a set of one layer's matrices that read the same input, which
// Load uploads in runs (fusion.runs), each run as one matrix, so that one
// matvec covers it: rows back to back, or for the FFN's pair gate and up
// row-interleaved. into are the layerWeights fields the parts land in
// (views where their run was fused), group the launches of a set that is
// not a pair, pairInto the pair's interleaved matrix.
type fusion struct {
	pair     bool
	parts    []*model.Tensor
	into     []*dtensor
	group    *mvGroup
	pairInto *dtensor
}

// fusions lists L's fusions with lw's fields for them, in upload order.
// Load uploads them and tiledLaunches lists the kernels they launch, so
// the two cannot disagree on what is fused.
func fusions(L *model.Layer, lw *layerWeights) []fusion {
	fs := []fusion{{pair: true, parts: []*model.Tensor{L.FFNGate, L.FFNUp},
		into: []*dtensor{&lw.ffnGate, &lw.ffnUp}, pairInto: &lw.ffnGateUp}}
	if L.Kind == model.LayerAttention {
		return append(fs, fusion{parts: []*model.Tensor{L.AttnQ, L.AttnK, L.AttnV},
			into: []*dtensor{&lw.q, &lw.k, &lw.v}, group: &lw.qkvAttn})
	}
	return append(fs, fusion{parts: []*model.Tensor{L.AttnQKV, L.AttnGate, L.SSMBeta, L.SSMAlpha},
		into: []*dtensor{&lw.qkv, &lw.gate, &lw.beta, &lw.alpha}, group: &lw.gdnIn})
}

// runs splits f's parts, in order, into the runs Load uploads as one
// matrix each: the pair whole if pairable, else each part alone; the other
// sets greedily, each run as long as fusable allows. A llama.cpp Q4_K_M
// file's Gated DeltaNet layer with attn_qkv in Q6_K (Q5_K before March
// 2026) beside its Q4_K gate, beta and alpha runs as qkv and
// gate|beta|alpha: two launches, not four.
func (f fusion) runs() [][]int {
	if f.pair {
		if pairable(f.parts[0], f.parts[1]) {
			return [][]int{{0, 1}}
		}
		return [][]int{{0}, {1}}
	}
	var rs [][]int
	for i := range f.parts {
		if n := len(rs); n > 0 {
			last := rs[n-1]
			run := make([]*model.Tensor, 0, len(last)+1)
			for _, k := range last {
				run = append(run, f.parts[k])
			}
			if fusable(append(run, f.parts[i])...) {
				rs[n-1] = append(last, i)
				continue
			}
		}
		rs = append(rs, []int{i})
	}
	return rs
}

// name is the name of a run's matrix in errors and reports.
func (f fusion) name(run []int) string {
	if f.pair {
		return f.parts[run[0]].Name + "|up"
	}
	return f.parts[run[0]].Name + "+"
}

// rows is a run's row count.
func (f fusion) rows(run []int) int {
	n := 0
	for _, i := range run {
		n += f.parts[i].Rows()
	}
	return n
}

// mvGroup is the launches of a set of matrices that read one input (a
// fusion that is not a pair): each a run of the set's parts fused into
// one matrix or a part alone, in part order, first the index of each
// launch's first part (where its output starts among the parts' outputs).
// Arrays, not slices: the decode step builds groups (single) on every
// eager step, and a value of arrays costs it no allocation.
type mvGroup struct {
	w     [maxGroup]dtensor
	first [maxGroup]int
	n     int
	mix   mixLaunch // set by Load where the two launches run as one (mix.go)
}

// maxGroup is the most matrices that read one input: a Gated DeltaNet
// layer's qkv, gate, beta and alpha.
const maxGroup = 4

func (g *mvGroup) add(w dtensor, first int) {
	g.w[g.n], g.first[g.n] = w, first
	g.n++
}

// launches is the group's matrices, one launch each (or, with a mixed
// launch, one kernel for both).
func (g *mvGroup) launches() []dtensor { return g.w[:g.n] }

// single is the group of one launch per matrix.
func single(ws ...dtensor) mvGroup {
	var g mvGroup
	for i, w := range ws {
		g.add(w, i)
	}
	return g
}

// tiledLaunches lists the tiled matrices a step's matvecs run over: every
// tiled tensor, and the fused ones Load makes of them (fusions), whose rows
// may take another kernel than any part's: two wide Q4_K parts of 2,048
// rows or fewer fuse into a matrix that MatvecWave gives the wave form,
// which no part would register.
func tiledLaunches(m *model.Model) tiledShapes {
	ts := tiledShapes{}
	add := func(name string, typ gguf.Type, rows, cols int) {
		if tiled(typ) {
			ts.add(typ, rows, cols, name)
		}
	}
	for _, t := range m.Tensors() {
		add(t.Name, deviceType(t.Type, t.Cols()), t.Rows(), t.Cols())
	}
	for i := range m.Layers {
		for _, f := range fusions(&m.Layers[i], &layerWeights{}) {
			for _, run := range f.runs() {
				if len(run) > 1 {
					t0 := f.parts[run[0]]
					add(f.name(run), deviceType(t0.Type, t0.Cols()), f.rows(run), t0.Cols())
				}
			}
		}
	}
	return ts
}

// tiledShapes holds, per tensor-core matvec kernel, the column counts of
// the matrices it may run, each with the name of one matrix of that width.
type tiledShapes map[MatvecVariant]map[int]string

// add records a rows × cols matrix of type t under the kernel MatvecWide and
// MatvecWave pick for it and, when that is a wide one, under the plain one
// too, which the kernel tests and benchmarks run on the same shapes (Load's
// fused launches are recorded as themselves: tiledLaunches).
func (ts tiledShapes) add(t gguf.Type, rows, cols int, name string) {
	keys := []int{0}
	if k := matvecKey(t, rows, cols); k != 0 {
		keys = append(keys, k)
	}
	for _, k := range keys {
		v := MatvecVariant{GgmlType: int(t), Wide: k}
		if ts[v] == nil {
			ts[v] = map[int]string{}
		}
		if _, ok := ts[v][cols]; !ok {
			ts[v][cols] = name
		}
	}
}

// supported checks, before anything is uploaded, that every matrix has a
// type the GPU kernels read and that the dims fit the kernels.
func supported(m *model.Model) error {
	var errs []error
	for _, t := range m.Tensors() {
		switch dt := deviceType(t.Type, t.Cols()); {
		case tiled(dt), dt == gguf.TypeF32, dt == gguf.TypeF16, dt == gguf.TypeBF16, dt == gguf.TypeQ8_0:
		default:
			errs = append(errs, fmt.Errorf("gpu: tensor %s is %s; the CUDA backend reads F32, F16, BF16, Q8_0, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, Q4_0 and IQ4_NL, and Q5_0 as Q8_0 (use --device cpu or convert with --type bf16|q8_0|q3_k|q4_k|q5_k|q6_k|iq4_xs|q4_0)", t.Name, t.Type))
		}
	}
	c := &m.Config
	if c.NumAttention() > 0 {
		if _, err := kernels.AttnSplitName(c.HeadDimK, false, false, false); err != nil {
			errs = append(errs, fmt.Errorf("gpu: %s.attention.key_length: %w (use --device cpu)", c.Arch, err))
		}
		if c.HeadDimK != c.HeadDimV {
			errs = append(errs, fmt.Errorf("gpu: key_length %d != value_length %d is not supported", c.HeadDimK, c.HeadDimV))
		}
		if c.NHead%c.NHeadKV != 0 {
			errs = append(errs, fmt.Errorf("gpu: head_count %d is not a multiple of head_count_kv %d", c.NHead, c.NHeadKV))
		}
	}
	if c.NumAttention() < c.NLayer { // Gated DeltaNet layers
		if c.SSMStateSize != kernels.GDNState {
			errs = append(errs, fmt.Errorf("gpu: Gated DeltaNet K head dim %d (%s.ssm.state_size): the kernels are built for %d (use --device cpu)",
				c.SSMStateSize, c.Arch, kernels.GDNState))
		}
		if c.SSMHeadDimV != kernels.GDNState {
			errs = append(errs, fmt.Errorf("gpu: Gated DeltaNet V head dim %d (%s.ssm.inner_size %d / ssm.time_step_rank %d): the kernels are built for %d (use --device cpu)",
				c.SSMHeadDimV, c.Arch, c.SSMInnerSize, c.SSMNumVHeads, kernels.GDNState))
		}
	}
	return errors.Join(errs...)
}

// Config is the model's configuration.
func (g *Model) Config() *model.Config { return &g.cfg }

// Engine is the engine the model lives on.
func (g *Model) Engine() *cuda.Engine { return g.e }

// WeightBytes is the device memory the weights take.
func (g *Model) WeightBytes() uint64 { return g.weightBytes }

// KVFP8 reports whether caches made by this model store FP8 keys and values.
func (g *Model) KVFP8() bool { return g.opt.KVFP8 }

// Close frees the weights and unloads the kernels.
func (g *Model) Close() error {
	var errs []error
	if g.weights != nil {
		errs = append(errs, g.weights.Free())
		g.weights = nil
	}
	if g.mod != 0 {
		errs = append(errs, g.e.UnloadModule(g.mod))
		g.mod = 0
	}
	return errors.Join(errs...)
}

// align rounds a buffer size up so every buffer starts 256-byte aligned (the
// kernels need 16; 256 matches cuMemAlloc's own alignment).
func align(n uint64) uint64 { return (n + 255) &^ 255 }
