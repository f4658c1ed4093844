package cpu_test

import (
	"bytes"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

// fuzzSpec is a qwen35 of one recurrent and one attention layer, a few KB:
// small enough that the fuzzer mutates its metadata often, whole enough
// that loading and decoding it runs every kind of layer.
func fuzzSpec() modeltest.Spec {
	return modeltest.Spec{
		Arch: "qwen35", NLayer: 2, NEmbd: 32, NFF: 32, NVocab: 48,
		NHead: 2, NHeadKV: 1, HeadDim: 8, NRot: 4, RopeBase: 10000, NormEps: 1e-6, ContextLength: 16,
		Interval: 2, ConvKernel: 4, StateSize: 8, GroupCount: 1, NumVHeads: 2, HeadDimV: 8, Seed: 3,
	}
}

// FuzzLoadDecode feeds mutated model files through what memra run does
// with a file: parse, load (every check of the metadata against the
// tensors), open the CPU backend and decode two tokens. None may panic,
// hang or allocate past what the file's tensors justify; a file is either
// refused with an error or decoded. FuzzOpen covers the parser alone; this
// reaches the loader and the backend, where metadata sizes buffers
// (session 43 found a 360 GB allocation and a panic there by mutating
// metadata by hand).
func FuzzLoadDecode(f *testing.F) {
	for _, s := range []modeltest.Spec{fuzzSpec(), func() modeltest.Spec {
		s := fuzzSpec()
		s.Arch, s.NRot = "qwen3", 8
		return s
	}()} {
		var buf bytes.Buffer
		if err := modeltest.WriteTo(&buf, s); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gguf.Parse(data)
		if err != nil {
			return
		}
		m, err := model.Load(g)
		if err != nil {
			return
		}
		b, err := cpu.New(m, cpu.Options{Ctx: 4, Threads: 1})
		if err != nil {
			return
		}
		defer b.Close()
		for _, tok := range []int32{0, int32(m.NVocab - 1)} {
			if _, err := b.DecodeStep(tok); err != nil {
				return
			}
		}
	})
}
