package convert

import (
	"fmt"
	"sort"
	"strings"

	"github.com/memra-ai/memra/gguf"
)

// Transform is an elementwise change llama.cpp's converter applies.
type Transform uint8

const (
	// TNone copies values.
	TNone Transform = iota
	// TPlusOne stores w+1: Qwen3.5's RMSNorm multiplies by (1+w), GGUF by w.
	TPlusOne
	// TNegExp stores −exp(A_log) as ssm_a.
	TNegExp
)

// Reorder describes llama.cpp's qwen35 V-head reorder along one axis of the
// PyTorch tensor: the span [Offset, Offset+H_v·HeadDim) holds H_v heads of
// HeadDim entries grouped by K head (head g·r+j, r = H_v/H_k); GGUF stores
// them tiled (new head j·H_k+g), so V head h pairs with K head h % H_k.
// HeadDim 0 means no reorder.
type Reorder struct {
	Axis    int // 0: rows (outer dim), 1: columns (inner dim)
	Offset  int
	HeadDim int
}

// Entry is one GGUF tensor of a model and where it comes from.
type Entry struct {
	Name    string   // GGUF name, e.g. "blk.0.attn_qkv.weight"
	HF      string   // Hugging Face name in a Qwen3_5ForCausalLM / Qwen3ForCausalLM checkpoint
	Shape   []uint64 // ggml ne order: Shape[0] is the row length
	HFShape []int64  // PyTorch shape in the checkpoint (conv1d keeps its middle 1)
	Layer   int      // block index, -1 for global tensors
	X       Transform
	R       Reorder
	// Role is the tensor's role, for synth's value distribution: "embd",
	// "matrix", "norm" (multiplier near 1), "ssm_a", "ssm_dt", "conv".
	Role string
}

// Plan returns the model's GGUF tensors in the order llama.cpp writes them
// for a single-file checkpoint: sorted by Hugging Face name. Convert and
// synth share it, so both lay out a model identically.
func Plan(s *Spec) ([]Entry, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	E, V, FF := u(s.NEmbd), u(s.NVocab), u(s.NFF)
	var es []Entry
	add := func(e Entry) {
		if e.HFShape == nil {
			e.HFShape = make([]int64, len(e.Shape))
			for i, d := range e.Shape {
				e.HFShape[len(e.Shape)-1-i] = int64(d)
			}
		}
		es = append(es, e)
	}
	norm := TNone
	if s.Arch == ArchQwen35 {
		norm = TPlusOne
	}
	add(Entry{Name: "token_embd.weight", HF: "model.embed_tokens.weight", Shape: []uint64{E, V}, Layer: -1, Role: "embd"})
	add(Entry{Name: "output_norm.weight", HF: "model.norm.weight", Shape: []uint64{E}, Layer: -1, X: norm, Role: "norm"})
	if !s.Tied {
		add(Entry{Name: "output.weight", HF: "lm_head.weight", Shape: []uint64{E, V}, Layer: -1, Role: "matrix"})
	}
	for il := 0; il < s.BlockCount(); il++ {
		hf := fmt.Sprintf("model.layers.%d.", il)
		if il >= s.NLayer {
			hf = fmt.Sprintf("mtp.layers.%d.", il-s.NLayer)
		}
		blk := fmt.Sprintf("blk.%d.", il)
		lay := func(name, hfName string, shape []uint64, x Transform, role string) Entry {
			return Entry{Name: blk + name, HF: hf + hfName, Shape: shape, Layer: il, X: x, Role: role}
		}
		add(lay("attn_norm.weight", "input_layernorm.weight", []uint64{E}, norm, "norm"))
		if s.Arch == ArchQwen35 {
			add(lay("post_attention_norm.weight", "post_attention_layernorm.weight", []uint64{E}, norm, "norm"))
		} else {
			add(lay("ffn_norm.weight", "post_attention_layernorm.weight", []uint64{E}, norm, "norm"))
		}
		add(lay("ffn_gate.weight", "mlp.gate_proj.weight", []uint64{E, FF}, TNone, "matrix"))
		add(lay("ffn_up.weight", "mlp.up_proj.weight", []uint64{E, FF}, TNone, "matrix"))
		add(lay("ffn_down.weight", "mlp.down_proj.weight", []uint64{FF, E}, TNone, "matrix"))
		if s.IsRecurrent(il) {
			K, Vd, C, Hv, Dv := s.KDim(), u(s.VDim()), u(s.ConvDim()), u(s.SSMVHeads), s.SSMVHeadDim
			e := lay("attn_qkv.weight", "linear_attn.in_proj_qkv.weight", []uint64{E, C}, TNone, "matrix")
			e.R = Reorder{Axis: 0, Offset: 2 * K, HeadDim: Dv}
			add(e)
			e = lay("attn_gate.weight", "linear_attn.in_proj_z.weight", []uint64{E, Vd}, TNone, "matrix")
			e.R = Reorder{Axis: 0, HeadDim: Dv}
			add(e)
			e = lay("ssm_beta.weight", "linear_attn.in_proj_b.weight", []uint64{E, Hv}, TNone, "matrix")
			e.R = Reorder{Axis: 0, HeadDim: 1}
			add(e)
			e = lay("ssm_alpha.weight", "linear_attn.in_proj_a.weight", []uint64{E, Hv}, TNone, "matrix")
			e.R = Reorder{Axis: 0, HeadDim: 1}
			add(e)
			e = lay("ssm_a", "linear_attn.A_log", []uint64{Hv}, TNegExp, "ssm_a")
			e.R = Reorder{Axis: 0, HeadDim: 1}
			add(e)
			e = lay("ssm_dt.bias", "linear_attn.dt_bias", []uint64{Hv}, TNone, "ssm_dt")
			e.R = Reorder{Axis: 0, HeadDim: 1}
			add(e)
			e = lay("ssm_conv1d.weight", "linear_attn.conv1d.weight", []uint64{u(s.ConvKernel), C}, TNone, "conv")
			e.HFShape = []int64{int64(C), 1, int64(s.ConvKernel)}
			e.R = Reorder{Axis: 0, Offset: 2 * K, HeadDim: Dv}
			add(e)
			add(lay("ssm_norm.weight", "linear_attn.norm.weight", []uint64{u(Dv)}, TNone, "norm"))
			e = lay("ssm_out.weight", "linear_attn.out_proj.weight", []uint64{Vd, E}, TNone, "matrix")
			e.R = Reorder{Axis: 1, HeadDim: Dv}
			add(e)
			continue
		}
		qOut := s.HeadDim * s.NHead
		if s.Arch == ArchQwen35 {
			qOut *= 2 // per head: query then output gate
		}
		kv := u(s.HeadDim * s.NHeadKV)
		add(lay("attn_q.weight", "self_attn.q_proj.weight", []uint64{E, u(qOut)}, TNone, "matrix"))
		add(lay("attn_k.weight", "self_attn.k_proj.weight", []uint64{E, kv}, TNone, "matrix"))
		add(lay("attn_v.weight", "self_attn.v_proj.weight", []uint64{E, kv}, TNone, "matrix"))
		add(lay("attn_output.weight", "self_attn.o_proj.weight", []uint64{u(s.HeadDim * s.NHead), E}, TNone, "matrix"))
		add(lay("attn_q_norm.weight", "self_attn.q_norm.weight", []uint64{u(s.HeadDim)}, norm, "norm"))
		add(lay("attn_k_norm.weight", "self_attn.k_norm.weight", []uint64{u(s.HeadDim)}, norm, "norm"))
		if il == s.NLayer { // the first MTP layer carries the nextn head
			add(Entry{Name: blk + "nextn.eh_proj.weight", HF: "mtp.fc.weight", Shape: []uint64{2 * E, E}, Layer: il, Role: "matrix"})
			add(Entry{Name: blk + "nextn.enorm.weight", HF: "mtp.pre_fc_norm_embedding.weight", Shape: []uint64{E}, Layer: il, X: TPlusOne, Role: "norm"})
			add(Entry{Name: blk + "nextn.hnorm.weight", HF: "mtp.pre_fc_norm_hidden.weight", Shape: []uint64{E}, Layer: il, X: TPlusOne, Role: "norm"})
			add(Entry{Name: blk + "nextn.shared_head_norm.weight", HF: "mtp.norm.weight", Shape: []uint64{E}, Layer: il, X: TPlusOne, Role: "norm"})
		}
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].HF < es[j].HF })
	return es, nil
}

func u(x int) uint64 { return uint64(x) }

// FileType is a GGUF general.file_type (llama.cpp's LlamaFileType): the
// type chosen for the weight matrices.
type FileType uint32

// File types the converter writes, with llama.cpp's LLAMA_FTYPE_MOSTLY_*
// numbers: Q4_0 = 2, Q8_0 = 7, Q5_0 = 8, IQ4_NL = 25 and IQ4_XS = 30; for
// the K-quants the _S ("small") numbers, Q3_K_S = 11, Q4_K_S = 14 and
// Q5_K_S = 16, and Q6_K = 18, where every matrix gets that one type (see
// TensorType); and llama-quantize's mixes Q3_K_M = 12, Q3_K_L = 13, Q4_K_M
// = 15 and Q5_K_M = 17, where some matrices get more bits (mixType).
const (
	FileF32    FileType = 0
	FileF16    FileType = 1
	FileQ4_0   FileType = 2
	FileQ8_0   FileType = 7
	FileQ5_0   FileType = 8
	FileQ3_K   FileType = 11
	FileQ3_K_M FileType = 12
	FileQ3_K_L FileType = 13
	FileQ4_K   FileType = 14
	FileQ4_K_M FileType = 15
	FileQ5_K   FileType = 16
	FileQ5_K_M FileType = 17
	FileQ6_K   FileType = 18
	FileIQ4_NL FileType = 25
	FileIQ4_XS FileType = 30
	FileBF16   FileType = 32
)

// fileTypeNames lists the --type values in the order usage text gives them.
var fileTypeNames = []struct {
	name string
	ft   FileType
}{
	{"f32", FileF32}, {"f16", FileF16}, {"bf16", FileBF16}, {"q8_0", FileQ8_0},
	{"q6_k", FileQ6_K}, {"q5_k_m", FileQ5_K_M}, {"q5_k", FileQ5_K}, {"q4_k_m", FileQ4_K_M}, {"q4_k", FileQ4_K},
	{"q3_k_l", FileQ3_K_L}, {"q3_k_m", FileQ3_K_M}, {"q3_k", FileQ3_K},
	{"q5_0", FileQ5_0}, {"q4_0", FileQ4_0}, {"iq4_nl", FileIQ4_NL}, {"iq4_xs", FileIQ4_XS},
}

// FileTypeNames returns the values ParseFileType accepts, for usage text.
func FileTypeNames() []string {
	var ns []string
	for _, n := range fileTypeNames {
		ns = append(ns, n.name)
	}
	return ns
}

// ParseFileType parses the --type flag: one of FileTypeNames (any case).
func ParseFileType(s string) (FileType, error) {
	for _, n := range fileTypeNames {
		if strings.EqualFold(s, n.name) {
			return n.ft, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q (want one of %s)", s, strings.Join(FileTypeNames(), ", "))
}

func (ft FileType) String() string {
	for _, n := range fileTypeNames {
		if n.ft == ft {
			return n.name
		}
	}
	return fmt.Sprintf("filetype(%d)", uint32(ft))
}

// TensorType is llama.cpp's per-tensor type rule for tensor e of model s:
// 1-D tensors, norms, ssm_conv1d and tensors not named *.weight stay F32;
// the other matrices take the file type, or for a mix the type mixType
// gives them. Q8_0, Q5_0, Q4_0 and IQ4_NL fall back to F16 when the row
// length (Shape[0]) is not a multiple of their block of 32. The K-quants
// need rows of whole 256-value superblocks; other rows take Q8_0 if a
// multiple of 32, else F16. That is llama.cpp's fallback for Q6_K; for the
// other K types it picks narrower ones (which ones has changed over its
// versions), and Q8_0 (more precise, and one rule for all) stands in for
// them here. IQ4_XS, also of 256, falls back as llama.cpp's does: to
// IQ4_NL, the same codebook on blocks of 32 with an f16 scale each, else
// F16. IQ4_NL and IQ4_XS files otherwise follow Q4_0's plan (token_embd
// and output included), not llama-quantize's mixes, which give some
// matrices other types.
func TensorType(s *Spec, e *Entry, ft FileType) gguf.Type {
	if len(e.Shape) <= 1 || strings.HasSuffix(e.Name, "_norm.weight") ||
		strings.HasSuffix(e.Name, ".ssm_conv1d.weight") || !strings.HasSuffix(e.Name, ".weight") {
		return gguf.TypeF32
	}
	b32 := func(t gguf.Type) gguf.Type {
		if e.Shape[0]%32 != 0 {
			return gguf.TypeF16
		}
		return t
	}
	k := func(t gguf.Type) gguf.Type {
		if e.Shape[0]%256 != 0 {
			return b32(gguf.TypeQ8_0)
		}
		return t
	}
	switch ft {
	case FileF16:
		return gguf.TypeF16
	case FileBF16:
		return gguf.TypeBF16
	case FileQ8_0:
		return b32(gguf.TypeQ8_0)
	case FileQ5_0:
		return b32(gguf.TypeQ5_0)
	case FileQ4_0:
		return b32(gguf.TypeQ4_0)
	case FileIQ4_NL:
		return b32(gguf.TypeIQ4_NL)
	case FileIQ4_XS:
		if e.Shape[0]%256 != 0 {
			return b32(gguf.TypeIQ4_NL)
		}
		return gguf.TypeIQ4_XS
	case FileQ3_K:
		return k(gguf.TypeQ3_K)
	case FileQ4_K:
		return k(gguf.TypeQ4_K)
	case FileQ5_K:
		return k(gguf.TypeQ5_K)
	case FileQ6_K:
		return k(gguf.TypeQ6_K)
	case FileQ3_K_M, FileQ3_K_L, FileQ4_K_M, FileQ5_K_M:
		return k(mixType(s, e, ft))
	}
	return gguf.TypeF32
}

// mixType is the type llama-quantize gives matrix e in a K mix, before the
// fallback for rows that are not whole superblocks: llama.cpp's
// llama_tensor_get_type as node-llama-cpp 3.22.1's build of it (September
// 2026) quantises the 0.8B and 9B presets, which scripts/llama/mixtypes.sh
// records in testdata/llama-mixtypes (TestMixTypesMatchLlama). In order,
// the first that applies:
//   - output.weight, or token_embd.weight of a tied model (the LM head):
//     Q6_K.
//   - attn_v and attn_qkv (one of them a block), block i of n: Q3_K_M Q5_K
//     for i < 2, else Q4_K; Q3_K_L Q5_K; Q4_K_M and Q5_K_M Q6_K where
//     moreBits(i, n).
//   - ffn_down of block i of n: Q3_K_M Q5_K for i < n/16, else Q4_K; Q3_K_L
//     Q5_K; Q4_K_M and Q5_K_M Q6_K where moreBits(i, n).
//   - attn_output: Q3_K_M Q4_K, Q3_K_L Q5_K.
//   - everything else (token_embd of an untied model, attn_q, attn_k,
//     attn_gate, ssm_alpha, ssm_beta, ssm_out, ffn_gate, ffn_up,
//     nextn.eh_proj): the base type.
//
// Until its refactor of March 2026 (a5bb8ba and before) llama.cpp counted
// only attn_v in i and gave attn_qkv a type of its own (Q4_K_M Q5_K:
// qwen35-gguf.md's "attn_qkv Q5_K", as the Qwen3.5 files published at the
// model's release have); memra writes what llama-quantize writes now.
// Blocks count in layer order, MTP blocks last, as llama.cpp's loader walks
// them; n is the GGUF block_count, MTP included.
func mixType(s *Spec, e *Entry, ft FileType) gguf.Type {
	base := map[FileType]gguf.Type{FileQ3_K_M: gguf.TypeQ3_K, FileQ3_K_L: gguf.TypeQ3_K,
		FileQ4_K_M: gguf.TypeQ4_K, FileQ5_K_M: gguf.TypeQ5_K}[ft]
	n := s.BlockCount()
	// raised is attn_v's and ffn_down's rule for index i of n: Q3_K_M
	// Q5_K below q3m, else Q4_K; Q3_K_L Q5_K; Q4_K_M and Q5_K_M Q6_K where
	// moreBits.
	raised := func(i, q3m int) gguf.Type {
		switch {
		case ft == FileQ3_K_M && i < q3m, ft == FileQ3_K_L:
			return gguf.TypeQ5_K
		case ft == FileQ3_K_M:
			return gguf.TypeQ4_K
		case (ft == FileQ4_K_M || ft == FileQ5_K_M) && moreBits(i, n):
			return gguf.TypeQ6_K
		}
		return base
	}
	switch name := e.Name; {
	case name == "output.weight" || (s.Tied && name == "token_embd.weight"):
		return gguf.TypeQ6_K
	case strings.HasSuffix(name, ".attn_v.weight"), strings.HasSuffix(name, ".attn_qkv.weight"):
		// Every block has one of the two (Plan), so the count of those
		// before block e.Layer is e.Layer.
		return raised(e.Layer, 2)
	case strings.HasSuffix(name, ".ffn_down.weight"):
		return raised(e.Layer, n/16)
	case strings.HasSuffix(name, ".attn_output.weight"):
		switch ft {
		case FileQ3_K_M:
			return gguf.TypeQ4_K
		case FileQ3_K_L:
			return gguf.TypeQ5_K
		}
	}
	return base
}

// moreBits is llama.cpp's use_more_bits: the first and last eighth of n,
// and every third one between them.
func moreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// srcIndex maps a destination index along a reordered span to its source:
// destination head h = j·H_k + g comes from source head g·r + j.
func srcIndex(dst int, r Reorder, hk, hv int) int {
	if r.HeadDim == 0 {
		return dst
	}
	rel := dst - r.Offset
	if rel < 0 || rel >= hv*r.HeadDim {
		return dst
	}
	h, d := rel/r.HeadDim, rel%r.HeadDim
	g, j := h%hk, h/hk
	return r.Offset + (g*(hv/hk)+j)*r.HeadDim + d
}
