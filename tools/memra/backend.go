package main

import (
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
)

// backend generates on one device: the CPU's decoder driven by
// sample.Generate, or the GPU (gpuBackend).
type backend struct {
	name  string
	cpu   *cpu.Backend // nil on the GPU
	gpu   *gpuBackend
	close func()
}

// generate produces up to n tokens after prompt, calling emit with each.
func (b *backend) generate(prompt []int32, n int, opts sample.Options, emit func(int32) error) (sample.Stats, error) {
	if b.gpu != nil {
		return b.gpu.generate(prompt, n, opts, emit)
	}
	_, st, err := sample.Generate(b.cpu, prompt, n, opts, emit)
	return st, err
}

// openBackend opens device "cpu", "cuda" or "auto" (CUDA when a GPU is
// present and the model's types are supported, else the CPU) for a context
// of ctx tokens.
func openBackend(device string, m *model.Model, ctx, threads int, stderr io.Writer) (*backend, error) {
	if device != "cpu" {
		g, err := openGPU(m, ctx, stderr)
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
	return &backend{name: fmt.Sprintf("cpu, %d threads", be.Pool().Workers()), cpu: be, close: be.Close}, nil
}

// gpuBackend is the loaded model on the GPU. Its cache is allocated by the
// path a run takes: graph generation's, or a Session's for sampling whose
// token the host picks, never both.
type gpuBackend struct {
	e   *cuda.Engine
	g   *gpu.Model
	ctx int
}

func openGPU(m *model.Model, ctx int, stderr io.Writer) (*gpuBackend, error) {
	e, err := cuda.New(0)
	if err != nil {
		return nil, err
	}
	bar := newProgressBar(stderr, false, "load to "+e.Info().Name)
	g, err := gpu.Load(e, m, gpu.Options{KVFP8: gpu.KVFP8FromEnv()}, bar.update)
	bar.finish(err == nil)
	if err != nil {
		e.Close()
		return nil, err
	}
	return &gpuBackend{e: e, g: g, ctx: ctx}, nil
}

func (b *gpuBackend) close() {
	b.g.Close()
	b.e.Close()
}

// graphSampling is the device draw for opts, and whether graph generation
// can pick opts' tokens: greedy (nil), or top-k sampling without a
// repetition penalty within the device's top k (the draw the host would
// make from the same logits and seed).
func (b *gpuBackend) graphSampling(opts sample.Options) (*gpu.Sampling, bool) {
	if opts.Greedy || opts.Temperature == 0 {
		return nil, true
	}
	if !opts.TopOnly(b.g.MaxTop()) {
		return nil, false
	}
	return &gpu.Sampling{TopK: opts.TopK, Temperature: opts.Temperature, TopP: opts.TopP, MinP: opts.MinP, Seed: opts.Seed}, true
}

// generate takes the graph path when it can pick opts' tokens, else a
// Session whose steps replay graphs and whose tokens the host samples
// (sample.Generate: the logits, or the top k, read back each step).
func (b *gpuBackend) generate(prompt []int32, n int, opts sample.Options, emit func(int32) error) (sample.Stats, error) {
	if s, ok := b.graphSampling(opts); ok {
		return b.generateGraph(prompt, n, s, opts.Stop, emit)
	}
	s, err := b.g.NewSession(b.ctx)
	if err != nil {
		return sample.Stats{}, err
	}
	defer s.Close()
	_, st, err := sample.Generate(s, prompt, n, opts, emit)
	return st, err
}

// generateGraph is generation through CUDA graphs: the prompt is primed
// on the device, then each token is one graph replay, picked on the device
// by argmax (s nil) or the draw s, 4 bytes read back. Generation ends after
// n tokens or a stop token (included).
func (b *gpuBackend) generateGraph(prompt []int32, n int, s *gpu.Sampling, stop []int32, emit func(int32) error) (sample.Stats, error) {
	st := sample.Stats{PromptTokens: len(prompt)}
	if need := len(prompt) + n - 1; need > b.ctx {
		return st, fmt.Errorf("generate: context full: %d tokens needed (%d prompt + %d generated − 1), capacity %d",
			need, len(prompt), n, b.ctx)
	}
	gs := b.g.NewGraphDecodeState()
	defer gs.Close()
	if err := gs.SetSampling(s); err != nil {
		return st, err
	}
	if err := gs.Reserve(b.ctx); err != nil {
		return st, err
	}
	t0 := time.Now()
	if _, err := b.g.GenerateGraph(gs, prompt, 0); err != nil {
		return st, err
	}
	st.PromptTime = time.Since(t0)
	t1 := time.Now()
	err := b.g.ContinueGraphFunc(gs, n, func(t int32) error {
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
