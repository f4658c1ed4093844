package cpu_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/engine/sample"
)

// fixtureDir holds tiny random models converted to GGUF and the logits
// transformers produced for them (written on the GPU machine by the
// converter's fixture script): <name>.json and <name>-<type>.gguf.
const fixtureDir = "../testdata/fixtures"

type fixture struct {
	Name   string      `json:"name"`
	Arch   string      `json:"arch"`
	Prompt []int32     `json:"prompt"`
	Tokens []int32     `json:"tokens"`
	Logits [][]float64 `json:"logits"` // logits[0]: after the prompt; logits[i]: after tokens[i-1]
}

func TestTransformersFixtures(t *testing.T) {
	cases := []struct {
		name, typ string
		// tol bounds max|ours−ref|/max|ref| per step.
		tol float64
		// exactGreedy: argmax must equal the reference token at every step.
		exactGreedy bool
	}{
		// f32 weights: both sides compute in f32 from identical weights;
		// only summation order differs (~1e-6), 1e-4 leaves margin for the
		// ill-conditioned early Gated DeltaNet steps (see forwardTol).
		{"qwen35-tiny", "f32", 1e-4, true},
		{"qwen35-tiny-tied", "f32", 1e-4, true},
		{"qwen3-tiny", "f32", 1e-4, true},
		// 3 Gated DeltaNet V heads per K head, where the grouped and
		// interleaved head orders differ in every pairing (2 per K head
		// leave some pairs alike).
		{"qwen35-tiny-hv6", "f32", 1e-4, true},
		// bf16 weights vs the f32 reference: each weight is rounded to 8
		// mantissa bits (relative error ≤ 2^-9 ≈ 2e-3, random sign), which
		// through a few layers moves logits by about 1e-2 of their range.
		{"qwen35-tiny", "bf16", 3e-2, false},
		// q8_0: per block of 32, error ≤ amax/254 per weight (≈ 4e-3 of the
		// block's largest weight), a little above bf16.
		{"qwen35-tiny", "q8_0", 5e-2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name+"-"+tc.typ, func(t *testing.T) {
			jsonPath := filepath.Join(fixtureDir, tc.name+".json")
			ggufPath := filepath.Join(fixtureDir, tc.name+"-"+tc.typ+".gguf")
			// The fixtures are committed: a missing one fails rather than
			// skips, or the only comparison with transformers would stop
			// silently.
			raw, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var fx fixture
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatalf("%s: %v", jsonPath, err)
			}
			if len(fx.Logits) != len(fx.Tokens) || len(fx.Prompt) == 0 {
				t.Fatalf("%s: %d logits rows for %d tokens, prompt %d", jsonPath, len(fx.Logits), len(fx.Tokens), len(fx.Prompt))
			}
			m := modeltest.Open(t, ggufPath)
			if m.Arch != fx.Arch {
				t.Fatalf("gguf arch %s, fixture arch %s", m.Arch, fx.Arch)
			}
			b, err := cpu.New(m, cpu.Options{Ctx: len(fx.Prompt) + len(fx.Tokens)})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var logits []float32
			for _, tok := range fx.Prompt {
				if logits, err = b.DecodeStep(tok); err != nil {
					t.Fatal(err)
				}
			}
			agree, worst := 0, 0.0
			for i, want := range fx.Logits {
				if i > 0 {
					if logits, err = b.DecodeStep(fx.Tokens[i-1]); err != nil {
						t.Fatal(err)
					}
				}
				if len(want) != len(logits) {
					t.Fatalf("step %d: reference has %d logits, model %d", i, len(want), len(logits))
				}
				e := relErr(logits, want)
				worst = max(worst, e)
				if e > tc.tol {
					t.Errorf("step %d: max|ours−ref|/max|ref| = %.3g > %g", i, e, tc.tol)
				}
				if got := sample.Argmax(logits); int32(got) == fx.Tokens[i] {
					agree++
				} else if tc.exactGreedy {
					t.Errorf("step %d: argmax %d, reference token %d", i, got, fx.Tokens[i])
				}
			}
			t.Logf("%s %s: worst rel err %.3g, greedy agreement %d/%d", tc.name, tc.typ, worst, agree, len(fx.Tokens))
		})
	}
}
