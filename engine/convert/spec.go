package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/memra-ai/memra/engine/model"
)

// Architecture names as written to general.architecture.
const (
	ArchQwen35 = "qwen35"
	ArchQwen3  = "qwen3"
)

// Spec is everything about a model's shape that decides its GGUF tensors and
// architecture metadata. Convert fills it from config.json; synth from a
// preset. One Spec always yields the same tensor table (see Plan).
type Spec struct {
	Arch string // ArchQwen35 or ArchQwen3

	NEmbd   int // hidden size
	NLayer  int // main layers (MTP layers not counted)
	NMTP    int // MTP (nextn) layers appended after the main layers; 0 or 1
	NFF     int // FFN intermediate size
	NHead   int // attention query heads
	NHeadKV int // attention key/value heads
	HeadDim int // attention head dim (256 for qwen35, 128 for qwen3)
	NVocab  int // config vocab_size (token_embd rows)

	ContextLength int
	RMSEps        float32
	RopeTheta     float32
	RopeDims      int      // rotary dims (qwen35: HeadDim × partial_rotary_factor)
	RopeSections  [4]int32 // qwen35 rope.dimension_sections
	// RopeSectionsFromConfig records whether the sections came from the
	// config's mrope_section: llama.cpp writes the key at a different
	// position when it falls back to the default [11,11,10,0].
	RopeSectionsFromConfig bool

	// Gated DeltaNet (qwen35 only).
	ConvKernel       int    // linear_conv_kernel_dim (4)
	SSMKHeadDim      int    // linear_key_head_dim (128) = ssm.state_size
	SSMVHeadDim      int    // linear_value_head_dim (128)
	SSMKHeads        int    // linear_num_key_heads = ssm.group_count
	SSMVHeads        int    // linear_num_value_heads = ssm.time_step_rank
	FullAttnInterval int    // every n-th layer is full attention
	Recurrent        []bool // per main layer: true for Gated DeltaNet

	Tied bool // no output.weight: the output projection reuses token_embd
}

// KDim is the total key (and query) width of a GDN layer: H_k × d_k.
func (s *Spec) KDim() int { return s.SSMKHeads * s.SSMKHeadDim }

// VDim is the total value width of a GDN layer: H_v × d_v.
func (s *Spec) VDim() int { return s.SSMVHeads * s.SSMVHeadDim }

// ConvDim is the GDN conv channel count: q, k and v.
func (s *Spec) ConvDim() int { return 2*s.KDim() + s.VDim() }

// BlockCount is the GGUF block_count: main plus MTP layers.
func (s *Spec) BlockCount() int { return s.NLayer + s.NMTP }

// IsRecurrent reports whether block il is a Gated DeltaNet layer (MTP
// layers are attention).
func (s *Spec) IsRecurrent(il int) bool {
	return s.Arch == ArchQwen35 && il < s.NLayer && s.Recurrent[il]
}

// maxLayers bounds num_hidden_layers: far more than any model converted
// (Qwen3.5-27B has 64).
const maxLayers = 4096

// checkLayers refuses a layer count outside [1, maxLayers].
func checkLayers(n int) error {
	if n <= 0 || n > maxLayers {
		return fmt.Errorf("num_hidden_layers = %d is out of range [1, %d]", n, maxLayers)
	}
	return nil
}

// Validate checks the dimensions for consistency and sane limits, so a bad
// config fails here with its key named instead of deep in the conversion.
func (s *Spec) Validate() error {
	if err := checkLayers(s.NLayer); err != nil { // a tighter bound than pos's
		return err
	}
	pos := func(name string, v int) error {
		if v <= 0 || v > model.MaxDim {
			return fmt.Errorf("%s = %d is out of range [1, %d]", name, v, model.MaxDim)
		}
		return nil
	}
	for _, c := range []struct {
		n string
		v int
	}{
		{"hidden_size", s.NEmbd}, {"num_hidden_layers", s.NLayer}, {"intermediate_size", s.NFF},
		{"num_attention_heads", s.NHead}, {"num_key_value_heads", s.NHeadKV}, {"head_dim", s.HeadDim},
		{"vocab_size", s.NVocab}, {"max_position_embeddings", s.ContextLength},
	} {
		if err := pos(c.n, c.v); err != nil {
			return err
		}
	}
	if s.NHead%s.NHeadKV != 0 {
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", s.NHead, s.NHeadKV)
	}
	if s.NMTP < 0 || s.NMTP > 1 {
		return fmt.Errorf("mtp_num_hidden_layers = %d: only 0 or 1 is supported", s.NMTP)
	}
	// As float32, the type the file stores them in: 1e39 would be +Inf.
	if !(s.RMSEps > 0) || !(s.RopeTheta > 0) || math.IsInf(float64(s.RMSEps), 0) || math.IsInf(float64(s.RopeTheta), 0) {
		return fmt.Errorf("rms_norm_eps %g and rope_theta %g must be positive and finite as float32", s.RMSEps, s.RopeTheta)
	}
	if s.RopeDims%2 != 0 { // rotary dimensions rotate in pairs
		return fmt.Errorf("rotary dims %d (from head_dim %d) must be even", s.RopeDims, s.HeadDim)
	}
	switch s.Arch {
	case ArchQwen3:
		return nil
	case ArchQwen35:
	default:
		return fmt.Errorf("unknown architecture %q", s.Arch)
	}
	for _, c := range []struct {
		n string
		v int
	}{
		{"linear_conv_kernel_dim", s.ConvKernel}, {"linear_key_head_dim", s.SSMKHeadDim},
		{"linear_value_head_dim", s.SSMVHeadDim}, {"linear_num_key_heads", s.SSMKHeads},
		{"linear_num_value_heads", s.SSMVHeads}, {"full_attention_interval", s.FullAttnInterval},
	} {
		if err := pos(c.n, c.v); err != nil {
			return err
		}
	}
	if s.ConvKernel < 2 { // the conv keeps kernel − 1 past inputs
		return fmt.Errorf("linear_conv_kernel_dim = %d must be at least 2", s.ConvKernel)
	}
	// The file stores H_v × d_v as ssm.inner_size, a uint32 the loader
	// bounds by model.MaxDim: past that it would not load, or wrap.
	if s.VDim() > model.MaxDim {
		return fmt.Errorf("linear_num_value_heads × linear_value_head_dim = %d × %d = %d (ssm.inner_size) is more than %d", s.SSMVHeads, s.SSMVHeadDim, s.VDim(), model.MaxDim)
	}
	if s.SSMVHeads%s.SSMKHeads != 0 {
		return fmt.Errorf("linear_num_value_heads %d is not a multiple of linear_num_key_heads %d", s.SSMVHeads, s.SSMKHeads)
	}
	if len(s.Recurrent) != s.NLayer {
		return fmt.Errorf("layer schedule has %d entries for %d layers", len(s.Recurrent), s.NLayer)
	}
	if s.RopeDims <= 0 || s.RopeDims > s.HeadDim {
		return fmt.Errorf("rotary dims %d out of range for head_dim %d", s.RopeDims, s.HeadDim)
	}
	return nil
}

// validateAt is s.Validate with the config file named.
func validateAt(s *Spec, path string) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// hfConfig is the subset of a Hugging Face config.json we read. Fields are
// pointers where absence matters.
type hfConfig struct {
	Architectures []string `json:"architectures"`
	ModelType     string   `json:"model_type"`

	VocabSize             *int     `json:"vocab_size"`
	HiddenSize            *int     `json:"hidden_size"`
	IntermediateSize      *int     `json:"intermediate_size"`
	NumHiddenLayers       *int     `json:"num_hidden_layers"`
	NumAttentionHeads     *int     `json:"num_attention_heads"`
	NumKeyValueHeads      *int     `json:"num_key_value_heads"`
	HeadDim               *int     `json:"head_dim"`
	MaxPositionEmbeddings *int     `json:"max_position_embeddings"`
	RMSNormEps            *float64 `json:"rms_norm_eps"`
	RopeTheta             *float64 `json:"rope_theta"`
	PartialRotaryFactor   *float64 `json:"partial_rotary_factor"`
	RopeParameters        *struct {
		RopeType            string   `json:"rope_type"`
		Type                string   `json:"type"`
		RopeTheta           *float64 `json:"rope_theta"`
		PartialRotaryFactor *float64 `json:"partial_rotary_factor"`
		MropeSection        []int    `json:"mrope_section"`
		Factor              *float64 `json:"factor"`
	} `json:"rope_parameters"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	TieWordEmbeddings *bool           `json:"tie_word_embeddings"`

	LinearConvKernelDim   *int     `json:"linear_conv_kernel_dim"`
	LinearKeyHeadDim      *int     `json:"linear_key_head_dim"`
	LinearValueHeadDim    *int     `json:"linear_value_head_dim"`
	LinearNumKeyHeads     *int     `json:"linear_num_key_heads"`
	LinearNumValueHeads   *int     `json:"linear_num_value_heads"`
	LayerTypes            []string `json:"layer_types"`
	FullAttentionInterval *int     `json:"full_attention_interval"`
	MTPNumHiddenLayers    *int     `json:"mtp_num_hidden_layers"`

	TextConfig json.RawMessage `json:"text_config"`
}

// readHFConfig reads dir/config.json, merging text_config into the top level
// as llama.cpp does for multimodal wrappers.
func readHFConfig(dir string) (*hfConfig, error) {
	path := filepath.Join(dir, "config.json")
	b, err := readJSONFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no config.json: give a Hugging Face checkpoint's directory (config.json, *.safetensors, the tokenizer files): %w", dir, err)
	}
	if err != nil {
		return nil, err
	}
	return parseHFConfig(b, path)
}

// parseHFConfig is readHFConfig on the contents b of the config file path.
func parseHFConfig(b []byte, path string) (*hfConfig, error) {
	var top map[string]json.RawMessage
	if err := decodeJSON(b, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tc, ok := top["text_config"]; ok && string(tc) != "null" {
		var text map[string]json.RawMessage
		if err := decodeJSON(tc, &text); err != nil {
			return nil, fmt.Errorf("%s: text_config: %w", path, err)
		}
		for k, v := range text {
			if k == "architectures" && string(v) == "null" {
				continue // unset: the wrapper's list names the class, as llama.cpp takes it
			}
			top[k] = v
		}
	}
	merged, _ := json.Marshal(top)
	var c hfConfig
	if err := decodeJSON(merged, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// hfArchitectures maps Hugging Face class names to our architectures.
var hfArchitectures = map[string]string{
	"Qwen3_5ForCausalLM":              ArchQwen35,
	"Qwen3_5ForConditionalGeneration": ArchQwen35,
	"Qwen3ForCausalLM":                ArchQwen3,
}

// specFromHF builds a Spec from a Hugging Face config.
func specFromHF(c *hfConfig, path string) (*Spec, error) {
	if len(c.Architectures) == 0 {
		return nil, fmt.Errorf("%s: no \"architectures\" entry", path)
	}
	arch, ok := hfArchitectures[c.Architectures[0]]
	if !ok {
		return nil, fmt.Errorf("%s: architecture %q is not supported (supported: Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration, Qwen3ForCausalLM)", path, c.Architectures[0])
	}
	need := func(name string, p *int) (int, error) {
		if p == nil {
			return 0, fmt.Errorf("%s: missing %q", path, name)
		}
		return *p, nil
	}
	s := &Spec{Arch: arch}
	var err error
	for _, f := range []struct {
		name string
		p    *int
		dst  *int
	}{
		{"vocab_size", c.VocabSize, &s.NVocab},
		{"hidden_size", c.HiddenSize, &s.NEmbd},
		{"intermediate_size", c.IntermediateSize, &s.NFF},
		{"num_hidden_layers", c.NumHiddenLayers, &s.NLayer},
		{"num_attention_heads", c.NumAttentionHeads, &s.NHead},
		{"num_key_value_heads", c.NumKeyValueHeads, &s.NHeadKV},
		{"max_position_embeddings", c.MaxPositionEmbeddings, &s.ContextLength},
	} {
		if *f.dst, err = need(f.name, f.p); err != nil {
			return nil, err
		}
	}
	if c.HeadDim != nil {
		s.HeadDim = *c.HeadDim
	} else if s.NHead > 0 {
		s.HeadDim = s.NEmbd / s.NHead
	}
	if c.RMSNormEps == nil {
		return nil, fmt.Errorf("%s: missing \"rms_norm_eps\"", path)
	}
	s.RMSEps = float32(*c.RMSNormEps)
	theta := c.RopeTheta
	prf := c.PartialRotaryFactor
	var sections []int
	if rp := c.RopeParameters; rp != nil {
		if rp.RopeTheta != nil {
			theta = rp.RopeTheta
		}
		if rp.PartialRotaryFactor != nil {
			prf = rp.PartialRotaryFactor
		}
		sections = rp.MropeSection
		rt := rp.RopeType
		if rt == "" {
			rt = rp.Type
		}
		if rt != "" && rt != "default" {
			return nil, fmt.Errorf("%s: rope_type %q is not supported (only \"default\")", path, rt)
		}
	}
	if len(c.RopeScaling) > 0 && string(c.RopeScaling) != "null" && c.RopeParameters == nil {
		return nil, fmt.Errorf("%s: rope_scaling is not supported", path)
	}
	if theta == nil {
		return nil, fmt.Errorf("%s: missing rope_theta (top level or in rope_parameters)", path)
	}
	s.RopeTheta = float32(*theta)
	s.Tied = c.TieWordEmbeddings != nil && *c.TieWordEmbeddings
	if c.MTPNumHiddenLayers != nil && arch == ArchQwen35 {
		s.NMTP = *c.MTPNumHiddenLayers
	}

	if arch == ArchQwen3 {
		s.RopeDims = s.HeadDim
		return s, validateAt(s, path)
	}

	for _, f := range []struct {
		name string
		p    *int
		dst  *int
	}{
		{"linear_conv_kernel_dim", c.LinearConvKernelDim, &s.ConvKernel},
		{"linear_key_head_dim", c.LinearKeyHeadDim, &s.SSMKHeadDim},
		{"linear_value_head_dim", c.LinearValueHeadDim, &s.SSMVHeadDim},
		{"linear_num_key_heads", c.LinearNumKeyHeads, &s.SSMKHeads},
		{"linear_num_value_heads", c.LinearNumValueHeads, &s.SSMVHeads},
	} {
		if *f.dst, err = need(f.name, f.p); err != nil {
			return nil, err
		}
	}
	// partial_rotary_factor defaults to 0.25 (transformers and llama.cpp).
	factor := 0.25
	if prf != nil {
		factor = *prf
	}
	s.RopeDims = int(float64(s.HeadDim) * factor)
	s.RopeSections = [4]int32{11, 11, 10, 0}
	if len(sections) > 0 {
		if len(sections) > 4 {
			return nil, fmt.Errorf("%s: mrope_section has %d entries, at most 4 allowed", path, len(sections))
		}
		s.RopeSections = [4]int32{}
		for i, v := range sections {
			if v < 0 || v > math.MaxInt32 {
				return nil, fmt.Errorf("%s: mrope_section[%d] = %d out of range", path, i, v)
			}
			s.RopeSections[i] = int32(v)
		}
		s.RopeSectionsFromConfig = true
	}
	if err := schedule(s, c, path); err != nil {
		return nil, err
	}
	return s, validateAt(s, path)
}

// schedule fills s.Recurrent and s.FullAttnInterval. transformers saves
// layer_types and drops full_attention_interval, while GGUF stores only the
// interval (llama.cpp reads config's full_attention_interval, default 4), so
// the interval is derived from layer_types when present and must describe
// it exactly.
func schedule(s *Spec, c *hfConfig, path string) error {
	// Checked here, before the schedule is sized from it (Validate runs
	// after): -1 would panic in make, 2^40 exhaust memory.
	if err := checkLayers(s.NLayer); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(c.LayerTypes) == 0 {
		iv := 4
		if c.FullAttentionInterval != nil {
			iv = *c.FullAttentionInterval
		}
		if iv <= 0 {
			return fmt.Errorf("%s: full_attention_interval = %d", path, iv)
		}
		s.FullAttnInterval = iv
		s.Recurrent = intervalSchedule(s.NLayer, iv)
		return nil
	}
	if len(c.LayerTypes) != s.NLayer {
		return fmt.Errorf("%s: layer_types has %d entries for num_hidden_layers %d", path, len(c.LayerTypes), s.NLayer)
	}
	rec := make([]bool, s.NLayer)
	first := -1
	for i, t := range c.LayerTypes {
		switch t {
		case "linear_attention":
			rec[i] = true
		case "full_attention":
			if first < 0 {
				first = i
			}
		default:
			return fmt.Errorf("%s: layer_types[%d] = %q (want linear_attention or full_attention)", path, i, t)
		}
	}
	iv := first + 1
	if first < 0 {
		iv = s.NLayer + 1 // no attention layer at all
	}
	want := intervalSchedule(s.NLayer, iv)
	for i := range rec {
		if rec[i] != want[i] {
			return fmt.Errorf("%s: layer_types is not \"every %d-th layer is full attention\" (layer %d differs); GGUF qwen35 can only store that pattern", path, iv, i)
		}
	}
	if c.FullAttentionInterval != nil && *c.FullAttentionInterval != iv {
		return fmt.Errorf("%s: full_attention_interval %d disagrees with layer_types (interval %d)", path, *c.FullAttentionInterval, iv)
	}
	s.FullAttnInterval = iv
	s.Recurrent = rec
	return nil
}

// intervalSchedule is llama.cpp's rule: layer i is recurrent iff
// (i+1) % interval != 0.
func intervalSchedule(n, interval int) []bool {
	r := make([]bool, n)
	for i := range r {
		r[i] = (i+1)%interval != 0
	}
	return r
}
