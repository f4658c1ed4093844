package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
)

// TestMixSplit: a mixed launch's grid is a block per unit while both
// parts fit one wave, else the resident blocks shared by bytes, each part
// at least one block and never more than its units.
func TestMixSplit(t *testing.T) {
	for _, c := range []struct {
		ua, ub   int
		ba, bb   uint64
		resident int
		want     [2]int
	}{
		{256, 130, 100, 50, 396, [2]int{256, 130}}, // the 9B's Gated DeltaNet input: one wave
		{256, 130, 100, 50, 386, [2]int{256, 130}}, // exactly one wave
		{256, 130, 300, 100, 264, [2]int{198, 66}}, // bytes 3:1 of 264
		{1000, 10, 1000, 1, 100, [2]int{99, 1}},    // B keeps a block
		{10, 1000, 1, 1000, 100, [2]int{1, 99}},    // A keeps a block
		{20, 1000, 1000, 1, 100, [2]int{20, 80}},   // A's share capped at its units, the rest to B
		{100, 20, 1, 1, 100, [2]int{80, 20}},       // B's share capped at its units, the rest to A
		{5, 5, 1, 1, 1, [2]int{5, 5}},              // one resident block: a block a unit (ten waves either way)
	} {
		got := mixSplit(c.ua, c.ub, c.ba, c.bb, c.resident)
		if got != c.want {
			t.Errorf("mixSplit(%d, %d, %d, %d, %d) = %v, want %v", c.ua, c.ub, c.ba, c.bb, c.resident, got, c.want)
		}
		if got[0] < 1 || got[1] < 1 || got[0] > c.ua || got[1] > c.ub {
			t.Errorf("mixSplit(%d, %d, ...) = %v: a part with no block or more blocks than units", c.ua, c.ub, got)
		}
		if c.ua+c.ub > c.resident && c.resident >= 2 && got[0]+got[1] != min(c.resident, c.ua+c.ub) {
			t.Errorf("mixSplit(%d, %d, ..., %d) = %v: resident blocks left idle", c.ua, c.ub, c.resident, got)
		}
	}
}

// presetLayers is the layers of a synth preset typed as llama-quantize's
// mix ft types them (convert.TensorType), shapes and types only.
func presetLayers(t *testing.T, preset string, ft convert.FileType) []model.Layer {
	t.Helper()
	spec, plan, err := convert.PresetPlan(preset)
	if err != nil {
		t.Fatal(err)
	}
	ls := make([]model.Layer, spec.NLayer)
	for i := range ls {
		ls[i].Kind = model.LayerAttention
		if spec.Recurrent[i] {
			ls[i].Kind = model.LayerRecurrent
		}
	}
	for i := range plan {
		e := &plan[i]
		if e.Layer < 0 || len(e.Shape) != 2 {
			continue
		}
		tn := &model.Tensor{Name: e.Name, Type: convert.TensorType(spec, e, ft), Shape: []int{int(e.Shape[0]), int(e.Shape[1])}}
		L := &ls[e.Layer]
		role := strings.TrimSuffix(strings.TrimPrefix(e.Name, fmt.Sprintf("blk.%d.", e.Layer)), ".weight")
		for name, p := range map[string]**model.Tensor{"attn_q": &L.AttnQ, "attn_k": &L.AttnK, "attn_v": &L.AttnV,
			"attn_qkv": &L.AttnQKV, "attn_gate": &L.AttnGate, "ssm_beta": &L.SSMBeta, "ssm_alpha": &L.SSMAlpha,
			"ffn_gate": &L.FFNGate, "ffn_up": &L.FFNUp} {
			if role == name {
				*p = tn
			}
		}
	}
	return ls
}

// TestMixPresets: in llama-quantize's Q4_K_M and Q5_K_M of every preset,
// each layer whose input projections are two launches, a Q6_K one beside
// a Q4_K or Q5_K one, has a matvec_mix kernel for the kernels those
// launches take on a GPU where the usual kernels fit (the shared-memory
// fallbacks, and the mixed kernel's own fit, are Load's), and there are as
// many such layers as use_more_bits raises (convert's TestMixTypesPresets
// checks which): 12 of the 0.8B's and 2B's 24 blocks, 16 of the 9B's 32,
// 32 of the 27B's 64.
func TestMixPresets(t *testing.T) {
	for _, preset := range []string{"0.8b", "2b", "9b", "27b"} {
		for _, ft := range []convert.FileType{convert.FileQ4_K_M, convert.FileQ5_K_M} {
			ls := presetLayers(t, preset, ft)
			var mixed, kinds []string
			for i := range ls {
				for _, f := range fusions(&ls[i], &layerWeights{}) {
					runs := f.runs()
					if f.pair || len(runs) == 1 {
						continue
					}
					if len(runs) != 2 {
						t.Errorf("%s %s blk.%d: %d launches of one input, want at most 2", preset, ft, i, len(runs))
						continue
					}
					var vs [2]MatvecVariant
					for k, run := range runs {
						p := f.parts[run[0]]
						vs[k] = MatvecVariant{GgmlType: int(p.Type), Wide: matvecKey(p.Type, f.rows(run), p.Cols())}
					}
					if vs[1].GgmlType == int(gguf.TypeQ6_K) {
						vs[0], vs[1] = vs[1], vs[0]
					}
					mk, ok := mixKernel(vs[0], vs[1])
					if !ok {
						t.Errorf("%s %s blk.%d: no matvec_mix kernel for %+v beside %+v", preset, ft, i, vs[0], vs[1])
						continue
					}
					mixed = append(mixed, fmt.Sprint(i))
					if !strings.Contains(strings.Join(kinds, " "), mk.Name) {
						kinds = append(kinds, mk.Name)
					}
				}
			}
			n := map[string]int{"0.8b": 12, "2b": 12, "9b": 16, "27b": 32}[preset] // use_more_bits(i, n) for 24, 32 and 64 blocks
			if len(mixed) != n {
				t.Errorf("%s %s: %d layers mixed (%s), want %d", preset, ft, len(mixed), strings.Join(mixed, " "), n)
			}
			t.Logf("%s %s: layers %s launch their input projections as one, on %s", preset, ft, strings.Join(mixed, " "), strings.Join(kinds, ", "))
		}
	}
}

// TestMixEnv: MEMRA_MIX unset or 1 mixes, 0 keeps the launches apart, and
// any other value is an error naming the variable, from CheckEnv too.
func TestMixEnv(t *testing.T) {
	for v, off := range map[string]bool{"": false, "1": false, "0": true} {
		t.Setenv("MEMRA_MIX", v)
		if got, err := mixOffFromEnv(); err != nil || got != off {
			t.Errorf("MEMRA_MIX=%q: off %v, %v; want %v", v, got, err, off)
		}
	}
	t.Setenv("MEMRA_MIX", "yes")
	if _, err := mixOffFromEnv(); err == nil || !strings.Contains(err.Error(), "MEMRA_MIX") {
		t.Errorf("MEMRA_MIX=yes: %v, want an error naming MEMRA_MIX", err)
	}
	if err := CheckEnv(); err == nil || !strings.Contains(err.Error(), "MEMRA_MIX") {
		t.Errorf("CheckEnv with MEMRA_MIX=yes: %v, want an error naming MEMRA_MIX", err)
	}
}
