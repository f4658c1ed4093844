// Package model turns a GGUF file into a validated model description: the
// configuration read from metadata and zero-copy views of every weight
// tensor. Backends (engine/cpu, engine/gpu) read only the Model struct, so a
// file is checked once here and nowhere else. engine/cpu's Example runs a
// loaded model from file to text.
package model

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/memra-ai/memra/gguf"
)

// Architectures this package loads (the value of general.architecture).
const (
	ArchQwen35 = "qwen35" // Qwen3.5 dense: Gated DeltaNet + gated full attention
	ArchQwen3  = "qwen3"  // Qwen3 dense: every layer attention
)

// SupportedArchs lists the architectures Load accepts, sorted.
func SupportedArchs() []string { return []string{ArchQwen3, ArchQwen35} }

// LayerKind says which token mixer a layer uses.
type LayerKind uint8

const (
	// LayerAttention is (gated) softmax attention with a KV cache.
	LayerAttention LayerKind = iota
	// LayerRecurrent is a Gated DeltaNet layer with conv and recurrent state.
	LayerRecurrent
)

func (k LayerKind) String() string {
	if k == LayerRecurrent {
		return "recurrent"
	}
	return "attention"
}

// Config holds the hyperparameters of a model, read from GGUF metadata. All
// dimensions are element counts.
type Config struct {
	Arch string // general.architecture: ArchQwen35 or ArchQwen3

	NLayer    int // main layers executed by the forward pass
	NLayerAll int // block_count: main layers plus MTP (nextn) layers
	NNextN    int // nextn_predict_layers (qwen35 only): MTP layers stored after the main ones (skipped)

	NEmbd  int // embedding_length (hidden size)
	NFF    int // feed_forward_length (SwiGLU inner size)
	NVocab int // rows of token_embd (its shape[1])

	NHead    int // attention.head_count (query heads)
	NHeadKV  int // attention.head_count_kv (KV heads, GQA)
	HeadDimK int // attention.key_length (Dh of q and k)
	HeadDimV int // attention.value_length (Dh of v)

	NormEps      float32 // attention.layer_norm_rms_epsilon; also the gated norm's eps
	RopeBase     float32 // rope.freq_base
	NRot         int     // rope.dimension_count: dims [0, NRot) of each head are rotated (NEOX pairs i, i+NRot/2)
	RopeSections [4]int  // rope.dimension_sections (qwen35); for text tokens the rope is plain NEOX

	ContextLength int // context_length: the training context (a default cap, not a limit)

	// Gated DeltaNet (qwen35 only; zero for qwen3).
	SSMConvKernel int // ssm.conv_kernel (4): taps of the causal depthwise conv
	SSMStateSize  int // ssm.state_size (S = 128): K head dim
	SSMGroupCount int // ssm.group_count (H_k): K heads
	SSMNumVHeads  int // ssm.time_step_rank (H_v): V heads
	SSMInnerSize  int // ssm.inner_size = H_v × V head dim
	SSMHeadDimV   int // SSMInnerSize / SSMNumVHeads

	// AttnOutputGate: attn_q holds per head q then a sigmoid gate applied to
	// the attention output (qwen35); false for qwen3.
	AttnOutputGate bool

	// TiedOutput: the file has no output.weight and the LM head is token_embd.
	TiedOutput bool

	// Kinds[i] is the token mixer of main layer i (len NLayer).
	Kinds []LayerKind
}

// SSMKeyDim is K = H_k·S, the width of q and of k in a Gated DeltaNet layer.
func (c *Config) SSMKeyDim() int { return c.SSMGroupCount * c.SSMStateSize }

// SSMConvChannels is C = 2K + V, the channels of attn_qkv and the conv.
func (c *Config) SSMConvChannels() int { return 2*c.SSMKeyDim() + c.SSMInnerSize }

// SSMKHead returns the K head that V head h reads. qwen35 files store V heads
// in tiled order (the converter reorders them), so V head h uses K head
// h % H_k; transformers' grouped order h / (H_v/H_k) is undone at conversion.
func (c *Config) SSMKHead(h int) int { return h % c.SSMGroupCount }

// NumAttention returns how many main layers are attention layers.
func (c *Config) NumAttention() int {
	n := 0
	for _, k := range c.Kinds {
		if k == LayerAttention {
			n++
		}
	}
	return n
}

// metadata gives typed access to "<arch>.key" values of any integer or
// float width, with errors that name the full key.
type metadata struct {
	arch string
	f    *gguf.File
}

func (m *metadata) full(key string) string { return m.arch + "." + key }

func (m *metadata) lookup(key string) (gguf.Value, bool) { return m.f.Lookup(m.full(key)) }

// int reads a required non-negative integer key of any integer width.
func (m *metadata) int(key string) (int, error) {
	v, ok := m.lookup(key)
	if !ok {
		return 0, fmt.Errorf("missing metadata key %s", m.full(key))
	}
	return m.toInt(key, v)
}

// intOr reads an optional integer key.
func (m *metadata) intOr(key string, def int) (int, error) {
	v, ok := m.lookup(key)
	if !ok {
		return def, nil
	}
	return m.toInt(key, v)
}

func (m *metadata) toInt(key string, v gguf.Value) (int, error) {
	x, ok := v.Int64()
	if !ok || x < 0 || x > math.MaxInt32 {
		return 0, fmt.Errorf("metadata key %s: want a non-negative integer, got %s %v", m.full(key), v.TypeName(), v)
	}
	return int(x), nil
}

// float reads a required float key (float32 or float64).
func (m *metadata) float(key string) (float32, error) {
	v, ok := m.lookup(key)
	if !ok {
		return 0, fmt.Errorf("missing metadata key %s", m.full(key))
	}
	x, ok := v.Float64()
	if !ok {
		return 0, fmt.Errorf("metadata key %s: want a float, got %s %v", m.full(key), v.TypeName(), v)
	}
	return float32(x), nil
}

// array returns an optional array of integers (with bools, of integers or
// bools); ok is false when absent. The array is not copied: a hostile file
// may hold a huge one, so callers read only the elements they need (elem).
func (m *metadata) array(key string, bools bool) (v gguf.Value, ok bool, err error) {
	v, ok = m.lookup(key)
	if !ok {
		return gguf.Value{}, false, nil
	}
	if v.Type() != gguf.ValueArray {
		return gguf.Value{}, true, fmt.Errorf("metadata key %s: want an array, got %s", m.full(key), v.TypeName())
	}
	switch v.ElemType() {
	case gguf.ValueUint8, gguf.ValueInt8, gguf.ValueUint16, gguf.ValueInt16,
		gguf.ValueUint32, gguf.ValueInt32, gguf.ValueUint64, gguf.ValueInt64:
		return v, true, nil
	case gguf.ValueBool:
		if bools {
			return v, true, nil
		}
	}
	want := "integers"
	if bools {
		want = "integers or bools"
	}
	return gguf.Value{}, true, fmt.Errorf("metadata key %s: want %s, got %s", m.full(key), want, v.TypeName())
}

// elem reads entry i of v, an array from array, as a non-negative integer
// (a bool as 0 or 1).
func (m *metadata) elem(key string, v gguf.Value, i int) (int, error) {
	e := v.Index(i)
	if b, ok := e.Bool(); ok {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	x, ok := e.Int64()
	if !ok || x < 0 || x > math.MaxInt32 {
		return 0, fmt.Errorf("metadata key %s: entry %d is %v, want a non-negative integer", m.full(key), i, e)
	}
	return int(x), nil
}

// ConfigFromGGUF reads the model configuration from the file's metadata and
// the token_embd shape. It does not look at other tensors; Load does.
func ConfigFromGGUF(f *gguf.File) (*Config, error) {
	archV, ok := f.Lookup("general.architecture")
	if !ok {
		return nil, fmt.Errorf("missing metadata key general.architecture")
	}
	arch, ok := archV.Str()
	if !ok {
		return nil, fmt.Errorf("metadata key general.architecture: want a string, got %s", archV.TypeName())
	}
	if arch != ArchQwen35 && arch != ArchQwen3 {
		return nil, fmt.Errorf("unsupported architecture %q (supported: %s)", arch, strings.Join(SupportedArchs(), ", "))
	}
	m := &metadata{arch: arch, f: f}
	c := &Config{Arch: arch}
	var err error
	ints := []struct {
		dst *int
		key string
	}{
		{&c.NLayerAll, "block_count"},
		{&c.NEmbd, "embedding_length"},
		{&c.NFF, "feed_forward_length"},
		{&c.NHead, "attention.head_count"},
	}
	for _, it := range ints {
		if *it.dst, err = m.int(it.key); err != nil {
			return nil, err
		}
	}
	if c.NLayerAll == 0 { // said before any check that compares other keys with it
		return nil, fmt.Errorf("metadata: %s is 0: the file has no layers", m.full("block_count"))
	}
	if c.NHeadKV, err = m.intOr("attention.head_count_kv", c.NHead); err != nil {
		return nil, err
	}
	if c.NHead == 0 || c.NEmbd == 0 {
		return nil, fmt.Errorf("metadata: %s and %s must be positive (got %d, %d)",
			m.full("attention.head_count"), m.full("embedding_length"), c.NHead, c.NEmbd)
	}
	if c.HeadDimK, err = m.intOr("attention.key_length", c.NEmbd/c.NHead); err != nil {
		return nil, err
	}
	if c.HeadDimV, err = m.intOr("attention.value_length", c.HeadDimK); err != nil {
		return nil, err
	}
	if c.NormEps, err = m.float("attention.layer_norm_rms_epsilon"); err != nil {
		return nil, err
	}
	c.RopeBase = 10000 // llama.cpp's default when rope.freq_base is absent
	if _, ok := m.lookup("rope.freq_base"); ok {
		if c.RopeBase, err = m.float("rope.freq_base"); err != nil {
			return nil, err
		}
	}
	if c.NRot, err = m.intOr("rope.dimension_count", c.HeadDimK); err != nil {
		return nil, err
	}
	if c.ContextLength, err = m.intOr("context_length", 0); err != nil {
		return nil, err
	}
	if c.NNextN, err = m.intOr("nextn_predict_layers", 0); err != nil {
		return nil, err
	}
	switch {
	case arch != ArchQwen35 && c.NNextN != 0:
		// Only qwen35 stores MTP layers: llama.cpp ignores the key on other
		// architectures and runs all block_count layers, so subtracting it
		// would drop real layers.
		return nil, fmt.Errorf("metadata: %s = %d, but %s models have no MTP (nextn) layers: all %s = %d layers are main layers, and the key does not belong in the file",
			m.full("nextn_predict_layers"), c.NNextN, arch, m.full("block_count"), c.NLayerAll)
	case c.NNextN >= c.NLayerAll:
		return nil, fmt.Errorf("metadata: %s = %d must be below %s = %d",
			m.full("nextn_predict_layers"), c.NNextN, m.full("block_count"), c.NLayerAll)
	}
	c.NLayer = c.NLayerAll - c.NNextN

	te, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("tensor token_embd.weight: missing (needed for the vocabulary size)")
	}
	if len(te.Shape) < 2 || slices.ContainsFunc(te.Shape[2:], func(d uint64) bool { return d != 1 }) {
		// ggml allows trailing 1s, as Load does for every tensor.
		return nil, fmt.Errorf("tensor token_embd.weight: shape %v is not 2-D [n_embd, n_vocab] (needed for the vocabulary size)", te.Shape)
	}
	c.NVocab = int(te.Shape[1])
	if c.NVocab > MaxDim {
		// Only the file's size bounds the rows, while token ids are int32 and
		// the GPU launchers take the vocabulary as int32: 2^32+5 rows ran
		// (as 5) over the first 5 logits.
		return nil, fmt.Errorf("tensor token_embd.weight: %d rows (the vocabulary) are more than %d, larger than any model this engine runs", c.NVocab, MaxDim)
	}

	if err := checkBlocks(f, m, c); err != nil {
		return nil, err
	}
	c.Kinds = make([]LayerKind, c.NLayer)
	switch arch {
	case ArchQwen3:
		// every layer attention, plain output
	case ArchQwen35:
		c.AttnOutputGate = true
		if err := readSSM(m, c); err != nil {
			return nil, err
		}
		if err := readSections(m, c); err != nil {
			return nil, err
		}
		if err := readSchedule(m, c); err != nil {
			return nil, err
		}
	}
	if err := checkDims(m, c); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// L2NormEps is the eps of the L2 norm of q and k in Gated DeltaNet layers
// (transformers' l2norm default; GGUF has no key for it).
const L2NormEps = 1e-6

// MaxDim bounds every dimension key (widths, head counts and sizes, SSM
// sizes) and the vocabulary (token_embd's rows). Load checks a key against tensor shapes only for the layer kinds
// the file has, so a key of an absent kind is otherwise unchecked: bounded,
// the buffers sized from it stay addressable and its products (2·H_k·S +
// inner, heads × head size) cannot overflow. The largest real value is
// under 2^18 (Qwen3.5-27B's 17,408-wide FFN).
const MaxDim = 1 << 24

// dim is a dimension key and its value in a Config.
type dim struct {
	key string
	v   int
}

// dimKeys are the keys MaxDim bounds, as the file names them (less the
// architecture's prefix): Load checks them on a file's metadata (checkDims)
// and Check on any Config.
func (c *Config) dimKeys() []dim {
	return []dim{
		{"embedding_length", c.NEmbd}, {"feed_forward_length", c.NFF},
		{"attention.head_count", c.NHead}, {"attention.head_count_kv", c.NHeadKV},
		{"attention.key_length", c.HeadDimK}, {"attention.value_length", c.HeadDimV},
		{"ssm.conv_kernel", c.SSMConvKernel}, {"ssm.state_size", c.SSMStateSize}, {"ssm.group_count", c.SSMGroupCount},
		{"ssm.time_step_rank", c.SSMNumVHeads}, {"ssm.inner_size", c.SSMInnerSize},
	}
}

// checkDims names the file's key past MaxDim (Check would name only the
// Config's value).
func checkDims(m *metadata, c *Config) error {
	for _, d := range c.dimKeys() {
		if d.v > MaxDim {
			return fmt.Errorf("metadata: %s = %d is more than %d, larger than any model this engine runs", m.full(d.key), d.v, MaxDim)
		}
	}
	return nil
}

func readSSM(m *metadata, c *Config) error {
	fields := []struct {
		dst *int
		key string
	}{
		{&c.SSMConvKernel, "ssm.conv_kernel"},
		{&c.SSMStateSize, "ssm.state_size"},
		{&c.SSMGroupCount, "ssm.group_count"},
		{&c.SSMNumVHeads, "ssm.time_step_rank"},
		{&c.SSMInnerSize, "ssm.inner_size"},
	}
	for _, fd := range fields {
		v, err := m.int(fd.key)
		if err != nil {
			return err
		}
		if v == 0 {
			return fmt.Errorf("metadata key %s must be positive", m.full(fd.key))
		}
		*fd.dst = v
	}
	if c.SSMConvKernel < 2 { // the conv keeps kernel − 1 past inputs per channel
		return fmt.Errorf("metadata: %s = %d must be at least 2", m.full("ssm.conv_kernel"), c.SSMConvKernel)
	}
	if c.SSMInnerSize%c.SSMNumVHeads != 0 {
		return fmt.Errorf("metadata: %s = %d is not a multiple of %s = %d",
			m.full("ssm.inner_size"), c.SSMInnerSize, m.full("ssm.time_step_rank"), c.SSMNumVHeads)
	}
	c.SSMHeadDimV = c.SSMInnerSize / c.SSMNumVHeads
	if c.SSMNumVHeads%c.SSMGroupCount != 0 {
		return fmt.Errorf("metadata: %s = %d (V heads) is not a multiple of %s = %d (K heads)",
			m.full("ssm.time_step_rank"), c.SSMNumVHeads, m.full("ssm.group_count"), c.SSMGroupCount)
	}
	return nil
}

// readSections reads rope.dimension_sections: at most 4 non-negative
// integers (llama.cpp's limit), the rest 0. More entries are refused rather
// than dropped.
func readSections(m *metadata, c *Config) error {
	const key = "rope.dimension_sections"
	v, ok, err := m.array(key, false)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("missing metadata key %s", m.full(key))
	}
	if n := v.Len(); n > len(c.RopeSections) {
		return fmt.Errorf("metadata key %s has %d entries, at most %d allowed", m.full(key), n, len(c.RopeSections))
	}
	for i := range v.Len() {
		if c.RopeSections[i], err = m.elem(key, v, i); err != nil {
			return err
		}
	}
	return nil
}

// readSchedule decides each main layer's kind: attention.recurrent_layers
// (per layer, non-zero = recurrent) wins; otherwise layer i is recurrent iff
// (i+1) % full_attention_interval != 0 (default interval 4).
func readSchedule(m *metadata, c *Config) error {
	const key = "attention.recurrent_layers"
	rec, ok, err := m.array(key, true)
	if err != nil {
		return err
	}
	if ok {
		// One entry per block (MTP blocks may be listed); only the main
		// layers' entries are read.
		switch n := rec.Len(); {
		case n < c.NLayer:
			return fmt.Errorf("metadata key %s has %d entries, want at least %d (main layers)", m.full(key), n, c.NLayer)
		case n > c.NLayerAll:
			return fmt.Errorf("metadata key %s has %d entries, more than %s = %d", m.full(key), n, m.full("block_count"), c.NLayerAll)
		}
		for i := range c.NLayer {
			x, err := m.elem(key, rec, i)
			if err != nil {
				return err
			}
			if x != 0 {
				c.Kinds[i] = LayerRecurrent
			}
		}
		return nil
	}
	interval, err := m.intOr("full_attention_interval", 4)
	if err != nil {
		return err
	}
	if interval == 0 {
		return fmt.Errorf("metadata key %s must be positive", m.full("full_attention_interval"))
	}
	for i := range c.NLayer {
		if (i+1)%interval != 0 {
			c.Kinds[i] = LayerRecurrent
		}
	}
	return nil
}

// Check rejects configurations the forward pass cannot run. Configs from
// ConfigFromGGUF pass it; a backend given one made by hand (cpu.NewCache)
// checks it before it sizes anything from it.
func (c *Config) Check() error {
	// Bounded as Load bounds a file's keys (MaxDim): a Config made by hand
	// is sized from too, and past the bound its products can overflow.
	for _, d := range append(c.dimKeys(), dim{"vocabulary", c.NVocab}, dim{"ssm head dim", c.SSMHeadDimV}) {
		if d.v > MaxDim {
			return fmt.Errorf("config: %s %d is more than %d, larger than any model this engine runs", d.key, d.v, MaxDim)
		}
	}
	switch {
	case c.NEmbd <= 0:
		return fmt.Errorf("config: embedding_length %d must be positive", c.NEmbd)
	case c.NLayer <= 0:
		return fmt.Errorf("config: no main layers (block_count %d, nextn %d)", c.NLayerAll, c.NNextN)
	case c.NFF <= 0 || c.NVocab <= 0:
		return fmt.Errorf("config: feed_forward_length %d and vocabulary %d must be positive", c.NFF, c.NVocab)
	case c.NHeadKV <= 0 || c.NHead%c.NHeadKV != 0:
		return fmt.Errorf("config: head_count %d is not a multiple of head_count_kv %d", c.NHead, c.NHeadKV)
	case c.HeadDimK <= 0 || c.HeadDimV <= 0:
		return fmt.Errorf("config: key_length %d and value_length %d must be positive", c.HeadDimK, c.HeadDimV)
	case c.HeadDimK != c.HeadDimV:
		return fmt.Errorf("config: key_length %d != value_length %d is not supported", c.HeadDimK, c.HeadDimV)
	case c.NRot <= 0 || c.NRot > c.HeadDimK || c.NRot%2 != 0:
		return fmt.Errorf("config: rope.dimension_count %d must be even and within head dim %d", c.NRot, c.HeadDimK)
	case !(c.NormEps > 0) || !(c.RopeBase > 0) || math.IsInf(float64(c.NormEps), 0) || math.IsInf(float64(c.RopeBase), 0):
		return fmt.Errorf("config: rms epsilon %g and rope base %g must be positive and finite", c.NormEps, c.RopeBase)
	case len(c.Kinds) != c.NLayer:
		return fmt.Errorf("config: %d layer kinds for %d main layers", len(c.Kinds), c.NLayer)
	case c.NumAttention() < c.NLayer && (c.SSMConvKernel < 2 || c.SSMStateSize <= 0 || c.SSMGroupCount <= 0 || c.SSMNumVHeads <= 0 ||
		c.SSMNumVHeads%c.SSMGroupCount != 0 || c.SSMHeadDimV <= 0 || c.SSMInnerSize != c.SSMNumVHeads*c.SSMHeadDimV):
		return fmt.Errorf("config: Gated DeltaNet dims conv %d, state %d, groups %d, v heads %d × %d = inner %d are not a model's",
			c.SSMConvKernel, c.SSMStateSize, c.SSMGroupCount, c.SSMNumVHeads, c.SSMHeadDimV, c.SSMInnerSize)
	}
	return nil
}

// String summarises the config in one line for logs and `memra info`.
func (c *Config) String() string {
	var kinds []string
	counts := map[LayerKind]int{}
	for _, k := range c.Kinds {
		counts[k]++
	}
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%s: %d layers (%s), embd %d, ff %d, vocab %d, heads %d/%d×%d, rope %d dims base %g",
		c.Arch, c.NLayer, strings.Join(kinds, ", "), c.NEmbd, c.NFF, c.NVocab, c.NHead, c.NHeadKV, c.HeadDimK, c.NRot, c.RopeBase)
}

// checkBlocks holds block_count to the file's tensors: each main layer i
// has tensors blk.i.* (a count past them is metadata that does not match
// the file and would size every per-layer table from a hostile number, even
// with one stray blk.N name), and no tensor lies past the last layer
// (a smaller count would run a truncated model without a word). MTP layers
// may be left out of a file, so their blocks need no tensors; but a block
// the file has must be of the kind nextn_predict_layers makes it: an MTP
// block holds nextn tensors and a main one does not, so a wrong count
// neither skips a main layer nor runs an MTP one.
func checkBlocks(f *gguf.File, m *metadata, c *Config) error {
	have := map[int]bool{}
	nextn := map[int]bool{} // blocks with blk.N.nextn.* tensors
	hi := -1
	for _, t := range f.Tensors {
		if n, rest, ok := blockOf(t.Name); ok {
			have[n] = true
			nextn[n] = nextn[n] || strings.HasPrefix(rest, "nextn.")
			hi = max(hi, n)
		}
	}
	for i := range c.NLayer { // stops at the first gap: at most len(f.Tensors) trips
		if !have[i] {
			return fmt.Errorf("metadata: %s = %d (%d main layers), but the file has no tensors blk.%d.*",
				m.full("block_count"), c.NLayerAll, c.NLayer, i)
		}
	}
	if hi >= c.NLayerAll {
		return fmt.Errorf("metadata: %s = %d, but the file has tensors of blk.%d: the count does not match the file",
			m.full("block_count"), c.NLayerAll, hi)
	}
	if c.Arch != ArchQwen35 {
		return nil // no MTP layers; a stray nextn tensor is an unused one, refused by Load
	}
	// The blocks the file has, in order: a hostile count or stray name must
	// not make this loop long.
	blocks := slices.Sorted(maps.Keys(have))
	for _, i := range blocks {
		switch {
		case i < c.NLayer && nextn[i]:
			return fmt.Errorf("metadata: %s = %d makes blk.%d a main layer, but it holds nextn tensors (an MTP layer): the count does not match the file",
				m.full("nextn_predict_layers"), c.NNextN, i)
		case i >= c.NLayer && !nextn[i]:
			return fmt.Errorf("metadata: %s = %d makes blk.%d an MTP layer, but it has no nextn tensors (blk.%d.nextn.*): it is a main layer the forward pass would skip",
				m.full("nextn_predict_layers"), c.NNextN, i, i)
		}
	}
	return nil
}

// blockOf splits a tensor name blk.N.rest into N and rest; ok is false for
// other names, and for N not written plainly ("+1", "01"), which name no
// block the loader reads.
func blockOf(name string) (n int, rest string, ok bool) {
	after, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, "", false
	}
	num, rest, _ := strings.Cut(after, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strconv.Itoa(n) != num {
		return 0, "", false
	}
	return n, rest, true
}

// MaxContext bounds a sequence's positions for a file that gives no
// context_length (positions are int32 on the device, and a cache sized
// from a mistyped count would exhaust memory before any check could run).
const MaxContext = 1 << 24

// MaxPositions is the longest sequence CheckContext accepts: the training
// context (context_length) where the file gives one, at most MaxContext.
func (c *Config) MaxPositions() int {
	if c.ContextLength > 0 {
		return min(c.ContextLength, MaxContext)
	}
	return MaxContext
}

// CheckContext reports whether a sequence of n positions fits the model:
// at most its training context (context_length) where the file gives one,
// else at most MaxContext. The error names the limit and its key.
func (c *Config) CheckContext(n int) error {
	switch {
	case c.ContextLength > 0 && n > c.ContextLength:
		return fmt.Errorf("%d positions are past the model's context length %d (%s.context_length)", n, c.ContextLength, c.Arch)
	case n > MaxContext:
		return fmt.Errorf("%d positions are past memra's limit of %d", n, MaxContext)
	}
	return nil
}
