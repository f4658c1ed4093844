package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/kernels"
)

// The faster paths sample.Generate looks for: a signature that drifted
// would quietly take the slow one, so the compiler checks them here.
var (
	_ sample.TopDecoder = (*gpu.Session)(nil)
	_ sample.Feeder     = (*gpu.Session)(nil)
	_ sample.Feeder     = (*cpu.Backend)(nil)
)

// backend generates on one device: the CPU's decoder, or the GPU's graph
// generation or Session, whichever the run's options take (gpuBackend).
type backend struct {
	name  string
	cpu   *cpu.Backend // nil on the GPU
	gpu   *gpuBackend
	close func()
}

// generate produces up to n tokens after prompt, calling emit with each;
// once ctx is done it stops feeding the prompt (sample.GenerateContext:
// the CPU between tokens, the GPU before and after it primes the prompt,
// which it does at thousands of tokens a second), its error wrapping
// ctx's.
func (b *backend) generate(ctx context.Context, prompt []int32, n int, opts sample.Options, emit func(int32) error) (sample.Stats, error) {
	if b.gpu != nil {
		return b.gpu.generate(ctx, prompt, n, opts, emit)
	}
	_, st, err := sample.GenerateContext(ctx, b.cpu, prompt, n, opts, emit)
	return st, err
}

// openBackend opens device "cpu", "cuda" or "auto" (CUDA when a GPU is
// present, the model's types are supported and its cache fits, else the
// CPU) for a context of ctx tokens and the run's options.
func openBackend(device string, m *model.Model, ctx, threads int, opts sample.Options, stderr io.Writer) (*backend, error) {
	if device != "cpu" {
		g, err := openGPU(m, ctx, opts, stderr)
		switch {
		case err == nil:
			return &backend{name: "cuda " + g.e.Info().Name, gpu: g, close: g.close}, nil
		case device == "cuda":
			return nil, fmt.Errorf("--device cuda: %w", err)
		default:
			fmt.Fprintf(stderr, "memra: using the CPU (%v)\n", err)
		}
	}
	be, err := cpu.New(m, cpu.Options{Ctx: ctx, Threads: threads})
	if err != nil {
		return nil, err
	}
	workers := fmt.Sprintf("%d threads", be.Pool().Workers())
	if be.Pool().Workers() == 1 {
		workers = "1 thread"
	}
	return &backend{name: "cpu, " + workers, cpu: be, close: be.Close}, nil
}

// gpuBackend is the model on the GPU with one cache of ctx tokens: graph
// generation's when the device can pick the run's tokens (gpuPick), else a
// Session's, whose tokens the host samples.
type gpuBackend struct {
	e       *cuda.Engine
	g       *gpu.Model
	ctx     int
	gs      *gpu.GraphDecodeState // the graph path, or
	session *gpu.Session          // the host-sampled one
}

// openGPU loads m and allocates the cache of the path opts take, so that a
// cache too large for the device fails here, where --device auto can still
// fall back to the CPU.
func openGPU(m *model.Model, ctx int, opts sample.Options, stderr io.Writer) (*gpuBackend, error) {
	e, err := cuda.New(0)
	if err != nil {
		return nil, err
	}
	fp8, err := gpu.KVFP8FromEnv()
	if err != nil {
		e.Close()
		return nil, err
	}
	bar := newProgressBar(stderr, false, "load to "+e.Info().Name)
	full, err := gpu.FullLogitsFromEnv()
	if err != nil {
		e.Close()
		return nil, err
	}
	// The logits' 8-bit copy serves greedy steps and the device's top k
	// without a penalty only (gpu.Options.FullLogits): a run that samples
	// from more than the top kernels.TopKMax, or penalises, would carry it
	// unread.
	full = full || sample.PenaltyOn(opts.RepeatPenalty) || !(opts.IsGreedy() || opts.TopOnly(kernels.TopKMax))
	g, err := gpu.Load(e, m, gpu.Options{KVFP8: fp8, FullLogits: full}, bar.update)
	bar.finish(err == nil)
	if err != nil {
		e.Close()
		return nil, err
	}
	for _, f := range g.Fallbacks() {
		fmt.Fprintf(stderr, "memra: %s\n", f)
	}
	b := &gpuBackend{e: e, g: g, ctx: ctx}
	if s, p, ok := gpuPick(g, opts); ok {
		b.gs = g.NewGraphDecodeState()
		err = errors.Join(b.gs.SetSampling(s), b.gs.SetPenalty(p))
		if err == nil {
			err = b.gs.Reserve(ctx)
		}
	} else {
		b.session, err = g.NewSession(ctx)
	}
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *gpuBackend) close() {
	if b.gs != nil {
		b.gs.Close()
	}
	if b.session != nil {
		b.session.Close()
	}
	b.g.Close()
	b.e.Close()
}

// gpuPick is how graph generation picks opts' tokens on the device, and
// whether it can: argmax (nil) or the top-k draw, each after the repetition
// penalty when there is one (nil: none). Sampling without a top-k within
// the device's, or a window longer than the device keeps, stays on the
// host. The device picks what the host would from the same logits and seed.
func gpuPick(g *gpu.Model, opts sample.Options) (*gpu.Sampling, *gpu.Penalty, bool) {
	var pen *gpu.Penalty
	if p := opts.RepeatPenalty; sample.PenaltyOn(p) {
		w := opts.RepeatWindow
		if w == 0 {
			w = sample.DefaultRepeatWindow
		}
		if w > kernels.PenaltyMaxWindow {
			return nil, nil, false
		}
		pen = &gpu.Penalty{Penalty: p, Window: w}
	}
	if opts.IsGreedy() {
		return nil, pen, true
	}
	if opts.TopK < 1 || opts.TopK > g.MaxTop() {
		return nil, nil, false
	}
	return &gpu.Sampling{TopK: opts.TopK, Temperature: opts.Temperature, TopP: opts.TopP, MinP: opts.MinP, Seed: opts.Seed}, pen, true
}

// generate runs the path openGPU chose: graph generation, or
// sample.Generate on the Session (the logits, or the top k, read back each
// step).
func (b *gpuBackend) generate(ctx context.Context, prompt []int32, n int, opts sample.Options, emit func(int32) error) (sample.Stats, error) {
	if b.gs != nil {
		return b.generateGraph(ctx, prompt, n, opts.Stop, emit)
	}
	_, st, err := sample.GenerateContext(ctx, b.session, prompt, n, opts, emit)
	return st, err
}

// generateGraph is generation through CUDA graphs: the prompt is primed
// on the device, then each token is one graph replay, picked on the device
// as the state's sampling and penalty say, 4 bytes read back. Generation
// ends after n tokens or a stop token (included).
func (b *gpuBackend) generateGraph(ctx context.Context, prompt []int32, n int, stop []int32, emit func(int32) error) (sample.Stats, error) {
	var st sample.Stats
	if need := len(prompt) + n - 1; need > b.ctx {
		return st, fmt.Errorf("generate: context full: %d tokens needed (%d prompt + %d generated − 1), capacity %d",
			need, len(prompt), n, b.ctx)
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("generate: prompt stopped after 0 of %d tokens: %w", len(prompt), err)
	}
	t0 := time.Now()
	if _, err := b.g.GenerateGraph(b.gs, prompt, 0); err != nil {
		return st, err
	}
	st.PromptTokens, st.PromptTime = len(prompt), time.Since(t0)
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("generate: stopped after the prompt: %w", err)
	}
	t1 := time.Now()
	err := b.g.ContinueGraphFunc(b.gs, n, func(t int32) error {
		st.GenTokens++
		if err := emit(t); err != nil {
			return err
		}
		if slices.Contains(stop, t) {
			return sample.ErrStop
		}
		return nil
	})
	st.GenTime = time.Since(t1)
	if errors.Is(err, sample.ErrStop) {
		err = nil
	}
	return st, err
}
