package model_test

import (
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

func config(t *testing.T, s modeltest.Spec) (*model.Config, error) {
	t.Helper()
	return model.ConfigFromGGUF(open(t, writeSpec(t, s)))
}

// TestConfigDefaults: the optional keys take the defaults llama.cpp gives
// them. Expected values come from the spec and the defaults' definitions.
func TestConfigDefaults(t *testing.T) {
	s := modeltest.TinyQwen3() // n_embd 256, 4 heads
	s.SkipKeys = map[string]bool{
		"attention.head_count_kv": true, "attention.key_length": true, "attention.value_length": true,
		"rope.freq_base": true, "rope.dimension_count": true, "context_length": true,
	}
	c, err := config(t, s)
	if err != nil {
		t.Fatal(err)
	}
	// head_count_kv = head_count; key_length = 256/4; value_length and
	// rope.dimension_count = key_length; freq_base 10000; no context length.
	if c.NHeadKV != 4 || c.HeadDimK != 64 || c.HeadDimV != 64 || c.NRot != 64 ||
		c.RopeBase != 10000 || c.ContextLength != 0 || c.NNextN != 0 || c.NLayer != 3 {
		t.Errorf("defaults: kv %d key %d value %d rot %d base %g ctx %d nextn %d layers %d",
			c.NHeadKV, c.HeadDimK, c.HeadDimV, c.NRot, c.RopeBase, c.ContextLength, c.NNextN, c.NLayer)
	}

	// qwen35 without full_attention_interval: interval 4, so of 4 main
	// layers only layer 3 ((3+1) % 4 == 0) is attention.
	s = modeltest.TinyQwen35()
	s.SkipKeys = map[string]bool{"full_attention_interval": true}
	c, err = config(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.LayerKind{model.LayerRecurrent, model.LayerRecurrent, model.LayerRecurrent, model.LayerAttention}
	for i, k := range want {
		if c.Kinds[i] != k {
			t.Errorf("layer %d: %v, want %v", i, c.Kinds[i], k)
		}
	}
	if got, want := c.String(), "qwen35: 4 layers (1 attention, 3 recurrent), embd 256, ff 512, vocab 320, heads 4/2×64, rope 16 dims base 10000"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// rope.dimension_sections as written by modeltest: [11 11 10 0].
	if c.RopeSections != [4]int{11, 11, 10, 0} {
		t.Errorf("RopeSections %v", c.RopeSections)
	}
	// Tiled V heads (reference: V head h reads K head h % H_k), H_v 4, H_k 2.
	for h, want := range []int{0, 1, 0, 1} {
		if got := c.SSMKHead(h); got != want {
			t.Errorf("SSMKHead(%d) = %d, want %d", h, got, want)
		}
	}
}

// TestConfigBounds: the smallest and largest values each check accepts load.
func TestConfigBounds(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*modeltest.Spec)
		check  func(*model.Config) bool
	}{
		{"conv kernel 2", func(s *modeltest.Spec) { s.ConvKernel = 2 },
			func(c *model.Config) bool { return c.SSMConvKernel == 2 }},
		{"context length 0 (unknown)", func(s *modeltest.Spec) { s.ContextLength = 0 },
			func(c *model.Config) bool { return c.ContextLength == 0 }},
		{"rope over the whole head", func(s *modeltest.Spec) { s.NRot = s.HeadDim },
			func(c *model.Config) bool { return c.NRot == 64 }},
		{"rope of 2 dims", func(s *modeltest.Spec) { s.NRot = 2 },
			func(c *model.Config) bool { return c.NRot == 2 }},
		{"feed forward of 1", func(s *modeltest.Spec) { s.NFF = 1 },
			func(c *model.Config) bool { return c.NFF == 1 }},
		{"vocabulary of 1", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"token_embd.weight": {256, 1}}
		}, func(c *model.Config) bool { return c.NVocab == 1 }},
		{"integer key at MaxInt32", func(s *modeltest.Spec) {
			s.KV = map[string]gguf.Value{"context_length": gguf.Uint32Value(math.MaxInt32)}
		}, func(c *model.Config) bool { return c.ContextLength == math.MaxInt32 }},
		{"head count at MaxDim", func(s *modeltest.Spec) { // no attention layer: no tensor pins it
			s.NNextN = 0
			s.RecurrentLyrs = []bool{true, true, true, true}
			s.NHead, s.NHeadKV = model.MaxDim, 1
		}, func(c *model.Config) bool { return c.NHead == 1<<24 }},
		{"vocabulary at MaxDim", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"token_embd.weight": {0, 1 << 24}}
		}, func(c *model.Config) bool { return c.NVocab == 1<<24 }},
		{"nextn one below block_count", func(s *modeltest.Spec) {
			s.NLayer, s.NNextN = 1, 4 // blocks 1-4 are MTP blocks, with nextn tensors
		}, func(c *model.Config) bool { return c.NLayer == 1 && c.NNextN == 4 && c.NLayerAll == 5 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := modeltest.TinyQwen35()
			tc.mutate(&s)
			c, err := config(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
}

// TestConfigErrors: every metadata check refuses a hostile or broken value
// with an error that names the key and the limit, and never panics.
func TestConfigErrors(t *testing.T) {
	u32 := func(x uint32) gguf.Value { return gguf.Uint32Value(x) }
	kv := func(key string, v gguf.Value) func(*modeltest.Spec) {
		return func(s *modeltest.Spec) { s.KV = map[string]gguf.Value{key: v} }
	}
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		arch   string // "" is qwen35
		mutate func(*modeltest.Spec)
		want   string // a substring of the error
	}{
		{"head count 0", "qwen3", kv("attention.head_count", u32(0)),
			"qwen3.attention.head_count and qwen3.embedding_length must be positive (got 0, 256)"},
		{"embedding length 0", "qwen3", kv("embedding_length", u32(0)),
			"qwen3.attention.head_count and qwen3.embedding_length must be positive (got 4, 0)"},
		{"negative integer", "qwen3", kv("attention.head_count_kv", gguf.Int32Value(-2)),
			"metadata key qwen3.attention.head_count_kv: want a non-negative integer"},
		{"integer past int32", "qwen3", kv("feed_forward_length", gguf.Uint64Value(math.MaxInt32+1)),
			"metadata key qwen3.feed_forward_length: want a non-negative integer"},
		{"float for an integer", "qwen3", kv("block_count", gguf.Float32Value(3)),
			"metadata key qwen3.block_count: want a non-negative integer"},
		{"string for a float", "qwen3", kv("attention.layer_norm_rms_epsilon", gguf.StringValue("1e-6")),
			"metadata key qwen3.attention.layer_norm_rms_epsilon: want a float"},
		{"missing float", "qwen3", func(s *modeltest.Spec) { s.SkipKeys = map[string]bool{"attention.layer_norm_rms_epsilon": true} },
			"missing metadata key qwen3.attention.layer_norm_rms_epsilon"},
		{"rope base not a float", "qwen3", kv("rope.freq_base", u32(10000)),
			"metadata key qwen3.rope.freq_base: want a float"},
		{"nextn equal to block_count", "", kv("nextn_predict_layers", u32(5)),
			"qwen35.nextn_predict_layers = 5 must be below qwen35.block_count = 5"},
		{"token_embd 1-D", "qwen3", func(s *modeltest.Spec) { s.Shape = map[string][]uint64{"token_embd.weight": {256}} },
			"tensor token_embd.weight: shape [256] is not 2-D"},
		{"block past block_count", "", func(s *modeltest.Spec) { s.Extra = map[string][]uint64{"blk.5.x": {1}} },
			"qwen35.block_count = 5, but the file has tensors of blk.5"},
		{"no blk.0, a blk name that is not a number", "qwen3", func(s *modeltest.Spec) {
			s.Omit = map[string]bool{}
			for _, n := range tensorNames(t, modeltest.TinyQwen3()) {
				if strings.HasPrefix(n, "blk.0.") {
					s.Omit[n] = true
				}
			}
			s.Extra = map[string][]uint64{"blk.x.weight": {1}}
		}, "no tensors blk.0.*"},
		{"feed forward 0", "qwen3", func(s *modeltest.Spec) { s.NFF = 0 },
			"feed_forward_length 0 and vocabulary 320 must be positive"},
		{"vocabulary 0", "qwen3", func(s *modeltest.Spec) { s.Shape = map[string][]uint64{"token_embd.weight": {256, 0}} },
			"feed_forward_length 512 and vocabulary 0 must be positive"},
		// head_count_kv 0 divided head_count by zero unless refused first.
		{"kv heads 0", "qwen3", kv("attention.head_count_kv", u32(0)),
			"head_count 4 is not a multiple of head_count_kv 0"},
		{"kv heads not a divisor", "qwen3", kv("attention.head_count_kv", u32(3)),
			"head_count 4 is not a multiple of head_count_kv 3"},
		{"key length 0", "qwen3", kv("attention.key_length", u32(0)),
			"key_length 0 and value_length 64 must be positive"},
		{"value length 0", "qwen3", kv("attention.value_length", u32(0)),
			"key_length 64 and value_length 0 must be positive"},
		{"key and value lengths differ", "qwen3", kv("attention.value_length", u32(32)),
			"key_length 64 != value_length 32"},
		{"rope 0 dims", "qwen3", func(s *modeltest.Spec) { s.NRot = 0 },
			"rope.dimension_count 0 must be even and within head dim 64"},
		{"rope odd dims", "qwen3", func(s *modeltest.Spec) { s.NRot = 15 },
			"rope.dimension_count 15 must be even and within head dim 64"},
		{"rope past the head", "qwen3", func(s *modeltest.Spec) { s.NRot = 66 },
			"rope.dimension_count 66 must be even and within head dim 64"},
		{"epsilon 0", "qwen3", func(s *modeltest.Spec) { s.NormEps = 0 },
			"rms epsilon 0 and rope base 1e+06 must be positive and finite"},
		{"epsilon NaN", "qwen3", func(s *modeltest.Spec) { s.NormEps = nan },
			"rms epsilon NaN and rope base 1e+06 must be positive and finite"},
		{"rope base 0", "qwen3", func(s *modeltest.Spec) { s.RopeBase = 0 },
			"rms epsilon 1e-06 and rope base 0 must be positive and finite"},
		{"rope base negative", "qwen3", func(s *modeltest.Spec) { s.RopeBase = -1 },
			"rms epsilon 1e-06 and rope base -1 must be positive and finite"},
		{"ssm key 0", "", func(s *modeltest.Spec) { s.GroupCount = 0 },
			"metadata key qwen35.ssm.group_count must be positive"},
		{"inner size not a multiple of V heads", "", kv("ssm.inner_size", u32(255)),
			"qwen35.ssm.inner_size = 255 is not a multiple of qwen35.ssm.time_step_rank = 4"},
		{"V heads not a multiple of K heads", "", func(s *modeltest.Spec) { s.GroupCount = 3 },
			"qwen35.ssm.time_step_rank = 4 (V heads) is not a multiple of qwen35.ssm.group_count = 3"},
		{"interval 0", "", kv("full_attention_interval", u32(0)),
			"metadata key qwen35.full_attention_interval must be positive"},
		{"schedule too short", "", kv("attention.recurrent_layers", gguf.BoolsValue([]bool{true, false, true})),
			"qwen35.attention.recurrent_layers has 3 entries, want at least 4 (main layers)"},
		{"schedule not an array", "", kv("attention.recurrent_layers", u32(1)),
			"metadata key qwen35.attention.recurrent_layers: want an array"},
		{"schedule of strings", "", kv("attention.recurrent_layers", gguf.StringsValue([]string{"a", "b", "c", "d"})),
			"metadata key qwen35.attention.recurrent_layers: want integers or bools"},
		{"rope sections missing", "", func(s *modeltest.Spec) { s.SkipKeys = map[string]bool{"rope.dimension_sections": true} },
			"missing metadata key qwen35.rope.dimension_sections"},
		{"key dim past MaxDim", "", kv("ssm.state_size", u32(model.MaxDim+1)),
			"qwen35.ssm.state_size = 16777217 is more than 16777216"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tinySpec(tc.arch, tc.mutate)
			c, err := config(t, s)
			if err == nil {
				t.Fatalf("no error (config %v), want one mentioning %q", c, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestCheckContext: a sequence may be as long as the training context, or
// MaxContext (2^24) without one; the error names the limit and its key.
func TestCheckContext(t *testing.T) {
	cases := []struct {
		ctx, n, max int
		want        string // "" accepts n
	}{
		{256, 256, 256, ""},
		{256, 257, 256, "257 positions are past the model's context length 256 (qwen3.context_length)"},
		{0, 1 << 24, 1 << 24, ""},
		{0, 1<<24 + 1, 1 << 24, "16777217 positions are past memra's limit of 16777216"},
		{1 << 30, 1 << 24, 1 << 24, ""},
		{1 << 30, 1<<24 + 1, 1 << 24, "16777217 positions are past memra's limit of 16777216"},
		{1, 1, 1, ""},
		{1, 2, 1, "2 positions are past the model's context length 1"},
	}
	for _, tc := range cases {
		c := &model.Config{Arch: model.ArchQwen3, ContextLength: tc.ctx}
		err := c.CheckContext(tc.n)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("context %d, %d positions: %v", tc.ctx, tc.n, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("context %d, %d positions: error %v, want %q", tc.ctx, tc.n, err, tc.want)
		}
		if got := c.MaxPositions(); got != tc.max {
			t.Errorf("context %d: MaxPositions %d, want %d", tc.ctx, got, tc.max)
		}
	}
}
