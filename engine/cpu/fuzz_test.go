package cpu_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

// fuzzSpec is a qwen35 of one recurrent and one attention layer: whole
// enough that loading and decoding it runs every kind of layer.
func fuzzSpec() modeltest.Spec {
	return modeltest.Spec{
		Arch: "qwen35", NLayer: 2, NEmbd: 32, NFF: 32, NVocab: 48,
		NHead: 2, NHeadKV: 1, HeadDim: 8, NRot: 4, RopeBase: 10000, NormEps: 1e-6, ContextLength: 16,
		Interval: 2, ConvKernel: 4, StateSize: 8, GroupCount: 1, NumVHeads: 2, HeadDimV: 8, Seed: 3,
	}
}

// FuzzLoadDecode feeds mutated model files through what memra run does
// with a file: parse, load (every check of the metadata against the
// tensors), open the CPU backend and decode two tokens. None may panic or
// hang (an allocation past memory kills the process, which the fuzzer
// reports); a file is either refused with an error or decoded. FuzzOpen
// covers the parser alone; this reaches the loader and the backend, where
// metadata sizes buffers (session 43 found a 360 GB allocation and a panic
// there by mutating metadata by hand).
//
// The fuzzed bytes are the file up to its data section (2.5 KB: metadata
// and tensor infos); the seed's tensor data (55 KB) is appended to them.
// Fuzzing whole files spent 96% of the mutations on weights, which no check
// reads.
func FuzzLoadDecode(f *testing.F) {
	var heads [][]byte
	var tail []byte
	for _, s := range []modeltest.Spec{fuzzSpec(), func() modeltest.Spec {
		s := fuzzSpec()
		s.Arch, s.NRot = "qwen3", 8
		return s
	}(), func() modeltest.Spec {
		// The block types of 32 values in turn (the output projections'
		// rows of 16 stay F32), so that mutated tensor infos reach their
		// decoders too.
		s := fuzzSpec()
		blocks := modeltest.AllTypes([]gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeIQ4_NL, gguf.TypeQ4_1, gguf.TypeQ5_1})
		s.Type = func(name string) gguf.Type {
			if strings.Contains(name, "ssm_out") || strings.Contains(name, "attn_output") {
				return gguf.TypeF32
			}
			return blocks(name)
		}
		return s
	}()} {
		var buf bytes.Buffer
		if err := modeltest.WriteTo(&buf, s); err != nil {
			f.Fatal(err)
		}
		g, err := gguf.Parse(buf.Bytes())
		if err != nil {
			f.Fatal(err)
		}
		heads = append(heads, buf.Bytes()[:g.DataOffset])
		if d := buf.Bytes()[g.DataOffset:]; len(d) > len(tail) {
			tail = d // the larger data section serves both
		}
	}
	for _, h := range heads {
		// The target returns quietly on any error, so a seed the loader
		// refused would leave it testing the parser alone: each seed must
		// decode.
		if err := loadDecode(append(slices.Clip(h), tail...)); err != nil {
			f.Fatalf("seed of %d bytes: %v", len(h), err)
		}
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		_ = loadDecode(append(slices.Clip(head), tail...)) // refused with an error or decoded: either is fine
	})
}

// loadDecode parses, loads and opens data on the CPU backend and decodes
// the first and the last token.
func loadDecode(data []byte) error {
	g, err := gguf.Parse(data)
	if err != nil {
		return err
	}
	m, err := model.Load(g)
	if err != nil {
		return err
	}
	b, err := cpu.New(m, cpu.Options{Ctx: 4, Threads: 1})
	if err != nil {
		return err
	}
	defer b.Close()
	for _, tok := range []int32{0, int32(m.NVocab - 1)} {
		if _, err := b.DecodeStep(tok); err != nil {
			return err
		}
	}
	return nil
}
