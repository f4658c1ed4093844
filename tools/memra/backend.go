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

// openBackend returns a decoder for device "cpu", "cuda" or "auto" (CUDA when
// a GPU is present and the model's types are supported, else CPU), a close
// function and a name for the summary line.
func openBackend(device string, m *model.Model, ctx, threads int, stderr io.Writer) (sample.Decoder, func(), string, error) {
	if device != "cpu" {
		g, err := openGPU(m, ctx, stderr)
		switch {
		case err == nil:
			return g, g.close, "cuda " + g.e.Info().Name, nil
		case device == "cuda":
			return nil, nil, "", fmt.Errorf("--device cuda: %w", err)
		default:
			fmt.Fprintf(stderr, "memra: using the CPU (%v)\n", err)
		}
	}
	be, err := cpu.New(m, cpu.Options{Ctx: ctx, Threads: threads})
	if err != nil {
		return nil, nil, "", err
	}
	return be, func() { be.Close() }, fmt.Sprintf("cpu, %d threads", be.Pool().Workers()), nil
}

// gpuBackend is the CUDA backend behind the sample.Decoder interface, plus
// graph decoding for greedy runs.
type gpuBackend struct {
	*gpu.Session
	e   *cuda.Engine
	g   *gpu.Model
	ctx int
}

// Sampling with top-k takes the session's device-side top-k (512 bytes a
// step read back instead of the logits).
var _ sample.TopDecoder = (*gpuBackend)(nil)

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
	s, err := g.NewSession(ctx)
	if err != nil {
		g.Close()
		e.Close()
		return nil, err
	}
	return &gpuBackend{Session: s, e: e, g: g, ctx: ctx}, nil
}

func (b *gpuBackend) close() {
	b.Session.Close()
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
	if !opts.TopOnly(b.MaxTop()) {
		return nil, false
	}
	return &gpu.Sampling{TopK: opts.TopK, Temperature: opts.Temperature, TopP: opts.TopP, MinP: opts.MinP, Seed: opts.Seed}, true
}

// generateGraph is generation through CUDA graphs: the prompt is primed
// with device-counter steps, then each token is one graph replay, picked on
// the device by argmax (s nil) or the draw s. Generation ends after n
// tokens or a stop token (included).
func (b *gpuBackend) generateGraph(prompt []int32, n int, s *gpu.Sampling, stop []int32, emit func(int32) error) (sample.Stats, error) {
	st := sample.Stats{PromptTokens: len(prompt)}
	gs := b.g.NewGraphDecodeState()
	defer gs.Close()
	if err := gs.SetSampling(s); err != nil {
		return st, err
	}
	if err := gs.Reserve(max(b.ctx, len(prompt)+n)); err != nil {
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
