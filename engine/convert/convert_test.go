package convert

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// want is one expected GGUF tensor: name, type, ne shape.
type want struct {
	name  string
	typ   gguf.Type
	shape []uint64
}

// qwen35Table is written by hand from llama.cpp's qwen35 naming
// (gguf-py constants.py / tensor_mapping.py) for qwen35Dims, in
// llama.cpp's write order (Hugging Face names sorted).
// E=32, FF=32, vocab 40, H_k=2 H_v=4 d=4: K=8, V=16, C=32; attn head 8.
func qwen35Table(mat, matOddRows gguf.Type) []want {
	F := gguf.TypeF32
	gdn := func(i int) []want {
		p := fmt.Sprintf("blk.%d.", i)
		// sorted by HF name: input_layernorm, linear_attn.{A_log, conv1d,
		// dt_bias, in_proj_a, in_proj_b, in_proj_qkv, in_proj_z, norm,
		// out_proj}, mlp.{down,gate,up}, post_attention_layernorm
		return []want{
			{p + "attn_norm.weight", F, []uint64{32}},
			{p + "ssm_a", F, []uint64{4}},
			{p + "ssm_conv1d.weight", F, []uint64{4, 32}},
			{p + "ssm_dt.bias", F, []uint64{4}},
			{p + "ssm_alpha.weight", mat, []uint64{32, 4}},
			{p + "ssm_beta.weight", mat, []uint64{32, 4}},
			{p + "attn_qkv.weight", mat, []uint64{32, 32}},
			{p + "attn_gate.weight", mat, []uint64{32, 16}},
			{p + "ssm_norm.weight", F, []uint64{4}},
			{p + "ssm_out.weight", matOddRows, []uint64{16, 32}},
			{p + "ffn_down.weight", mat, []uint64{32, 32}},
			{p + "ffn_gate.weight", mat, []uint64{32, 32}},
			{p + "ffn_up.weight", mat, []uint64{32, 32}},
			{p + "post_attention_norm.weight", F, []uint64{32}},
		}
	}
	attn := func(i int) []want {
		p := fmt.Sprintf("blk.%d.", i)
		// self_attn.k_norm sorts before self_attn.k_proj.
		return []want{
			{p + "attn_norm.weight", F, []uint64{32}},
			{p + "ffn_down.weight", mat, []uint64{32, 32}},
			{p + "ffn_gate.weight", mat, []uint64{32, 32}},
			{p + "ffn_up.weight", mat, []uint64{32, 32}},
			{p + "post_attention_norm.weight", F, []uint64{32}},
			{p + "attn_k_norm.weight", F, []uint64{8}},
			{p + "attn_k.weight", mat, []uint64{32, 8}},
			{p + "attn_output.weight", matOddRows, []uint64{16, 32}},
			{p + "attn_q_norm.weight", F, []uint64{8}},
			{p + "attn_q.weight", mat, []uint64{32, 32}},
			{p + "attn_v.weight", mat, []uint64{32, 8}},
		}
	}
	ws := []want{{"output.weight", mat, []uint64{32, 40}}, {"token_embd.weight", mat, []uint64{32, 40}}}
	ws = append(ws, gdn(0)...)
	ws = append(ws, attn(1)...)
	ws = append(ws, gdn(2)...)
	ws = append(ws, attn(3)...)
	ws = append(ws, want{"output_norm.weight", F, []uint64{32}})
	return ws
}

func convertDir(t *testing.T, dir string, opt Options) (*gguf.File, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.gguf")
	if err := ConvertFile(t.Context(), dir, out, opt); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, b
}

func checkTable(t *testing.T, f *gguf.File, ws []want) {
	t.Helper()
	if len(f.Tensors) != len(ws) {
		var got []string
		for _, ti := range f.Tensors {
			got = append(got, ti.Name)
		}
		t.Fatalf("got %d tensors, want %d:\n%s", len(f.Tensors), len(ws), strings.Join(got, "\n"))
	}
	for i, w := range ws {
		ti := f.Tensors[i]
		if ti.Name != w.name || ti.Type != w.typ || fmt.Sprint(ti.Shape) != fmt.Sprint(w.shape) {
			t.Errorf("tensor %d: got %s %v %v, want %s %v %v", i, ti.Name, ti.Type, ti.Shape, w.name, w.typ, w.shape)
		}
	}
}

func TestConvertQwen35Layout(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 1, DTypeBF16))
	for _, c := range []struct {
		ft       FileType
		mat, odd gguf.Type
	}{
		{FileF32, gguf.TypeF32, gguf.TypeF32},
		{FileBF16, gguf.TypeBF16, gguf.TypeBF16},
		{FileF16, gguf.TypeF16, gguf.TypeF16},
		// Q8_0 needs rows of 32; ssm_out / attn_output rows are 16 here,
		// so llama.cpp falls back to F16 for them.
		{FileQ8_0, gguf.TypeQ8_0, gguf.TypeF16},
		{FileQ5_0, gguf.TypeQ5_0, gguf.TypeF16},
		{FileQ4_0, gguf.TypeQ4_0, gguf.TypeF16},
		{FileIQ4_NL, gguf.TypeIQ4_NL, gguf.TypeF16},
		// The K-quants and IQ4_XS need rows of 256: every matrix here falls
		// back, to Q8_0 (IQ4_NL for IQ4_XS) for rows of 32 or F16 for rows
		// of 16.
		{FileIQ4_XS, gguf.TypeIQ4_NL, gguf.TypeF16},
		{FileQ3_K, gguf.TypeQ8_0, gguf.TypeF16},
		{FileQ4_K, gguf.TypeQ8_0, gguf.TypeF16},
		{FileQ5_K, gguf.TypeQ8_0, gguf.TypeF16},
		{FileQ6_K, gguf.TypeQ8_0, gguf.TypeF16},
	} {
		t.Run(c.ft.String(), func(t *testing.T) {
			f, _ := convertDir(t, dir, Options{Type: c.ft, Name: "tiny"})
			checkTable(t, f, qwen35Table(c.mat, c.odd))
			ft, err := f.Uint32("general.file_type")
			if err != nil || FileType(ft) != c.ft {
				t.Errorf("general.file_type = %d, %v; want %d", ft, err, c.ft)
			}
		})
	}
}

func TestConvertQwen35Metadata(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 2, DTypeF32))
	f, _ := convertDir(t, dir, Options{Type: FileF32, Name: "tiny"})
	u := map[string]uint32{
		"block_count": 4, "context_length": 4096, "embedding_length": 32, "feed_forward_length": 32,
		"attention.head_count": 2, "attention.head_count_kv": 1, "attention.key_length": 8,
		"attention.value_length": 8, "ssm.conv_kernel": 4, "ssm.state_size": 4, "ssm.group_count": 2,
		"ssm.time_step_rank": 4, "ssm.inner_size": 16, "full_attention_interval": 2,
		"rope.dimension_count":         2, // head_dim 8 × 0.25
		"general.quantization_version": 2,
	}
	for k, v := range u {
		got, err := f.Uint32(k)
		if err != nil || got != v {
			t.Errorf("%s = %d, %v; want %d", k, got, err, v)
		}
	}
	if f.Arch() != "qwen35" {
		t.Errorf("arch %q", f.Arch())
	}
	if s, _ := f.String("general.name"); s != "tiny" {
		t.Errorf("general.name %q", s)
	}
	if x, _ := f.Float32("rope.freq_base"); x != 1e7 {
		t.Errorf("rope.freq_base %g", x)
	}
	if x, _ := f.Float32("attention.layer_norm_rms_epsilon"); x != 1e-6 {
		t.Errorf("rms eps %g", x)
	}
	if s, _ := f.Int32s("rope.dimension_sections"); fmt.Sprint(s) != "[11 11 10 0]" {
		t.Errorf("rope.dimension_sections %v", s)
	}
	// Tokenizer: 29 base tokens, 3 added, 8 padding entries.
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	types, _ := f.Int32s("tokenizer.ggml.token_type")
	if len(toks) != 40 || len(types) != 40 {
		t.Fatalf("tokens %d types %d, want 40", len(toks), len(types))
	}
	if toks[0] != "t0" || types[0] != TokenNormal || toks[29] != "<|endoftext|>" || types[29] != TokenControl ||
		toks[31] != "<think>" || types[31] != TokenUserDefined || toks[39] != "[PAD39]" || types[39] != TokenUnused {
		t.Errorf("token table: %q %v / %q %v / %q %v / %q %v", toks[0], types[0], toks[29], types[29], toks[31], types[31], toks[39], types[39])
	}
	merges, _ := f.Strings("tokenizer.ggml.merges")
	if fmt.Sprintf("%q", merges) != `["t 1" "aĠb c"]` {
		t.Errorf("merges %q", merges)
	}
	for k, v := range map[string]uint32{"tokenizer.ggml.eos_token_id": 30, "tokenizer.ggml.padding_token_id": 29} {
		if got, err := f.Uint32(k); err != nil || got != v {
			t.Errorf("%s = %d, %v; want %d", k, got, err, v)
		}
	}
	if f.Has("tokenizer.ggml.bos_token_id") {
		t.Error("bos_token_id written although bos_token is null")
	}
	if b, err := f.Bool("tokenizer.ggml.add_bos_token"); err != nil || b {
		t.Errorf("add_bos_token %v %v", b, err)
	}
	if s, _ := f.String("tokenizer.ggml.pre"); s != "qwen35" {
		t.Errorf("pre %q", s)
	}
	if s, _ := f.String("tokenizer.chat_template"); s != "{{ messages }}" {
		t.Errorf("chat_template %q", s)
	}
	// Key order as llama.cpp writes it: architecture first, file_type
	// after the attention keys, quantization_version before the tokenizer.
	var keys []string
	for _, kv := range f.KVs {
		keys = append(keys, kv.Key)
	}
	joined := strings.Join(keys, ",")
	for _, pair := range [][2]string{
		{"general.architecture", "general.type"},
		{"qwen35.attention.value_length", "general.file_type"},
		{"general.file_type", "qwen35.ssm.conv_kernel"},
		{"qwen35.rope.dimension_count", "general.quantization_version"},
		{"general.quantization_version", "tokenizer.ggml.model"},
	} {
		if strings.Index(joined, pair[0]) > strings.Index(joined, pair[1]) {
			t.Errorf("key %s should come before %s: %s", pair[0], pair[1], joined)
		}
	}
	if keys[0] != "general.architecture" {
		t.Errorf("first key %s", keys[0])
	}
}

// TestConvertTransforms checks each llama.cpp transform against values
// worked out by hand from the source tensors.
func TestConvertTransforms(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	ts := hfTensors(d, 3, DTypeF32)
	writeCheckpoint(t, dir, d, ts)
	f, _ := convertDir(t, dir, Options{Type: FileF32})
	src := func(n string) []float32 { return ts[n].data }
	near := func(what string, got, want []float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		for i := range got {
			// -exp in float32 vs float64: a few ulps.
			if !(math.Abs(float64(got[i]-want[i])) <= 1e-6*math.Max(1, math.Abs(float64(want[i])))) { // NaN fails
				t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
			}
		}
	}
	plus1 := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i := range x {
			y[i] = x[i] + 1
		}
		return y
	}
	near("output_norm", readF32Tensor(t, f, "output_norm.weight"), plus1(src("model.norm.weight")))
	near("attn_norm", readF32Tensor(t, f, "blk.0.attn_norm.weight"), plus1(src("model.layers.0.input_layernorm.weight")))
	near("q_norm", readF32Tensor(t, f, "blk.1.attn_q_norm.weight"), plus1(src("model.layers.1.self_attn.q_norm.weight")))
	near("ssm_norm (no +1)", readF32Tensor(t, f, "blk.0.ssm_norm.weight"), src("model.layers.0.linear_attn.norm.weight"))

	// H_k = 2, H_v = 4: HF groups V heads by K head as [g0v0 g0v1 g1v0 g1v1];
	// GGUF tiles them as [g0v0 g1v0 g0v1 g1v1]: new head order = old [0 2 1 3].
	perm := []int{0, 2, 1, 3}
	al := src("model.layers.0.linear_attn.A_log")
	var wantA []float32
	for _, h := range perm {
		wantA = append(wantA, -float32(math.Exp(float64(al[h]))))
	}
	near("ssm_a", readF32Tensor(t, f, "blk.0.ssm_a"), wantA)
	dt := src("model.layers.0.linear_attn.dt_bias")
	near("ssm_dt", readF32Tensor(t, f, "blk.0.ssm_dt.bias"), []float32{dt[0], dt[2], dt[1], dt[3]})

	// conv1d [C=32,1,4] -> ne {4, 32}: channels 0..15 (q, k) unchanged, then
	// V heads of 4 channels permuted.
	cv := src("model.layers.0.linear_attn.conv1d.weight")
	var wantConv []float32
	wantConv = append(wantConv, cv[:16*4]...)
	for _, h := range perm {
		wantConv = append(wantConv, cv[(16+4*h)*4:(16+4*h+4)*4]...)
	}
	near("ssm_conv1d", readF32Tensor(t, f, "blk.0.ssm_conv1d.weight"), wantConv)

	// out_proj [E=32, V=16]: columns permuted per head of 4 within each row.
	op := src("model.layers.2.linear_attn.out_proj.weight")
	var wantOut []float32
	for r := 0; r < 32; r++ {
		row := op[r*16 : r*16+16]
		for _, h := range perm {
			wantOut = append(wantOut, row[4*h:4*h+4]...)
		}
	}
	near("ssm_out", readF32Tensor(t, f, "blk.2.ssm_out.weight"), wantOut)

	// in_proj_qkv rows: q (8 rows) and k (8 rows) stay; v rows per head move.
	qkv := src("model.layers.2.linear_attn.in_proj_qkv.weight")
	var wantQKV []float32
	wantQKV = append(wantQKV, qkv[:16*32]...)
	for _, h := range perm {
		wantQKV = append(wantQKV, qkv[(16+4*h)*32:(16+4*h+4)*32]...)
	}
	near("attn_qkv", readF32Tensor(t, f, "blk.2.attn_qkv.weight"), wantQKV)
	b := src("model.layers.2.linear_attn.in_proj_b.weight")
	var wantB []float32
	for _, h := range perm {
		wantB = append(wantB, b[32*h:32*h+32]...)
	}
	near("ssm_beta", readF32Tensor(t, f, "blk.2.ssm_beta.weight"), wantB)
	// Matrices without a transform are copied.
	near("ffn_down", readF32Tensor(t, f, "blk.3.ffn_down.weight"), src("model.layers.3.mlp.down_proj.weight"))
	near("token_embd", readF32Tensor(t, f, "token_embd.weight"), src("model.embed_tokens.weight"))
}

func TestConvertDeterministic(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 4, DTypeBF16))
	_, a := convertDir(t, dir, Options{Type: FileQ8_0})
	_, b := convertDir(t, dir, Options{Type: FileQ8_0})
	if !bytes.Equal(a, b) {
		t.Fatal("two conversions of the same checkpoint differ")
	}
}

func TestConvertQwen3(t *testing.T) {
	d := qwen3Dims()
	dir := t.TempDir()
	ts := hfTensors(d, 5, DTypeF32)
	writeCheckpoint(t, dir, d, ts)
	f, _ := convertDir(t, dir, Options{Type: FileBF16})
	F, B := gguf.TypeF32, gguf.TypeBF16
	layer := func(i int) []want {
		p := fmt.Sprintf("blk.%d.", i)
		return []want{
			{p + "attn_norm.weight", F, []uint64{32}},
			{p + "ffn_down.weight", B, []uint64{32, 32}},
			{p + "ffn_gate.weight", B, []uint64{32, 32}},
			{p + "ffn_up.weight", B, []uint64{32, 32}},
			{p + "ffn_norm.weight", F, []uint64{32}},
			{p + "attn_k_norm.weight", F, []uint64{8}},
			{p + "attn_k.weight", B, []uint64{32, 16}},
			{p + "attn_output.weight", B, []uint64{32, 32}},
			{p + "attn_q_norm.weight", F, []uint64{8}},
			{p + "attn_q.weight", B, []uint64{32, 32}},
			{p + "attn_v.weight", B, []uint64{32, 16}},
		}
	}
	ws := []want{{"output.weight", B, []uint64{32, 40}}, {"token_embd.weight", B, []uint64{32, 40}}}
	ws = append(ws, layer(0)...)
	ws = append(ws, layer(1)...)
	ws = append(ws, want{"output_norm.weight", F, []uint64{32}})
	checkTable(t, f, ws)
	// Qwen3 norms are plain weights: no +1.
	got := readF32Tensor(t, f, "output_norm.weight")
	for i, w := range ts["model.norm.weight"].data {
		if got[i] != w {
			t.Fatalf("output_norm[%d] = %g, want %g", i, got[i], w)
		}
	}
	if s, _ := f.String("tokenizer.ggml.pre"); s != "qwen2" {
		t.Errorf("pre %q", s)
	}
	if f.Has("rope.dimension_count") || f.Has("ssm.conv_kernel") {
		t.Error("qwen3 file has qwen35-only keys")
	}
}

func TestConvertTiedAndMTP(t *testing.T) {
	d := qwen35Dims()
	d.tied, d.mtp = true, true
	dir := t.TempDir()
	ts := hfTensors(d, 6, DTypeF32)
	writeCheckpoint(t, dir, d, ts)
	f, _ := convertDir(t, dir, Options{Type: FileF32})
	if _, ok := f.Tensor("output.weight"); ok {
		t.Error("tied model has output.weight")
	}
	if n, _ := f.Uint32("block_count"); n != 5 {
		t.Errorf("block_count %d, want 5 (4 + 1 MTP)", n)
	}
	if n, _ := f.Uint32("nextn_predict_layers"); n != 1 {
		t.Errorf("nextn_predict_layers %d", n)
	}
	for _, n := range []string{"blk.4.nextn.eh_proj.weight", "blk.4.attn_q.weight", "blk.4.nextn.shared_head_norm.weight"} {
		if _, ok := f.Tensor(n); !ok {
			t.Errorf("missing %s", n)
		}
	}
	en := readF32Tensor(t, f, "blk.4.nextn.enorm.weight")
	if en[3] != ts["mtp.pre_fc_norm_embedding.weight"].data[3]+1 {
		t.Error("nextn.enorm is not w+1")
	}
	g, _ := convertDir(t, dir, Options{Type: FileF32, NoMTP: true})
	if n, _ := g.Uint32("block_count"); n != 4 || g.Has("nextn_predict_layers") {
		t.Errorf("--no-mtp: block_count %d", n)
	}
}

func TestConvertSharded(t *testing.T) {
	d := qwen35Dims()
	ts := hfTensors(d, 7, DTypeBF16)
	one := t.TempDir()
	writeCheckpoint(t, one, d, ts)
	sh := t.TempDir()
	writeCheckpoint(t, sh, d, ts)
	os.Remove(filepath.Join(sh, "model.safetensors"))
	a, b := map[string]stTensor{}, map[string]stTensor{}
	wm := map[string]string{}
	for n, x := range ts {
		if strings.Contains(n, "layers.1.") || strings.Contains(n, "layers.3.") || strings.HasPrefix(n, "lm_") {
			b[n] = x
			wm[n] = "model-00002-of-00002.safetensors"
		} else {
			a[n] = x
			wm[n] = "model-00001-of-00002.safetensors"
		}
	}
	writeSafetensors(t, filepath.Join(sh, "model-00001-of-00002.safetensors"), a)
	writeSafetensors(t, filepath.Join(sh, "model-00002-of-00002.safetensors"), b)
	writeJSON(t, filepath.Join(sh, "model.safetensors.index.json"), map[string]any{"weight_map": wm})
	f1, _ := convertDir(t, one, Options{Type: FileBF16, Name: "x"})
	f2, _ := convertDir(t, sh, Options{Type: FileBF16, Name: "x"})
	if len(f1.Tensors) != len(f2.Tensors) {
		t.Fatalf("%d vs %d tensors", len(f1.Tensors), len(f2.Tensors))
	}
	for _, ti := range f1.Tensors {
		x, _ := f1.TensorData(ti.Name)
		y, err := f2.TensorData(ti.Name)
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between single-file and sharded conversion", ti.Name)
		}
	}
	// llama.cpp order: shard by shard, so layer 1 comes after output_norm.
	if f2.Tensors[len(f2.Tensors)-1].Name == "output_norm.weight" {
		t.Error("sharded order should follow shards")
	}
}

func TestConvertErrors(t *testing.T) {
	d := qwen35Dims()
	base := func(t *testing.T) (string, map[string]stTensor) {
		dir := t.TempDir()
		ts := hfTensors(d, 8, DTypeF32)
		writeCheckpoint(t, dir, d, ts)
		return dir, ts
	}
	expectErr := func(t *testing.T, dir, substr string) {
		t.Helper()
		err := Convert(dir, &bytes.Buffer{}, Options{Type: FileF32})
		if err == nil || !strings.Contains(err.Error(), substr) {
			t.Fatalf("error %v, want one containing %q", err, substr)
		}
	}
	t.Run("unknown architecture", func(t *testing.T) {
		dir, _ := base(t)
		writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"architectures": []string{"LlamaForCausalLM"}})
		expectErr(t, dir, `architecture "LlamaForCausalLM" is not supported`)
	})
	t.Run("missing tensor", func(t *testing.T) {
		dir, ts := base(t)
		delete(ts, "model.layers.2.linear_attn.A_log")
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
		expectErr(t, dir, "model.layers.2.linear_attn.A_log (for blk.2.ssm_a)")
	})
	t.Run("no config.json", func(t *testing.T) {
		expectErr(t, t.TempDir(), "has no config.json: give a Hugging Face checkpoint's directory")
	})
	t.Run("one tensor spelled twice", func(t *testing.T) {
		// Qwen3.5's checkpoints nest the text model under
		// model.language_model; both spellings normalise to one name.
		dir, ts := base(t)
		ts["model.language_model.norm.weight"] = ts["model.norm.weight"]
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
		expectErr(t, dir, `tensors "model.language_model.norm.weight" (model.safetensors) and "model.norm.weight" (model.safetensors) are both output_norm.weight`)
	})
	t.Run("missing MTP tensors", func(t *testing.T) {
		// A config with mtp_num_hidden_layers whose checkpoint has no mtp.*
		// tensors (as transformers saves a fine-tune) is pointed to --no-mtp.
		dm := d
		dm.mtp = true
		dir := t.TempDir()
		ts := hfTensors(dm, 8, DTypeF32)
		for n := range ts {
			if strings.HasPrefix(n, "mtp.") {
				delete(ts, n)
			}
		}
		writeCheckpoint(t, dir, dm, ts)
		expectErr(t, dir, "only MTP tensors are missing: use --no-mtp")
		if err := Convert(dir, &bytes.Buffer{}, Options{Type: FileF32, NoMTP: true}); err != nil {
			t.Fatalf("--no-mtp: %v", err)
		}
	})
	t.Run("value out of range", func(t *testing.T) {
		// Q8_0's f16 scale holds |x| up to 65504·127; beyond it the block
		// would decode to Inf/NaN. The error names the tensor and the value's
		// place in the GGUF tensor (row = PyTorch row, column = ne0 index).
		dir, ts := base(t)
		x := ts["model.layers.3.mlp.down_proj.weight"] // [E=32, FF=32]
		x.data[20*32+7] = -1e7
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
		err := Convert(dir, &bytes.Buffer{}, Options{Type: FileQ8_0})
		want := "blk.3.ffn_down.weight (model.layers.3.mlp.down_proj.weight in "
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "row 20, column 7 is -1e+07") {
			t.Fatalf("error %v, want one containing %q and the row and column", err, want)
		}
		if err := Convert(dir, &bytes.Buffer{}, Options{Type: FileBF16}); err != nil {
			t.Fatalf("bf16: %v", err)
		}
	})
	t.Run("unexpected tensor", func(t *testing.T) {
		dir, ts := base(t)
		ts["model.layers.0.mlp.extra.weight"] = stTensor{shape: []int64{2}, data: []float32{1, 2}}
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
		expectErr(t, dir, `"model.layers.0.mlp.extra.weight" is not part of a qwen35 model`)
	})
	t.Run("wrong shape", func(t *testing.T) {
		dir, ts := base(t)
		ts["model.norm.weight"] = stTensor{shape: []int64{31}, data: make([]float32, 31)}
		writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
		expectErr(t, dir, `"model.norm.weight" has shape [31], want [32]`)
	})
	t.Run("truncated safetensors", func(t *testing.T) {
		dir, _ := base(t)
		p := filepath.Join(dir, "model.safetensors")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:len(b)-100], 0o644)
		expectErr(t, dir, "truncated?")
	})
	t.Run("hostile header length", func(t *testing.T) {
		dir, _ := base(t)
		p := filepath.Join(dir, "model.safetensors")
		b, _ := os.ReadFile(p)
		b[7] = 0x7f
		os.WriteFile(p, b, 0o644)
		expectErr(t, dir, "header length")
	})
	// JSON of the wrong kind is named in JSON's terms, not Go's.
	t.Run("header entry not an object", func(t *testing.T) {
		dir := t.TempDir()
		writeCheckpoint(t, dir, d, hfTensors(d, 8, DTypeF32))
		hdr := []byte(`{"model.norm.weight":"x"}`)
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
		os.WriteFile(filepath.Join(dir, "model.safetensors"), append(b, hdr...), 0o644)
		expectErr(t, dir, `tensor "model.norm.weight": bad header entry: a JSON string where an object belongs`)
	})
	// Two entries over the same bytes, and one name given twice.
	for _, c := range []struct{ name, hdr, want string }{
		{"overlapping data", `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}`,
			`tensors "a" and "b" share bytes (data_offsets [0,16] and [8,24])`},
		// An empty tensor between them hides nothing.
		{"overlap around an empty tensor", `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"z":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},"b":{"dtype":"F32","shape":[3],"data_offsets":[12,24]}}`,
			`tensors "a" and "b" share bytes (data_offsets [0,16] and [12,24])`},
		{"duplicate name", `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"a":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}}`,
			`header names tensor "a" twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCheckpoint(t, dir, d, hfTensors(d, 8, DTypeF32))
			b := binary.LittleEndian.AppendUint64(nil, uint64(len(c.hdr)))
			b = append(append(b, c.hdr...), make([]byte, 24)...)
			os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644)
			expectErr(t, dir, c.want)
		})
	}
	t.Run("config field of the wrong kind", func(t *testing.T) {
		dir, _ := base(t)
		c := map[string]any{}
		readJSONInto(t, filepath.Join(dir, "config.json"), &c)
		c["hidden_size"] = "wide"
		writeJSON(t, filepath.Join(dir, "config.json"), c)
		expectErr(t, dir, `field "hidden_size" is a JSON string, want an integer`)
	})
	// Values the GGUF would store wrapped, as +Inf, or that its readers
	// refuse: each fails here, naming config.json and the key.
	for _, c := range []struct {
		name string
		key  string
		v    any
		want string
	}{
		{"context past uint32", "max_position_embeddings", int64(4294967297), "max_position_embeddings = 4294967297 is out of range [1, 16777216]"},
		{"negative context", "max_position_embeddings", -1, "max_position_embeddings = -1 is out of range [1, 16777216]"},
		{"epsilon past float32", "rms_norm_eps", 1e39, "must be positive and finite as float32"},
		{"conv kernel 1", "linear_conv_kernel_dim", 1, "linear_conv_kernel_dim = 1 must be at least 2"},
		{"odd rotary dims", "head_dim", 4, "rotary dims 1 (from head_dim 4) must be even"},
		{"bos id past uint32", "bos_token_id", int64(4294967553), "bos token id 4294967553 is outside the vocabulary of 40"},
		{"bos id past the vocabulary", "bos_token_id", 99999, "bos token id 99999 is outside the vocabulary of 40"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := base(t)
			cfg := map[string]any{}
			readJSONInto(t, filepath.Join(dir, "config.json"), &cfg)
			cfg[c.key] = c.v
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
			expectErr(t, dir, c.want)
			expectErr(t, dir, "config.json: ")
		})
	}
	// An id tokenizer_config.json already gave (its pad_token) wins, and
	// config.json's, not written, is not checked.
	t.Run("ignored pad id", func(t *testing.T) {
		dir, _ := base(t)
		cfg := map[string]any{}
		readJSONInto(t, filepath.Join(dir, "config.json"), &cfg)
		cfg["pad_token_id"] = 99999
		writeJSON(t, filepath.Join(dir, "config.json"), cfg)
		if err := Convert(dir, &bytes.Buffer{}, Options{Type: FileF32}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one id, two strings", func(t *testing.T) {
		dir, _ := base(t)
		tj := map[string]any{}
		readJSONInto(t, filepath.Join(dir, "tokenizer.json"), &tj)
		tj["model"].(map[string]any)["vocab"].(map[string]any)["zz"] = 3
		writeJSON(t, filepath.Join(dir, "tokenizer.json"), tj)
		expectErr(t, dir, `model.vocab gives id 3 to both "t3" and "zz"`)
	})
	// Without layer_types the schedule is built from num_hidden_layers
	// alone: a count out of range is refused before that (-1 panicked in
	// make, 2^40 asked for a terabyte).
	for _, n := range []int64{-1, 1 << 40} {
		t.Run(fmt.Sprintf("layer count %d without layer_types", n), func(t *testing.T) {
			dir, _ := base(t)
			c := map[string]any{}
			readJSONInto(t, filepath.Join(dir, "config.json"), &c)
			delete(c, "layer_types")
			c["num_hidden_layers"] = n
			writeJSON(t, filepath.Join(dir, "config.json"), c)
			expectErr(t, dir, fmt.Sprintf("config.json: num_hidden_layers = %d is out of range [1, 4096]", n))
		})
	}
	t.Run("irregular layer_types", func(t *testing.T) {
		dir, _ := base(t)
		c := map[string]any{}
		readJSONInto(t, filepath.Join(dir, "config.json"), &c)
		c["layer_types"] = []string{"linear_attention", "full_attention", "full_attention", "full_attention"}
		writeJSON(t, filepath.Join(dir, "config.json"), c)
		expectErr(t, dir, "layer_types is not")
	})
}

// TestVocabCheck: Vocab.Check loads the tokenizer a written file would
// give, and Convert passes its failure to Options.Warn before any tensor.
func TestVocabCheck(t *testing.T) {
	// GPT-2's byte-level alphabet: printable Latin-1 bytes stand for
	// themselves, the others for U+0100 upwards in byte order.
	var bytesVocab []string
	next := rune(0x100)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE {
			bytesVocab = append(bytesVocab, string(rune(b)))
		} else {
			bytesVocab = append(bytesVocab, string(next))
			next++
		}
	}
	good := &Vocab{Tokens: append(bytesVocab, "ab"), Types: make([]int32, 257), Merges: []string{"a b"}}
	for i := range good.Types {
		good.Types[i] = TokenNormal
	}
	if err := good.Check("qwen35"); err != nil {
		t.Fatalf("byte-level vocabulary: %v", err)
	}
	bad := *good
	bad.Merges = []string{"a b", "zz q"}
	if err := bad.Check("qwen35"); err == nil || !strings.Contains(err.Error(), `"zz q"`) {
		t.Errorf("merge of unknown tokens: %v", err)
	}

	// The tiny checkpoints' 40-token vocabularies hold no byte tokens.
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 8, DTypeF32))
	var warned []string
	opt := Options{Type: FileF32, Warn: func(m string) { warned = append(warned, m) }}
	if err := Convert(dir, &bytes.Buffer{}, opt); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "its tokenizer does not load") || !strings.Contains(warned[0], "--prompt-tokens") {
		t.Errorf("warnings %q", warned)
	}
}

// TestConvertVHeadReorderNotInvolution checks llama.cpp's grouped→tiled V-head
// reorder on every tensor it touches with H_k = 2, H_v = 6. The other tests
// use H_k = 2, H_v = 4, whose permutation [0 2 1 3] is its own inverse, so
// an inverted reorder (tiled→grouped) passed them; real models are not
// like that (9B: H_k 16, H_v 32). llama.cpp reshapes the V span as
// [H_k, r, d], swaps the first two axes and flattens: new head j·H_k + g is
// old head g·r + j. For r = 3 that is new order = old [0 3 1 4 2 5] (its
// inverse would be [0 2 4 1 3 5]).
func TestConvertVHeadReorderNotInvolution(t *testing.T) {
	d := qwen35Dims()
	d.hv, d.layers = 6, 2 // layer 0 Gated DeltaNet, layer 1 attention
	dir := t.TempDir()
	ts := hfTensors(d, 11, DTypeF32)
	writeCheckpoint(t, dir, d, ts)
	f, _ := convertDir(t, dir, Options{Type: FileF32})
	perm := []int{0, 3, 1, 4, 2, 5}
	const E, K, dv = 32, 8, 4 // hidden, H_k·d_k, V head dim
	src := func(n string) []float32 { return ts["model.layers.0.linear_attn."+n].data }
	// heads returns rows [0, keep) of x unchanged, then the head-sized
	// blocks of per values each in perm order.
	heads := func(x []float32, keep, per int) []float32 {
		out := append([]float32(nil), x[:keep]...)
		for _, h := range perm {
			out = append(out, x[keep+h*per:keep+(h+1)*per]...)
		}
		return out
	}
	exact := func(name string, want []float32) {
		t.Helper()
		got := readF32Tensor(t, f, "blk.0."+name)
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s[%d] = %g, want %g", name, i, got[i], want[i])
			}
		}
	}
	exact("attn_qkv.weight", heads(src("in_proj_qkv.weight"), 2*K*E, dv*E))
	exact("attn_gate.weight", heads(src("in_proj_z.weight"), 0, dv*E))
	exact("ssm_beta.weight", heads(src("in_proj_b.weight"), 0, E))
	exact("ssm_alpha.weight", heads(src("in_proj_a.weight"), 0, E))
	exact("ssm_dt.bias", heads(src("dt_bias"), 0, 1))
	exact("ssm_conv1d.weight", heads(src("conv1d.weight"), 2*K*d.conv, dv*d.conv))
	var out []float32
	op := src("out_proj.weight") // [E, V]: columns move within each row
	for r := 0; r < E; r++ {
		out = append(out, heads(op[r*6*dv:(r+1)*6*dv], 0, dv)...)
	}
	exact("ssm_out.weight", out)
	var a []float32
	for _, x := range heads(src("A_log"), 0, 1) {
		a = append(a, float32(-math.Exp(float64(x))))
	}
	exact("ssm_a", a)
}

// TestConvertReplacesOnlyGGUF: an output path naming a file that is not a
// GGUF file (here the checkpoint's own inputs, as a slip in -o would) is
// refused before any work and the file is left as it was; an empty file
// and an earlier GGUF are replaced.
func TestConvertReplacesOnlyGGUF(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 1, DTypeBF16))
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		p := filepath.Join(dir, name)
		before, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		err = ConvertFile(t.Context(), dir, p, Options{Type: FileBF16})
		if err == nil || !strings.Contains(err.Error(), "is not a GGUF file") || !strings.Contains(err.Error(), p) {
			t.Errorf("-o %s: %v; want an error naming it as not a GGUF file", name, err)
		}
		if after, err := os.ReadFile(p); err != nil || !bytes.Equal(after, before) {
			t.Errorf("-o %s: the file changed (%d bytes before, %d after, %v)", name, len(before), len(after), err)
		}
		if tmps := tempsOf(t, p); len(tmps) > 0 {
			t.Errorf("-o %s: %v left behind", name, tmps)
		}
	}
	out := filepath.Join(t.TempDir(), "out.gguf")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // empty, then the first run's GGUF
		if err := ConvertFile(t.Context(), dir, out, Options{Type: FileBF16}); err != nil {
			t.Fatalf("run %d over %s: %v", i, out, err)
		}
		f, err := gguf.Open(out)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		f.Close() // mapped, the file could not be replaced on Windows
	}
	// Too short to hold the magic, and a file that only begins like one.
	for _, b := range []string{"GG", "GGUX and more"} {
		if err := os.WriteFile(out, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1}); err == nil || !strings.Contains(err.Error(), "is not a GGUF file") {
			t.Errorf("synth over %q: %v; want it refused", b, err)
		}
	}
}
