package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memra-ai/memra/gguf"
)

// ErrNaNLogits is the error of a decode step whose logits are all NaN, where
// no token can be picked: weights that are not finite (a NaN or Inf in the
// file) or activations that overflowed. Both backends return it (wrapped)
// rather than a token.
var ErrNaNLogits = errors.New("every logit is NaN: the model's weights or activations are not finite (a NaN or Inf in the file's tensors, or an overflow)")

// Tensor is a zero-copy view of one weight tensor in the file's mmap. Data
// stays valid while the gguf.File is open; nothing here copies it, so GPU
// code uploads Data as-is.
type Tensor struct {
	Name  string
	Type  gguf.Type
	Shape []int  // ggml ne order: Shape[0] is the contiguous row length
	Data  []byte // exactly Rows()·RowBytes() bytes
}

// Cols is the row length (ne[0]); for a matrix {in, out} it is the input size.
func (t *Tensor) Cols() int { return t.Shape[0] }

// Rows is the number of rows (product of ne[1:]); for a matrix {in, out} it
// is the output size.
func (t *Tensor) Rows() int {
	n := 1
	for _, d := range t.Shape[1:] {
		n *= d
	}
	return n
}

// RowBytes is the storage size of one row.
func (t *Tensor) RowBytes() int { return t.Cols() / t.Type.BlockSize() * t.Type.BlockBytes() }

// Row returns the bytes of row r.
func (t *Tensor) Row(r int) []byte {
	rb := t.RowBytes()
	return t.Data[r*rb : (r+1)*rb]
}

func (t *Tensor) String() string {
	return fmt.Sprintf("%s %s %v", t.Name, t.Type, t.Shape)
}

// Layer holds one main layer's weights. Fields of the other layer kind are
// nil. Norm weights are stored as the file has them (qwen35 files already
// hold 1+w), so every norm is x·rsqrt(mean(x²)+eps)·w.
type Layer struct {
	Kind LayerKind

	AttnNorm *Tensor // attn_norm {n_embd} F32
	// FFNNorm is the norm before the FFN: post_attention_norm (qwen35) or
	// ffn_norm (qwen3). {n_embd} F32.
	FFNNorm *Tensor

	// Attention layer.
	AttnQ      *Tensor // attn_q {n_embd, n_head·Dh} (qwen3) or {n_embd, 2·n_head·Dh}: per head q(Dh) then gate(Dh) (qwen35)
	AttnK      *Tensor // attn_k {n_embd, n_kv·Dh}
	AttnV      *Tensor // attn_v {n_embd, n_kv·Dh}
	AttnOutput *Tensor // attn_output {n_head·Dh, n_embd}
	AttnQNorm  *Tensor // attn_q_norm {Dh} F32, shared by all heads
	AttnKNorm  *Tensor // attn_k_norm {Dh} F32

	// Gated DeltaNet layer (K = H_k·S, V = H_v·Sv, C = 2K+V).
	AttnQKV  *Tensor // attn_qkv {n_embd, C}: rows q(K) · k(K) · v(V)
	AttnGate *Tensor // attn_gate {n_embd, V}: z
	SSMConv  *Tensor // ssm_conv1d {conv_kernel, C} F32: row c holds channel c's taps, oldest first
	SSMDt    *Tensor // ssm_dt.bias {H_v} F32
	SSMA     *Tensor // ssm_a {H_v} F32, already −exp(A_log)
	SSMBeta  *Tensor // ssm_beta {n_embd, H_v}
	SSMAlpha *Tensor // ssm_alpha {n_embd, H_v}
	SSMNorm  *Tensor // ssm_norm {Sv} F32, shared by all heads, stored as w (not 1+w)
	SSMOut   *Tensor // ssm_out {V, n_embd}

	// SwiGLU FFN: down(silu(gate·x) ⊙ up·x).
	FFNGate *Tensor // ffn_gate {n_embd, n_ff}
	FFNUp   *Tensor // ffn_up {n_embd, n_ff}
	FFNDown *Tensor // ffn_down {n_ff, n_embd}
}

// Model is a validated model: configuration plus weight views. The file must
// stay open while the Model is used (CheckOpen says whether it is).
type Model struct {
	Config
	TokenEmbd  *Tensor // token_embd {n_embd, n_vocab}
	OutputNorm *Tensor // output_norm {n_embd} F32
	// Output is the LM head {n_embd, n_vocab}: output.weight, or TokenEmbd
	// itself (the same pointer) when the embeddings are tied.
	Output *Tensor
	Layers []Layer // NLayer main layers; MTP layers are not loaded

	file *gguf.File // whose mapping the tensors view (nil: not from Load)
}

// CheckOpen returns an error when m was not made by Load, which checks every
// tensor a backend reads (a Model put together by hand may lack one, or
// hold one of another shape), or when the file it was loaded from has been
// closed: its tensors' Data then point into memory that is no longer mapped,
// and a backend reading them would end the process with a fault rather than
// a panic. Backends call it before they read weights.
func (m *Model) CheckOpen() error {
	if m.file == nil {
		return errors.New("model: not made by model.Load, which checks that every tensor is there with its shape and type: backends run only such models")
	}
	if m.file.Closed() {
		return fmt.Errorf("model: %s was closed: its weights are views of the file's mapping, so it must stay open while the model is used", m.fileName())
	}
	return nil
}

func (m *Model) fileName() string {
	if n := m.file.Name(); n != "" {
		return n
	}
	return "the GGUF file"
}

// MatrixTypes lists the weight types accepted for matrices and embeddings:
// the types gguf.Dequantize handles that real files of these models use.
func MatrixTypes() []gguf.Type {
	return []gguf.Type{
		gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
		gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
		gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
		gguf.TypeIQ4_NL, gguf.TypeIQ4_XS,
	}
}

func matrixTypeOK(t gguf.Type) bool {
	for _, m := range MatrixTypes() {
		if m == t {
			return true
		}
	}
	return false
}

func matrixTypeNames() string {
	var s []string
	for _, t := range MatrixTypes() {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

// Load reads the configuration and every tensor the forward pass needs,
// checking names, shapes (ggml ne order), types and data sizes, and that the
// file holds no other tensors (but those of MTP layers). All problems with
// tensors are reported together, each naming the tensor.
func Load(f *gguf.File) (*Model, error) {
	if len(f.Tensors) == 0 { // said plainly rather than as the first missing key
		return nil, errors.New("load model: the file has no tensors: it holds metadata only (a tokenizer-only GGUF?), not a model")
	}
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	l := &loader{f: f, used: map[string]bool{}}
	m := &Model{Config: *cfg, file: f}
	c := &m.Config
	m.TokenEmbd = l.matrix("token_embd.weight", c.NEmbd, c.NVocab)
	m.OutputNorm = l.vector("output_norm.weight", c.NEmbd)
	if _, ok := f.Tensor("output.weight"); ok {
		m.Output = l.matrix("output.weight", c.NEmbd, c.NVocab)
	} else {
		m.Output = m.TokenEmbd
		c.TiedOutput = true
	}
	m.Layers = make([]Layer, c.NLayer)
	for i := range c.NLayer {
		m.Layers[i] = l.layer(c, i)
	}
	l.checkUnused(c)
	if len(l.errs) > 0 {
		errs := l.errs
		if len(errs) > maxLoadErrs { // a file of the wrong model fails every tensor
			errs = append(errs[:maxLoadErrs:maxLoadErrs], fmt.Errorf("… and %d more", len(l.errs)-maxLoadErrs))
		}
		return nil, fmt.Errorf("load model (%s): %w", c.Arch, errors.Join(errs...))
	}
	return m, nil
}

// maxLoadErrs is the most tensor problems Load lists; it counts the rest.
const maxLoadErrs = 20

type loader struct {
	f    *gguf.File
	used map[string]bool // tensors looked up, found or not
	errs []error
}

// checkUnused refuses tensors the model does not read: a bias, an MoE
// expert or a misspelt name (output.weights) would be ignored and the model
// computed would not be the file's; llama.cpp refuses such files too. Only
// the MTP layers' blocks (qwen35, past the main layers) are stored unread.
func (l *loader) checkUnused(c *Config) {
	for _, t := range l.f.Tensors {
		if l.used[t.Name] {
			continue
		}
		if n, _, ok := blockOf(t.Name); ok && c.NNextN > 0 && n >= c.NLayer && n < c.NLayerAll {
			continue
		}
		l.errs = append(l.errs, fmt.Errorf("tensor %s is not part of a %s model (memra would ignore it and compute another model)", t.Name, c.Arch))
	}
}

func (l *loader) layer(c *Config, i int) Layer {
	n := func(s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }
	L := Layer{Kind: c.Kinds[i]}
	L.AttnNorm = l.vector(n("attn_norm.weight"), c.NEmbd)
	if c.Arch == ArchQwen35 {
		L.FFNNorm = l.vector(n("post_attention_norm.weight"), c.NEmbd)
	} else {
		L.FFNNorm = l.vector(n("ffn_norm.weight"), c.NEmbd)
	}
	switch L.Kind {
	case LayerAttention:
		qRows := c.NHead * c.HeadDimK
		if c.AttnOutputGate {
			qRows *= 2
		}
		L.AttnQ = l.matrix(n("attn_q.weight"), c.NEmbd, qRows)
		L.AttnK = l.matrix(n("attn_k.weight"), c.NEmbd, c.NHeadKV*c.HeadDimK)
		L.AttnV = l.matrix(n("attn_v.weight"), c.NEmbd, c.NHeadKV*c.HeadDimV)
		L.AttnOutput = l.matrix(n("attn_output.weight"), c.NHead*c.HeadDimV, c.NEmbd)
		L.AttnQNorm = l.vector(n("attn_q_norm.weight"), c.HeadDimK)
		L.AttnKNorm = l.vector(n("attn_k_norm.weight"), c.HeadDimK)
	case LayerRecurrent:
		C, V, Hv := c.SSMConvChannels(), c.SSMInnerSize, c.SSMNumVHeads
		L.AttnQKV = l.matrix(n("attn_qkv.weight"), c.NEmbd, C)
		L.AttnGate = l.matrix(n("attn_gate.weight"), c.NEmbd, V)
		L.SSMConv = l.f32(n("ssm_conv1d.weight"), c.SSMConvKernel, C)
		L.SSMDt = l.vector(n("ssm_dt.bias"), Hv)
		L.SSMA = l.vector(n("ssm_a"), Hv)
		L.SSMBeta = l.matrix(n("ssm_beta.weight"), c.NEmbd, Hv)
		L.SSMAlpha = l.matrix(n("ssm_alpha.weight"), c.NEmbd, Hv)
		L.SSMNorm = l.vector(n("ssm_norm.weight"), c.SSMHeadDimV)
		L.SSMOut = l.matrix(n("ssm_out.weight"), V, c.NEmbd)
	}
	L.FFNGate = l.matrix(n("ffn_gate.weight"), c.NEmbd, c.NFF)
	L.FFNUp = l.matrix(n("ffn_up.weight"), c.NEmbd, c.NFF)
	L.FFNDown = l.matrix(n("ffn_down.weight"), c.NFF, c.NEmbd)
	return L
}

// matrix loads a weight matrix of any supported type with shape {in, out}.
func (l *loader) matrix(name string, in, out int) *Tensor {
	return l.tensor(name, []int{in, out}, true)
}

// vector loads a 1-D F32 tensor of n elements (norms, biases, ssm_a).
func (l *loader) vector(name string, n int) *Tensor {
	return l.tensor(name, []int{n}, false)
}

// f32 loads a 2-D F32 tensor (ssm_conv1d).
func (l *loader) f32(name string, d0, d1 int) *Tensor {
	return l.tensor(name, []int{d0, d1}, false)
}

func (l *loader) tensor(name string, want []int, anyMatrixType bool) *Tensor {
	fail := func(format string, args ...any) *Tensor {
		l.errs = append(l.errs, fmt.Errorf("tensor %s: "+format, append([]any{name}, args...)...))
		return nil
	}
	l.used[name] = true
	info, ok := l.f.Tensor(name)
	if !ok {
		return fail("missing (want shape %v)", want)
	}
	shape := make([]int, len(info.Shape))
	for i, d := range info.Shape {
		shape[i] = int(d)
	}
	// ggml allows trailing 1s in ne; a {n} vector may be stored as {n, 1}.
	for len(shape) > len(want) && shape[len(shape)-1] == 1 {
		shape = shape[:len(shape)-1]
	}
	if !slices.Equal(shape, want) {
		return fail("shape %v, expected %v (ggml ne order)", info.Shape, want)
	}
	switch {
	case anyMatrixType && !matrixTypeOK(info.Type):
		return fail("type %v not supported, expected one of %s", info.Type, matrixTypeNames())
	case !anyMatrixType && info.Type != gguf.TypeF32:
		return fail("type %v, expected F32", info.Type)
	}
	if shape[0]%info.Type.BlockSize() != 0 {
		return fail("row length %d is not a multiple of the %v block size %d", shape[0], info.Type, info.Type.BlockSize())
	}
	data, err := l.f.TensorData(name)
	if err != nil {
		return fail("%v", err)
	}
	t := &Tensor{Name: name, Type: info.Type, Shape: shape, Data: data}
	if wantBytes := t.Rows() * t.RowBytes(); len(data) != wantBytes {
		return fail("data is %d bytes, expected %d", len(data), wantBytes)
	}
	return t
}

// Tensors returns every loaded tensor once (TokenEmbd before Output; a tied
// Output is not repeated), in a fixed order: globals, then layers in order.
func (m *Model) Tensors() []*Tensor {
	ts := []*Tensor{m.TokenEmbd, m.OutputNorm}
	if m.Output != m.TokenEmbd {
		ts = append(ts, m.Output)
	}
	for i := range m.Layers {
		L := &m.Layers[i]
		for _, t := range []*Tensor{L.AttnNorm, L.FFNNorm,
			L.AttnQ, L.AttnK, L.AttnV, L.AttnOutput, L.AttnQNorm, L.AttnKNorm,
			L.AttnQKV, L.AttnGate, L.SSMConv, L.SSMDt, L.SSMA, L.SSMBeta, L.SSMAlpha, L.SSMNorm, L.SSMOut,
			L.FFNGate, L.FFNUp, L.FFNDown} {
			if t != nil {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// WeightBytes is the size of the weights one decode step reads, for
// bandwidth estimates: every tensor once, except that an untied token_embd
// counts one row (a step looks up a single embedding).
func (m *Model) WeightBytes() int64 {
	var n int64
	for _, t := range m.Tensors() {
		if t == m.TokenEmbd && !m.TiedOutput {
			n += int64(t.RowBytes())
			continue
		}
		n += int64(len(t.Data))
	}
	return n
}
