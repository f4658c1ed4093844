package model_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

// TestLoadUnusedTensors: a tensor the forward pass would not read (a bias,
// MoE experts, a misspelt name) is refused by name rather than ignored;
// only the MTP blocks of qwen35 are stored unread.
func TestLoadUnusedTensors(t *testing.T) {
	cases := []struct {
		name   string
		arch   string // "" is qwen35
		mutate func(*modeltest.Spec)
		want   string // "" loads
	}{
		{"bias", "", func(s *modeltest.Spec) { s.Extra = map[string][]uint64{"blk.1.attn_q.bias": {512}} },
			"tensor blk.1.attn_q.bias is not part of a qwen35 model (memra would ignore it and compute another model)"},
		{"bias on qwen3", "qwen3", func(s *modeltest.Spec) { s.Extra = map[string][]uint64{"blk.0.attn_q.bias": {256}} },
			"tensor blk.0.attn_q.bias is not part of a qwen3 model"},
		{"MoE experts", "", func(s *modeltest.Spec) {
			s.Extra = map[string][]uint64{"blk.0.ffn_gate_inp.weight": {256, 4}, "blk.0.ffn_up_exps.weight": {256, 8, 4}}
		}, "tensor blk.0.ffn_up_exps.weight is not part of a qwen35 model"},
		// Without output.weight the embeddings were taken as tied.
		{"misspelt output.weight", "", func(s *modeltest.Spec) {
			s.Tied = true
			s.Extra = map[string][]uint64{"output.weights": {256, 320}}
		}, "tensor output.weights is not part of a qwen35 model"},
		{"global tensor", "qwen3", func(s *modeltest.Spec) { s.Extra = map[string][]uint64{"rope_freqs.weight": {32}} },
			"tensor rope_freqs.weight is not part of a qwen3 model"},
		{"block number not plain", "", func(s *modeltest.Spec) { s.Extra = map[string][]uint64{"blk.04.nextn.x": {1}} },
			"tensor blk.04.nextn.x is not part of a qwen35 model"},
		{"control: MTP block with more tensors", "", func(s *modeltest.Spec) {
			s.Extra = map[string][]uint64{"blk.4.nextn.shared_head_norm.weight": {256}}
		}, ""},
		{"control: MTP block left out", "", func(s *modeltest.Spec) {
			s.Omit = map[string]bool{}
			for _, n := range tensorNames(t, modeltest.TinyQwen35()) {
				if strings.HasPrefix(n, "blk.4.") {
					s.Omit[n] = true
				}
			}
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tinySpec(tc.arch, tc.mutate)
			m, err := load(t, s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
				if m.NLayer != s.NLayer {
					t.Errorf("%d layers, want %d", m.NLayer, s.NLayer)
				}
			case err == nil:
				t.Fatalf("loaded; want an error mentioning %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestConfigNextN: nextn_predict_layers belongs to qwen35 only (on qwen3 it
// dropped real layers), and its count must match the file: the blocks past
// the main layers hold nextn tensors and the main ones do not.
func TestConfigNextN(t *testing.T) {
	u32 := gguf.Uint32Value
	cases := []struct {
		name   string
		arch   string // "" is qwen35
		mutate func(*modeltest.Spec)
		want   string // "" reads, with layers main layers
		layers int
	}{
		{"qwen3 with the key", "qwen3", func(s *modeltest.Spec) { s.KV = map[string]gguf.Value{"nextn_predict_layers": u32(1)} },
			"qwen3.nextn_predict_layers = 1, but qwen3 models have no MTP (nextn) layers: all qwen3.block_count = 3 layers are main layers", 0},
		{"control: qwen3 with a count of 0", "qwen3", func(s *modeltest.Spec) { s.KV = map[string]gguf.Value{"nextn_predict_layers": u32(0)} },
			"", 3},
		{"qwen35 count past the MTP blocks", "", func(s *modeltest.Spec) { s.KV = map[string]gguf.Value{"nextn_predict_layers": u32(2)} },
			"qwen35.nextn_predict_layers = 2 makes blk.3 an MTP layer, but it has no nextn tensors (blk.3.nextn.*)", 0},
		{"qwen35 count 0 with an MTP block", "", func(s *modeltest.Spec) { s.KV = map[string]gguf.Value{"nextn_predict_layers": u32(0)} },
			"qwen35.nextn_predict_layers = 0 makes blk.4 a main layer, but it holds nextn tensors", 0},
		{"qwen35 key missing with an MTP block", "", func(s *modeltest.Spec) { s.SkipKeys = map[string]bool{"nextn_predict_layers": true} },
			"qwen35.nextn_predict_layers = 0 makes blk.4 a main layer, but it holds nextn tensors", 0},
		{"control: qwen35 with its MTP block", "", func(*modeltest.Spec) {}, "", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tinySpec(tc.arch, tc.mutate)
			c, err := config(t, s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
				if c.NLayer != tc.layers {
					t.Errorf("%d main layers, want %d", c.NLayer, tc.layers)
				}
			case err == nil:
				t.Fatalf("read %d main layers; want an error mentioning %q", c.NLayer, tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestConfigArrays: rope.dimension_sections takes at most 4 non-negative
// integers and attention.recurrent_layers one integer or bool per block;
// anything else is refused, naming the key (and the length or entry).
func TestConfigArrays(t *testing.T) {
	const secs, rec = "rope.dimension_sections", "attention.recurrent_layers"
	cases := []struct {
		name string
		key  string
		v    gguf.Value
		want string // "" reads
	}{
		{"sections of bools", secs, gguf.BoolsValue([]bool{true, true, false, false}),
			"metadata key qwen35.rope.dimension_sections: want integers, got []bool"},
		{"sections of floats", secs, gguf.Float32sValue([]float32{11, 11, 10, 0}),
			"metadata key qwen35.rope.dimension_sections: want integers, got []float32"},
		{"negative section", secs, gguf.Int32sValue([]int32{11, -1, 10, 0}),
			"metadata key qwen35.rope.dimension_sections: entry 1 is -1, want a non-negative integer"},
		{"five sections", secs, gguf.Int32sValue([]int32{11, 11, 10, 0, 5}),
			"metadata key qwen35.rope.dimension_sections has 5 entries, at most 4 allowed"},
		{"sections not an array", secs, gguf.Int32Value(11),
			"metadata key qwen35.rope.dimension_sections: want an array, got int32"},
		{"control: three uint32 sections", secs, gguf.Uint32sValue([]uint32{24, 20, 20}), ""},
		{"schedule longer than block_count", rec, gguf.BoolsValue([]bool{true, false, true, false, false, true}),
			"metadata key qwen35.attention.recurrent_layers has 6 entries, more than qwen35.block_count = 5"},
		{"negative schedule entry", rec, gguf.Int32sValue([]int32{1, -1, 1, 0}),
			"metadata key qwen35.attention.recurrent_layers: entry 1 is -1, want a non-negative integer"},
		{"control: schedule of integers", rec, gguf.Uint8sValue([]uint8{1, 0, 1, 0, 0}), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := modeltest.TinyQwen35()
			s.KV = map[string]gguf.Value{tc.key: tc.v}
			c, err := config(t, s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && tc.key == secs:
				if c.RopeSections != [4]int{24, 20, 20, 0} {
					t.Errorf("RopeSections %v, want [24 20 20 0]", c.RopeSections)
				}
			case tc.want == "":
				want := []model.LayerKind{model.LayerRecurrent, model.LayerAttention, model.LayerRecurrent, model.LayerAttention}
				if len(c.Kinds) != len(want) {
					t.Fatalf("kinds %v, want %v", c.Kinds, want)
				}
				for i := range want {
					if c.Kinds[i] != want[i] {
						t.Errorf("kinds %v, want %v", c.Kinds, want)
						break
					}
				}
			case err == nil:
				t.Fatalf("read; want an error mentioning %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestConfigHugeArrays: a huge array is refused by its length without
// being copied (a 100M-entry rope.dimension_sections cost ~1 GB).
func TestConfigHugeArrays(t *testing.T) {
	const n = 1 << 22 // 16 MiB as int32 in the file; a copy as []int is 32 MiB
	cases := []struct {
		key  string
		v    gguf.Value
		want string
	}{
		{"rope.dimension_sections", gguf.Int32sValue(make([]int32, n)),
			"metadata key qwen35.rope.dimension_sections has 4194304 entries, at most 4 allowed"},
		{"attention.recurrent_layers", gguf.BoolsValue(make([]bool, n)),
			"metadata key qwen35.attention.recurrent_layers has 4194304 entries, more than qwen35.block_count = 5"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			s := modeltest.TinyQwen35()
			s.KV = map[string]gguf.Value{tc.key: tc.v}
			f := open(t, writeSpec(t, s))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := model.ConfigFromGGUF(f)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("reading the config allocated %d bytes: the array was copied", alloc)
			}
		})
	}
}

// TestConfigNoLayers: block_count 0 is reported as such, not as a
// nextn_predict_layers (a key the file may lack) that is too large.
func TestConfigNoLayers(t *testing.T) {
	for _, s := range []modeltest.Spec{modeltest.TinyQwen3(), modeltest.TinyQwen35()} {
		t.Run(s.Arch, func(t *testing.T) {
			s.KV = map[string]gguf.Value{"block_count": gguf.Uint32Value(0)}
			want := s.Arch + ".block_count is 0: the file has no layers"
			if _, err := config(t, s); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want one mentioning %q", err, want)
			}
		})
	}
}

// tinySpec is the tiny model of arch ("qwen3"; else qwen35) with mutate
// applied: the cases of the table tests here.
func tinySpec(arch string, mutate func(*modeltest.Spec)) modeltest.Spec {
	s := modeltest.TinyQwen35()
	if arch == "qwen3" {
		s = modeltest.TinyQwen3()
	}
	mutate(&s)
	return s
}
