package model_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

func writeSpec(t *testing.T, s modeltest.Spec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t *testing.T, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func load(t *testing.T, s modeltest.Spec) (*model.Model, error) {
	t.Helper()
	return model.Load(open(t, writeSpec(t, s)))
}

func TestLoadQwen35(t *testing.T) {
	s := modeltest.TinyQwen35()
	s.Type = func(name string) gguf.Type {
		if strings.Contains(name, "ffn_down") {
			return gguf.TypeQ8_0
		}
		return gguf.TypeBF16
	}
	m, err := load(t, s)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	// Expected values come from the spec, not from the loader.
	checks := []struct {
		name      string
		got, want int
	}{
		{"NLayer", c.NLayer, s.NLayer},
		{"NLayerAll", c.NLayerAll, s.NLayer + s.NNextN},
		{"NNextN", c.NNextN, s.NNextN},
		{"NEmbd", c.NEmbd, s.NEmbd},
		{"NFF", c.NFF, s.NFF},
		{"NVocab", c.NVocab, s.NVocab},
		{"NHead", c.NHead, s.NHead},
		{"NHeadKV", c.NHeadKV, s.NHeadKV},
		{"HeadDimK", c.HeadDimK, s.HeadDim},
		{"NRot", c.NRot, s.NRot},
		{"SSMConvKernel", c.SSMConvKernel, s.ConvKernel},
		{"SSMStateSize", c.SSMStateSize, s.StateSize},
		{"SSMGroupCount", c.SSMGroupCount, s.GroupCount},
		{"SSMNumVHeads", c.SSMNumVHeads, s.NumVHeads},
		{"SSMHeadDimV", c.SSMHeadDimV, s.HeadDimV},
		{"SSMConvChannels", c.SSMConvChannels(), 2*s.GroupCount*s.StateSize + s.NumVHeads*s.HeadDimV},
		{"ContextLength", c.ContextLength, s.ContextLength},
		{"RopeSections[2]", c.RopeSections[2], 10},
		{"layers", len(m.Layers), s.NLayer},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %d, want %d", ck.name, ck.got, ck.want)
		}
	}
	if c.NormEps != s.NormEps || c.RopeBase != s.RopeBase || !c.AttnOutputGate || c.TiedOutput {
		t.Errorf("eps %g base %g gate %v tied %v", c.NormEps, c.RopeBase, c.AttnOutputGate, c.TiedOutput)
	}
	// interval 2: layers 1 and 3 are attention.
	wantKinds := []model.LayerKind{model.LayerRecurrent, model.LayerAttention, model.LayerRecurrent, model.LayerAttention}
	for i, k := range wantKinds {
		if c.Kinds[i] != k || m.Layers[i].Kind != k {
			t.Errorf("layer %d kind %v/%v, want %v", i, c.Kinds[i], m.Layers[i].Kind, k)
		}
	}
	L0, L1 := m.Layers[0], m.Layers[1]
	if L0.AttnQKV == nil || L0.SSMA == nil || L0.AttnQ != nil || L1.AttnQ == nil || L1.AttnQKV != nil {
		t.Errorf("layer fields not set per kind")
	}
	if got, want := L1.AttnQ.Shape, []int{s.NEmbd, 2 * s.NHead * s.HeadDim}; !equal(got, want) {
		t.Errorf("attn_q shape %v, want %v", got, want)
	}
	if L1.FFNDown.Type != gguf.TypeQ8_0 || L1.FFNUp.Type != gguf.TypeBF16 || L0.SSMConv.Type != gguf.TypeF32 {
		t.Errorf("types: ffn_down %v ffn_up %v conv %v", L1.FFNDown.Type, L1.FFNUp.Type, L0.SSMConv.Type)
	}
	// Zero-copy: data length is exactly rows × row bytes, i.e. bf16 2 bytes.
	if got, want := len(L1.FFNUp.Data), s.NEmbd*s.NFF*2; got != want {
		t.Errorf("ffn_up data %d bytes, want %d", got, want)
	}
	if m.Output == m.TokenEmbd {
		t.Errorf("untied model: Output aliases TokenEmbd")
	}
}

func TestLoadTiedAndRecurrentLayers(t *testing.T) {
	s := modeltest.TinyQwen35()
	s.Tied = true
	s.RecurrentLyrs = []bool{true, true, false, true, false} // 5th entry: MTP layer
	m, err := load(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if !m.TiedOutput || m.Output != m.TokenEmbd {
		t.Errorf("tied: TiedOutput %v, Output %p TokenEmbd %p", m.TiedOutput, m.Output, m.TokenEmbd)
	}
	want := []model.LayerKind{model.LayerRecurrent, model.LayerRecurrent, model.LayerAttention, model.LayerRecurrent}
	for i, k := range want {
		if m.Kinds[i] != k {
			t.Errorf("layer %d: %v, want %v", i, m.Kinds[i], k)
		}
	}
	if m.NumAttention() != 1 {
		t.Errorf("NumAttention %d, want 1", m.NumAttention())
	}
}

func TestLoadQwen3(t *testing.T) {
	s := modeltest.TinyQwen3()
	m, err := load(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if m.AttnOutputGate || m.NLayer != s.NLayer || m.NRot != s.HeadDim {
		t.Errorf("qwen3: gate %v layers %d rot %d", m.AttnOutputGate, m.NLayer, m.NRot)
	}
	for i, L := range m.Layers {
		if L.Kind != model.LayerAttention || L.FFNNorm == nil || L.FFNNorm.Name != "blk."+itoa(i)+".ffn_norm.weight" {
			t.Errorf("layer %d: kind %v ffn norm %v", i, L.Kind, L.FFNNorm)
		}
		if got, want := L.AttnQ.Shape[1], s.NHead*s.HeadDim; got != want {
			t.Errorf("layer %d attn_q rows %d, want %d", i, got, want)
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tensorNames lists the tensors modeltest writes for s.
func tensorNames(t *testing.T, s modeltest.Spec) []string {
	t.Helper()
	var names []string
	for _, ti := range open(t, writeSpec(t, s)).Tensors {
		names = append(names, ti.Name)
	}
	return names
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*modeltest.Spec)
		want   []string // substrings of the error
	}{
		{"missing tensor", func(s *modeltest.Spec) { s.Omit = map[string]bool{"blk.2.ssm_a": true} },
			[]string{"blk.2.ssm_a", "missing"}},
		{"wrong shape", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"blk.1.attn_k.weight": {256, 64}}
		}, []string{"blk.1.attn_k.weight", "[256 64]", "expected [256 128]"}},
		{"control: all F32 loads", func(s *modeltest.Spec) {
			s.Type = func(string) gguf.Type { return gguf.TypeF32 }
		}, nil},
		{"wrong norm type", func(s *modeltest.Spec) {
			s.Force = map[string]gguf.Type{"blk.3.attn_q_norm.weight": gguf.TypeBF16}
		}, []string{"blk.3.attn_q_norm.weight", "BF16", "expected F32"}},
		{"unsupported matrix type", func(s *modeltest.Spec) {
			s.Type = func(name string) gguf.Type {
				if name == "blk.0.ffn_up.weight" {
					return gguf.TypeF64
				}
				return gguf.TypeF32
			}
		}, []string{"blk.0.ffn_up.weight", "F64", "not supported"}},
		{"missing key", func(s *modeltest.Spec) { s.SkipKeys = map[string]bool{"ssm.state_size": true} },
			[]string{"qwen35.ssm.state_size"}},
		{"infinite epsilon", func(s *modeltest.Spec) { s.NormEps = float32(math.Inf(1)) },
			[]string{"rms epsilon +Inf", "must be positive and finite"}},
		{"infinite rope base", func(s *modeltest.Spec) { s.RopeBase = float32(math.Inf(1)) },
			[]string{"rope base +Inf", "must be positive and finite"}},
		// A file of another shape fails every matrix: the first 20 listed.
		// 32 matrices: token_embd, output, 8 in each of the 2 recurrent
		// layers (qkv, gate, beta, alpha, ssm_out, 3 FFN), 7 in each of the
		// 2 attention layers (q, k, v, output, 3 FFN).
		{"many problems", func(s *modeltest.Spec) {
			s.Type = func(string) gguf.Type { return gguf.TypeF64 }
		}, []string{"token_embd.weight", "F64", "\n… and 12 more"}},
		// block_count past the file's blocks: one error before any per-layer
		// table is sized from it (a hostile 2^31 ran out of memory).
		{"block count past the tensors", func(s *modeltest.Spec) {
			s.NNextN = 0
			s.Omit = map[string]bool{}
			for _, n := range tensorNames(t, modeltest.TinyQwen35()) {
				if strings.HasPrefix(n, "blk.3.") {
					s.Omit[n] = true
				}
			}
		}, []string{"qwen35.block_count = 4 (4 main layers), but the file has no tensors blk.3.*"}},
		// ... even when one stray tensor name reaches as far as the count.
		{"block count past the tensors, one stray name", func(s *modeltest.Spec) {
			s.NNextN = 0
			s.BlockCount = 1<<31 - 1
			s.Extra = map[string][]uint64{"blk.2147483646.x": {1}}
		}, []string{"qwen35.block_count = 2147483647", "no tensors blk.4.*"}},
		// token_embd with a trailing 1 loads, as every other tensor does.
		{"control: token_embd with a trailing 1", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"token_embd.weight": {uint64(s.NEmbd), uint64(s.NVocab), 1}}
		}, nil},
		{"token_embd of 3 dims", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"token_embd.weight": {uint64(s.NEmbd), uint64(s.NVocab) / 2, 2}}
		}, []string{"token_embd.weight: shape [256 160 2] is not 2-D"}},
		// The conv keeps kernel − 1 past inputs: a kernel of 1 loaded and
		// then panicked on the first token.
		{"conv kernel 1", func(s *modeltest.Spec) { s.ConvKernel = 1 },
			[]string{"qwen35.ssm.conv_kernel = 1 must be at least 2"}},
		// A key no tensor pins (here: no attention layer) is still bounded.
		{"head count past MaxDim", func(s *modeltest.Spec) {
			s.NNextN = 0
			s.RecurrentLyrs = []bool{true, true, true, true}
			s.NHead, s.NHeadKV = 2000000000, 1
		}, []string{"qwen35.attention.head_count = 2000000000 is more than 16777216"}},
		// The vocabulary comes from token_embd's shape, bounded only by the
		// file's size; past int32 the GPU launchers wrapped it (2^32+5 → 5).
		// Refused before the shape check (Load's only error here before).
		{"vocabulary past MaxDim", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"token_embd.weight": {0, 1<<32 + 5}}
		}, []string{"tensor token_embd.weight: 4294967301 rows (the vocabulary) are more than 16777216"}},
		// Trailing 1s are dropped, and only they: a {n, 1} norm loads, a
		// {n, 2} one does not, and a real last dim of 1 (a vocabulary of
		// one) is kept.
		{"control: norm with a trailing 1", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"output_norm.weight": {uint64(s.NEmbd), 1}}
		}, nil},
		{"norm of 2 dims", func(s *modeltest.Spec) {
			s.Shape = map[string][]uint64{"output_norm.weight": {uint64(s.NEmbd), 2}}
		}, []string{"tensor output_norm.weight: shape [256 2], expected [256]"}},
		{"control: vocabulary of 1", func(s *modeltest.Spec) { s.NVocab = 1 }, nil},
		// ssm_beta {256, 4}: only ne[0] need be a multiple of Q8_0's 32.
		{"control: all Q8_0 loads", func(s *modeltest.Spec) {
			s.Type = func(string) gguf.Type { return gguf.TypeQ8_0 }
		}, nil},
		// block_count below the file's blocks would run a truncated model.
		{"block count below the tensors", func(s *modeltest.Spec) { s.BlockCount = 3 },
			[]string{"qwen35.block_count = 3, but the file has tensors of blk.4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := modeltest.TinyQwen35()
			tc.mutate(&s)
			_, err := load(t, s)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one mentioning %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestUnknownArchitecture(t *testing.T) {
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	w.SetKV("general.architecture", gguf.StringValue("llama"))
	w.AddTensorBytes("token_embd.weight", gguf.TypeF32, []uint64{4, 2}, make([]byte, 32))
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	_, err = model.Load(f)
	if err == nil || !strings.Contains(err.Error(), `"llama"`) || !strings.Contains(err.Error(), "qwen35") ||
		!strings.Contains(err.Error(), "qwen3,") {
		t.Fatalf("error %v: want it to name llama and list qwen3, qwen35", err)
	}
}

// TestMetadataOnly: a GGUF with no tensors (the tokenizer-only files in
// testdata) is called what it is, not reported by its first missing key.
func TestMetadataOnly(t *testing.T) {
	f, err := gguf.Open(filepath.Join("..", "testdata", "tokenizer", "qwen3-vocab.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := model.Load(f); err == nil || !strings.Contains(err.Error(), "has no tensors") {
		t.Fatalf("tokenizer-only file: %v", err)
	}
}

func TestTruncatedFile(t *testing.T) {
	path := writeSpec(t, modeltest.TinyQwen3())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the tensor data: the header parses, a tensor runs past the end.
	cut := filepath.Join(t.TempDir(), "cut.gguf")
	if err := os.WriteFile(cut, data[:len(data)-1000], 0o644); err != nil {
		t.Fatal(err)
	}
	// The reader or the loader must refuse it, naming the tensor cut short.
	f, err := gguf.Open(cut)
	if err == nil {
		defer f.Close()
		_, err = model.Load(f)
	}
	if err == nil {
		t.Fatal("truncated file loaded without error")
	}
	if !strings.Contains(err.Error(), "tensor ") || !strings.Contains(err.Error(), "blk.2.ffn_down.weight") {
		t.Errorf("error %q does not name the truncated tensor blk.2.ffn_down.weight", err)
	}
}

// TestCheckOpen: a model whose file was closed says so; its tensors point
// into memory no longer mapped, where a backend's read is a fault that ends
// the process.
func TestCheckOpen(t *testing.T) {
	path := writeSpec(t, modeltest.TinyQwen3())
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckOpen(); err != nil {
		t.Fatalf("open file: %v", err)
	}
	if f.Closed() {
		t.Fatal("Closed before Close")
	}
	f.Close()
	if !f.Closed() {
		t.Fatal("not Closed after Close")
	}
	if err := m.CheckOpen(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("closed file: err = %v, want one naming %s and saying closed", err, path)
	}
	// A Model not from Load may lack any tensor, or hold one of another
	// shape: backends (which call CheckOpen first) refuse it.
	if err := (&model.Model{}).CheckOpen(); err == nil || !strings.Contains(err.Error(), "not made by model.Load") {
		t.Errorf("a Model not from Load: %v; want it refused", err)
	}
}

// TestLoadErrorCap: exactly maxLoadErrs (20) problems are all listed, with
// no count of more.
func TestLoadErrorCap(t *testing.T) {
	s := modeltest.TinyQwen35()
	// The 20 matrices of layers 0-2 (8 + 7 + 8 - 3 = 20 with layer 2's FFN
	// left F32): token_embd and output stay F32 too.
	bad := map[string]bool{}
	for _, n := range tensorNames(t, s) {
		if (strings.HasPrefix(n, "blk.0.") || strings.HasPrefix(n, "blk.1.") || strings.HasPrefix(n, "blk.2.")) &&
			!strings.HasPrefix(n, "blk.2.ffn_") && strings.HasSuffix(n, ".weight") && !strings.Contains(n, "norm") &&
			!strings.Contains(n, "conv1d") {
			bad[n] = true
		}
	}
	if len(bad) != 20 {
		t.Fatalf("%d matrices chosen, want 20: %v", len(bad), bad)
	}
	s.Type = func(name string) gguf.Type {
		if bad[name] {
			return gguf.TypeF64
		}
		return gguf.TypeF32
	}
	_, err := load(t, s)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "more") {
		t.Errorf("20 problems, error counts more: %v", err)
	}
	for n := range bad {
		if !strings.Contains(err.Error(), "tensor "+n+": type F64 not supported") {
			t.Errorf("error does not list %s: %v", n, err)
		}
	}
}

// TestTensorRow: Row r of an F32 {256, n} matrix is bytes [1024r, 1024r+1024)
// of its data (256 elements of 4 bytes), for every r.
func TestTensorRow(t *testing.T) {
	m, err := load(t, modeltest.TinyQwen3())
	if err != nil {
		t.Fatal(err)
	}
	w := m.TokenEmbd // {256, 320}
	if w.Cols() != 256 || w.Rows() != 320 || w.RowBytes() != 1024 {
		t.Fatalf("%v: cols %d rows %d row bytes %d", w, w.Cols(), w.Rows(), w.RowBytes())
	}
	for _, r := range []int{0, 1, 2, 319} {
		got := w.Row(r)
		if len(got) != 1024 || &got[0] != &w.Data[1024*r] {
			t.Errorf("Row(%d): %d bytes at %p, want 1024 at %p", r, len(got), &got[0], &w.Data[1024*r])
		}
	}
	// A trailing dim counts in Rows: {4, 3, 2} has 6 rows.
	if got := (&model.Tensor{Type: gguf.TypeF32, Shape: []int{4, 3, 2}}).Rows(); got != 6 {
		t.Errorf("Rows of {4, 3, 2} = %d, want 6", got)
	}
	if model.LayerAttention.String() != "attention" || model.LayerRecurrent.String() != "recurrent" {
		t.Errorf("kinds: %v %v", model.LayerAttention, model.LayerRecurrent)
	}
}

// TestTensorsAndWeightBytes: every loaded tensor once, and the bytes a step
// reads. TinyQwen3, all F32 (4 bytes): token_embd and output {256, 320}
// 327,680 bytes each, output_norm 1,024; per layer (3): 2 norms 2,048,
// q and o {256, 256} 262,144 each, k and v {256, 128} 131,072 each,
// q_norm and k_norm {64} 256 each, 3 FFN matrices of 256×512 524,288 each:
// 2,361,856.
func TestTensorsAndWeightBytes(t *testing.T) {
	const layers = 3 * 2361856
	for _, tc := range []struct {
		tied    bool
		tensors int
		bytes   int64
	}{
		// Untied: token_embd counts one row (1,024 bytes), output in full.
		{false, 3 + 3*11, 1024 + 1024 + 327680 + layers},
		// Tied: token_embd is the LM head, read in full, listed once.
		{true, 2 + 3*11, 327680 + 1024 + layers},
	} {
		s := modeltest.TinyQwen3()
		s.Tied = tc.tied
		m, err := load(t, s)
		if err != nil {
			t.Fatal(err)
		}
		ts := m.Tensors()
		seen := map[string]bool{}
		for _, x := range ts {
			if x == nil || seen[x.Name] {
				t.Errorf("tied %v: tensor %v nil or listed twice", tc.tied, x)
				continue
			}
			seen[x.Name] = true
		}
		if len(ts) != tc.tensors || ts[0] != m.TokenEmbd {
			t.Errorf("tied %v: %d tensors (first %v), want %d (first token_embd)", tc.tied, len(ts), ts[0], tc.tensors)
		}
		if got := m.WeightBytes(); got != tc.bytes {
			t.Errorf("tied %v: WeightBytes %d, want %d", tc.tied, got, tc.bytes)
		}
	}
}
