package convert

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// stTensor is a tensor for writeSafetensors: values in PyTorch row-major
// order, stored as dtype.
type stTensor struct {
	shape []int64
	data  []float32
	dtype DType
}

// writeSafetensors writes a safetensors file (header entries and data in
// name order, like the Python library).
func writeSafetensors(t testing.TB, path string, ts map[string]stTensor) {
	t.Helper()
	if err := os.WriteFile(path, safetensorsBytes(t, ts), 0o644); err != nil {
		t.Fatal(err)
	}
}

// safetensorsBytes is the content writeSafetensors writes.
func safetensorsBytes(t testing.TB, ts map[string]stTensor) []byte {
	t.Helper()
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, n := range names {
		x := ts[n]
		dt := x.dtype
		if dt == "" {
			dt = DTypeF32
		}
		begin := len(data)
		for _, v := range x.data {
			switch dt {
			case DTypeF32:
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
			case DTypeBF16:
				data = binary.LittleEndian.AppendUint16(data, gguf.F32ToBF16(v))
			case DTypeF16:
				data = binary.LittleEndian.AppendUint16(data, gguf.F32ToF16(v))
			}
		}
		hdr[n] = map[string]any{"dtype": string(dt), "shape": x.shape, "data_offsets": []int{begin, len(data)}}
	}
	hb, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hb)))
	out = append(out, hb...)
	return append(out, data...)
}

// tinyDims are small dims for CPU tests (not the fixture dims): H_v > H_k
// so the V-head reorder is exercised, and some row lengths are not
// multiples of 32 so q8_0's F16 fallback is exercised.
type tinyDims struct {
	arch                           string
	embd, ff, vocab, layers        int
	heads, kvHeads, headDim        int
	hk, hv, dk, dv, conv, interval int
	tied, mtp                      bool
}

func qwen35Dims() tinyDims {
	return tinyDims{arch: ArchQwen35, embd: 32, ff: 32, vocab: 40, layers: 4, heads: 2, kvHeads: 1, headDim: 8,
		hk: 2, hv: 4, dk: 4, dv: 4, conv: 4, interval: 2}
}

func qwen3Dims() tinyDims {
	return tinyDims{arch: ArchQwen3, embd: 32, ff: 32, vocab: 40, layers: 2, heads: 4, kvHeads: 2, headDim: 8}
}

// hfTensors returns the checkpoint tensors for d with seeded random values.
// It is written from the transformers module layout, not from Plan.
func hfTensors(d tinyDims, seed uint64, dtype DType) map[string]stTensor {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ts := map[string]stTensor{}
	add := func(name string, shape ...int64) {
		n := int64(1)
		for _, s := range shape {
			n *= s
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64()) * 0.5
		}
		ts[name] = stTensor{shape: shape, data: x, dtype: dtype}
	}
	E, FF, V := int64(d.embd), int64(d.ff), int64(d.vocab)
	add("model.embed_tokens.weight", V, E)
	add("model.norm.weight", E)
	if !d.tied {
		add("lm_head.weight", V, E)
	}
	layer := func(p string, attn bool) {
		add(p+"input_layernorm.weight", E)
		add(p+"post_attention_layernorm.weight", E)
		add(p+"mlp.gate_proj.weight", FF, E)
		add(p+"mlp.up_proj.weight", FF, E)
		add(p+"mlp.down_proj.weight", E, FF)
		if attn {
			qOut := int64(d.heads * d.headDim)
			if d.arch == ArchQwen35 {
				qOut *= 2
			}
			add(p+"self_attn.q_proj.weight", qOut, E)
			add(p+"self_attn.k_proj.weight", int64(d.kvHeads*d.headDim), E)
			add(p+"self_attn.v_proj.weight", int64(d.kvHeads*d.headDim), E)
			add(p+"self_attn.o_proj.weight", E, int64(d.heads*d.headDim))
			add(p+"self_attn.q_norm.weight", int64(d.headDim))
			add(p+"self_attn.k_norm.weight", int64(d.headDim))
			return
		}
		K, Vd := int64(d.hk*d.dk), int64(d.hv*d.dv)
		add(p+"linear_attn.in_proj_qkv.weight", 2*K+Vd, E)
		add(p+"linear_attn.in_proj_z.weight", Vd, E)
		add(p+"linear_attn.in_proj_b.weight", int64(d.hv), E)
		add(p+"linear_attn.in_proj_a.weight", int64(d.hv), E)
		add(p+"linear_attn.A_log", int64(d.hv))
		add(p+"linear_attn.dt_bias", int64(d.hv))
		add(p+"linear_attn.conv1d.weight", 2*K+Vd, 1, int64(d.conv))
		add(p+"linear_attn.norm.weight", int64(d.dv))
		add(p+"linear_attn.out_proj.weight", E, Vd)
	}
	for i := 0; i < d.layers; i++ {
		attn := d.arch == ArchQwen3 || (i+1)%d.interval == 0
		layer(fmt.Sprintf("model.layers.%d.", i), attn)
	}
	if d.mtp {
		layer("mtp.layers.0.", true)
		add("mtp.fc.weight", E, 2*E)
		add("mtp.pre_fc_norm_embedding.weight", E)
		add("mtp.pre_fc_norm_hidden.weight", E)
		add("mtp.norm.weight", E)
	}
	return ts
}

// writeCheckpoint writes a complete tiny checkpoint directory.
func writeCheckpoint(t testing.TB, dir string, d tinyDims, ts map[string]stTensor) {
	t.Helper()
	cfg := map[string]any{
		"vocab_size": d.vocab, "hidden_size": d.embd, "intermediate_size": d.ff,
		"num_hidden_layers": d.layers, "num_attention_heads": d.heads, "num_key_value_heads": d.kvHeads,
		"head_dim": d.headDim, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
		"tie_word_embeddings": d.tied, "eos_token_id": d.vocab - 6, "pad_token_id": d.vocab - 8,
	}
	if d.arch == ArchQwen35 {
		cfg["architectures"] = []string{"Qwen3_5ForCausalLM"}
		cfg["model_type"] = "qwen3_5_text"
		cfg["linear_conv_kernel_dim"] = d.conv
		cfg["linear_key_head_dim"] = d.dk
		cfg["linear_value_head_dim"] = d.dv
		cfg["linear_num_key_heads"] = d.hk
		cfg["linear_num_value_heads"] = d.hv
		var lt []string
		for i := 0; i < d.layers; i++ {
			if (i+1)%d.interval == 0 {
				lt = append(lt, "full_attention")
			} else {
				lt = append(lt, "linear_attention")
			}
		}
		cfg["layer_types"] = lt
		cfg["rope_parameters"] = map[string]any{"rope_type": "default", "rope_theta": 1e7,
			"partial_rotary_factor": 0.25, "mrope_section": []int{11, 11, 10}, "mrope_interleaved": true}
		if d.mtp {
			cfg["mtp_num_hidden_layers"] = 1
		}
	} else {
		cfg["architectures"] = []string{"Qwen3ForCausalLM"}
		cfg["model_type"] = "qwen3"
		cfg["rope_parameters"] = map[string]any{"rope_type": "default", "rope_theta": 1e6}
	}
	writeJSON(t, filepath.Join(dir, "config.json"), cfg)
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
	writeTokenizer(t, dir, d.vocab)
}

// writeTokenizer writes a byte-level BPE tokenizer with vocab-8 entries (so
// the model vocab is padded) of which the last 3 are added special tokens.
func writeTokenizer(t testing.TB, dir string, nVocab int) {
	t.Helper()
	base := nVocab - 8 - 3
	vocab := map[string]int{}
	for i := 0; i < base; i++ {
		vocab[fmt.Sprintf("t%d", i)] = i
	}
	tj := map[string]any{
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": [][]string{{"t", "1"}, {"a b", "c"}}},
		"added_tokens": []map[string]any{
			{"id": base, "content": "<|endoftext|>", "special": true},
			{"id": base + 1, "content": "<|im_start|>", "special": true},
			{"id": base + 2, "content": "<think>", "special": false},
		},
		"post_processor": map[string]any{"type": "ByteLevel"},
	}
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), tj)
	writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), map[string]any{
		"add_bos_token": false, "bos_token": nil, "eos_token": "<|im_start|>",
		"pad_token": "<|endoftext|>", "chat_template": "{{ messages }}",
	})
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readF32Tensor returns an F32 tensor's values from a GGUF file.
func readF32Tensor(t testing.TB, f *gguf.File, name string) []float32 {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("tensor %s missing", name)
	}
	if ti.Type != gguf.TypeF32 {
		t.Fatalf("tensor %s is %v, want F32", name, ti.Type)
	}
	b, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

func readJSONInto(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
