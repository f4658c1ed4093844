package convert

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// dataBytes is the sum of the tensors' data sizes in f, read from the file.
func dataBytes(t *testing.T, f *gguf.File) int64 {
	t.Helper()
	var n int64
	for _, ti := range f.Tensors {
		b, err := f.Data(&ti)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(b))
	}
	return n
}

// progressLog records Options.Progress / SynthOptions.Progress calls.
type progressLog struct{ done, total []int64 }

func (p *progressLog) report(done, total int64) {
	p.done = append(p.done, done)
	p.total = append(p.total, total)
}

// check: the total is the same in every call and is the file's tensor data
// in bytes; done grows and ends at the total.
func (p *progressLog) check(t *testing.T, want int64) {
	t.Helper()
	if len(p.done) == 0 {
		t.Fatal("Progress never called")
	}
	if want <= 0 {
		t.Fatalf("the file holds %d bytes of tensor data", want)
	}
	for i := range p.done {
		if p.total[i] != want {
			t.Fatalf("call %d: total %d, want %d (the file's tensor data)", i, p.total[i], want)
		}
		if i > 0 && p.done[i] <= p.done[i-1] {
			t.Fatalf("call %d: done %d after %d", i, p.done[i], p.done[i-1])
		}
	}
	if last := p.done[len(p.done)-1]; last != want {
		t.Errorf("last done %d, want the total %d", last, want)
	}
}

// TestProgressTotal: the total that Convert and Synth report to Progress is
// the bytes of tensor data the file gets, so that done reaches it exactly.
// The types include a quantised one (Q8_0: 34 bytes a row of 32) and
// matrices of many rows, where a total counted per row or per tensor
// differs.
func TestProgressTotal(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 3, DTypeBF16))
	for _, ft := range []FileType{FileF32, FileBF16, FileQ8_0} {
		t.Run("convert "+ft.String(), func(t *testing.T) {
			var p progressLog
			f, _ := convertDir(t, dir, Options{Type: ft, Progress: p.report})
			p.check(t, dataBytes(t, f))
		})
		t.Run("synth "+ft.String(), func(t *testing.T) {
			var p progressLog
			out := filepath.Join(t.TempDir(), "s.gguf")
			if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: ft, Seed: 1, Progress: p.report}); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p.check(t, dataBytes(t, f))
		})
	}
}

// TestRopeSectionsKey: qwen35's rope.dimension_sections is written once,
// right after attention.head_count_kv when the config gives mrope_section
// and right after rope.dimension_count when it does not (llama.cpp's order,
// spec.go's RopeSectionsFromConfig); without mrope_section the value is
// the default [11 11 10 0].
func TestRopeSectionsKey(t *testing.T) {
	d := qwen35Dims()
	for _, c := range []struct {
		name     string
		sections any // nil: no mrope_section in the config
		after    string
		want     string
	}{
		{"from config", []int{12, 10, 10}, "qwen35.attention.head_count_kv", "[12 10 10 0]"},
		{"default", nil, "qwen35.rope.dimension_count", "[11 11 10 0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCheckpoint(t, dir, d, hfTensors(d, 4, DTypeF32))
			cfg := map[string]any{}
			readJSONInto(t, filepath.Join(dir, "config.json"), &cfg)
			rp := cfg["rope_parameters"].(map[string]any)
			delete(rp, "mrope_section")
			if c.sections != nil {
				rp["mrope_section"] = c.sections
			}
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
			f, _ := convertDir(t, dir, Options{Type: FileF32})
			const key = "qwen35.rope.dimension_sections"
			at := -1
			for i, kv := range f.KVs {
				if kv.Key != key {
					continue
				}
				if at >= 0 {
					t.Fatalf("%s written twice", key)
				}
				at = i
			}
			if at < 1 {
				t.Fatalf("%s at %d", key, at)
			}
			if prev := f.KVs[at-1].Key; prev != c.after {
				t.Errorf("%s follows %s, want %s", key, prev, c.after)
			}
			v, err := f.Int32s("rope.dimension_sections")
			if err != nil || fmt.Sprint(v) != c.want {
				t.Errorf("%s = %v, %v; want %s", key, v, err, c.want)
			}
		})
	}
}

// TestConvertMTPHints: the --no-mtp hints come exactly when MTP tensors are
// the trouble. A checkpoint with mtp.* tensors (or model.mtp.*, a
// multimodal wrapper's) whose config has no mtp_num_hidden_layers fails
// naming the tensor and pointing to --no-mtp, and converts without them
// under NoMTP; an unexpected non-MTP tensor gets no hint; a missing tensor
// gets the "only MTP tensors are missing" hint only when every missing one
// is an MTP tensor.
func TestConvertMTPHints(t *testing.T) {
	d := qwen35Dims()
	dm := d
	dm.mtp = true
	convertErr := func(t *testing.T, dir string) string {
		t.Helper()
		err := Convert(dir, io.Discard, Options{Type: FileF32})
		if err == nil {
			t.Fatal("converted")
		}
		return err.Error()
	}
	t.Run("MTP tensors without mtp_num_hidden_layers", func(t *testing.T) {
		for _, prefix := range []string{"", "model."} {
			dir := t.TempDir()
			ts := map[string]stTensor{}
			for n, x := range hfTensors(dm, 9, DTypeF32) {
				if strings.HasPrefix(n, "mtp.") {
					n = prefix + n
				}
				ts[n] = x
			}
			writeCheckpoint(t, dir, d, ts) // d: the config has no MTP layer
			msg := convertErr(t, dir)
			if !strings.Contains(msg, `tensor "`+prefix+`mtp.`) ||
				!strings.HasSuffix(msg, "is not part of a qwen35 model with this config (MTP tensor but the config has no mtp_num_hidden_layers; use --no-mtp to drop MTP layers)") {
				t.Errorf("prefix %q: %s", prefix, msg)
			}
			f, _ := convertDir(t, dir, Options{Type: FileF32, NoMTP: true})
			if n, _ := f.Uint32("block_count"); n != 4 || f.Has("nextn_predict_layers") {
				t.Errorf("prefix %q, NoMTP: block_count %d, nextn_predict_layers %v", prefix, n, f.Has("nextn_predict_layers"))
			}
			for _, ti := range f.Tensors {
				if strings.HasPrefix(ti.Name, "blk.4.") {
					t.Errorf("prefix %q, NoMTP: %s written", prefix, ti.Name)
				}
			}
		}
	})
	t.Run("unexpected tensor", func(t *testing.T) {
		dir := t.TempDir()
		ts := hfTensors(d, 9, DTypeF32)
		ts["model.layers.0.mlp.extra.weight"] = stTensor{shape: []int64{2}, data: []float32{1, 2}}
		writeCheckpoint(t, dir, d, ts)
		if msg := convertErr(t, dir); !strings.HasSuffix(msg, `"model.layers.0.mlp.extra.weight" is not part of a qwen35 model with this config`) {
			t.Errorf("%s; want no hint", msg)
		}
	})
	for _, c := range []struct {
		name   string
		drop   []string
		hinted bool
	}{
		{"only MTP missing", []string{"mtp.fc.weight", "mtp.norm.weight"}, true},
		{"non-MTP missing", []string{"model.norm.weight"}, false},
		{"both missing", []string{"mtp.fc.weight", "model.norm.weight"}, false},
		{"both missing, MTP last", []string{"model.layers.0.mlp.up_proj.weight", "mtp.norm.weight"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ts := hfTensors(dm, 9, DTypeF32)
			for _, n := range c.drop {
				delete(ts, n)
			}
			writeCheckpoint(t, dir, dm, ts)
			msg := convertErr(t, dir)
			want := fmt.Sprintf("checkpoint is missing %d tensor(s): ", len(c.drop))
			hint := " (only MTP tensors are missing: use --no-mtp to convert without the MTP layer)"
			if !strings.Contains(msg, want) || strings.HasSuffix(msg, hint) != c.hinted {
				t.Errorf("%s; want %q, hint %v", msg, want, c.hinted)
			}
		})
	}
}

// TestConvertConditionalGeneration: a Qwen3_5ForConditionalGeneration
// checkpoint (text config under text_config, the text model's tensors
// under model.language_model., a vision tower beside them) converts to the
// same bytes as the text-only Qwen3_5ForCausalLM checkpoint: the vision
// tower's tensors (model.visual.*, and *vision_* / *vision.* names of
// other wrappers) and rotary inv_freq buffers are left out, as llama.cpp
// leaves them to the mmproj file.
func TestConvertConditionalGeneration(t *testing.T) {
	d := qwen35Dims()
	d.mtp = true
	ts := hfTensors(d, 12, DTypeBF16)
	text := t.TempDir()
	writeCheckpoint(t, text, d, ts)
	_, want := convertDir(t, text, Options{Type: FileBF16, Name: "m"})

	wrapped := map[string]stTensor{}
	for n, x := range ts {
		if strings.HasPrefix(n, "model.") {
			n = "model.language_model." + strings.TrimPrefix(n, "model.")
		}
		wrapped[n] = x
	}
	odd := stTensor{shape: []int64{3, 5}, data: make([]float32, 15)} // fits nothing in the plan
	for _, n := range []string{
		"model.visual.blocks.0.attn.qkv.weight",
		"model.visual.merger.linear_fc1.weight",
		"model.vision_tower.patch_embed.weight", // no "vision." in it,
		"model.vision.embeddings.weight",
		"model.language_model.rotary_emb.inv_freq",
	} {
		wrapped[n] = odd
	}
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, wrapped)
	var textCfg map[string]any
	readJSONInto(t, filepath.Join(dir, "config.json"), &textCfg)
	writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{
		"architectures": []string{"Qwen3_5ForConditionalGeneration"}, "model_type": "qwen3_5",
		"text_config": textCfg, "vision_config": map[string]any{"depth": 1, "hidden_size": 3},
		"tie_word_embeddings": false,
	})
	_, got := convertDir(t, dir, Options{Type: FileBF16, Name: "m"})
	if !bytes.Equal(got, want) {
		t.Errorf("the wrapped checkpoint converts to %d bytes unlike the text-only one's %d", len(got), len(want))
	}
}

// TestSynthValueRanges: Synth's per-role ranges, read back from the file.
// ssm_a holds −exp(A_log) and must be negative: the Gated DeltaNet decay
// is exp(ssm_a · softplus(·)), below 1 only for ssm_a < 0 (a positive one
// makes the recurrent state grow without bound); synth draws it from
// [−1, −0.05]. ssm_dt.bias (dt_bias) is drawn from [−0.5, 0.5], both signs;
// norms from [0.9, 1.1]. Eight seeds give 64 ssm_a and ssm_dt values; a
// 4096-value tensor pins the ranges' ends.
func TestSynthValueRanges(t *testing.T) {
	ranges := map[string][2]float32{"ssm_a": {-1, -0.05}, "ssm_dt": {-0.5, 0.5}, "norm": {0.9, 1.1}}
	lo := map[string]float32{"ssm_a": 0, "ssm_dt": 1, "norm": 2}
	hi := map[string]float32{"ssm_a": -2, "ssm_dt": -1, "norm": 0}
	spec, err := PresetSpec("tiny")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 8; seed++ {
		out := filepath.Join(t.TempDir(), "s.gguf")
		if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range plan {
			r, ok := ranges[e.Role]
			if !ok {
				continue
			}
			for i, v := range readF32Tensor(t, f, e.Name) {
				if !(v >= r[0] && v <= r[1]) {
					t.Fatalf("seed %d: %s[%d] = %g, outside [%g, %g]", seed, e.Name, i, v, r[0], r[1])
				}
				lo[e.Role], hi[e.Role] = min(lo[e.Role], v), max(hi[e.Role], v)
			}
		}
		f.Close()
	}
	if lo["ssm_dt"] >= 0 || hi["ssm_dt"] <= 0 {
		t.Errorf("ssm_dt.bias spans [%g, %g], want both signs", lo["ssm_dt"], hi["ssm_dt"])
	}
	for _, role := range []string{"ssm_a", "ssm_dt"} {
		r := ranges[role]
		w := r[1] - r[0]
		e := &Entry{Name: "blk.0." + role, Shape: []uint64{4096}, Role: role}
		var buf bytes.Buffer
		if err := synthTensor(&buf, e, gguf.TypeF32, 1, 1, func(int64) {}); err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 4096)
		if err := gguf.Dequantize(gguf.TypeF32, buf.Bytes(), x); err != nil {
			t.Fatal(err)
		}
		got := [2]float32{slices.Min(x), slices.Max(x)}
		if got[0] < r[0] || got[0] > r[0]+w/100 || got[1] > r[1] || got[1] < r[1]-w/100 {
			t.Errorf("%s of 4096 values spans [%g, %g], want nearly all of [%g, %g]", role, got[0], got[1], r[0], r[1])
		}
	}
}

// TestSynthCopiesTokenizerKeys: with VocabGGUF, Synth's file ends with every
// tokenizer.* key of the source in the source's order and with its value
// (tokens and token types padded to the model vocab with [PADi] / unused),
// and no other key of the source (its general.* and qwen3.* keys) comes
// with them.
func TestSynthCopiesTokenizerKeys(t *testing.T) {
	d := qwen3Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 10, DTypeF32))
	vocabPath := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := ConvertFile(t.Context(), dir, vocabPath, Options{Type: FileF32, Name: "source"}); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(vocabPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(t.TempDir(), "s.gguf")
	if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1, VocabGGUF: vocabPath}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec, _ := PresetSpec("tiny")
	var want, got []gguf.KV
	for _, kv := range src.KVs {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			want = append(want, kv)
		}
	}
	if len(want) < 8 {
		t.Fatalf("the source has only %d tokenizer keys", len(want))
	}
	for i, kv := range f.KVs {
		if kv.Key == "general.quantization_version" {
			got = f.KVs[i+1:]
		}
		if !strings.HasPrefix(kv.Key, "tokenizer.") && !strings.HasPrefix(kv.Key, "general.") && !strings.HasPrefix(kv.Key, "qwen35.") {
			t.Errorf("key %s in the synthesised file", kv.Key)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d keys after general.quantization_version, want the source's %d tokenizer keys", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Key != w.Key {
			t.Errorf("key %d: %s, want %s", i, g.Key, w.Key)
			continue
		}
		switch w.Key {
		case "tokenizer.ggml.tokens", "tokenizer.ggml.token_type":
			n := w.Value.Len()
			if g.Value.Len() != spec.NVocab || g.Value.Type() != w.Value.Type() || g.Value.ElemType() != w.Value.ElemType() {
				t.Errorf("%s: %s of %d, want %s of %d", w.Key, g.Value.TypeName(), g.Value.Len(), w.Value.TypeName(), spec.NVocab)
				continue
			}
			for j := 0; j < spec.NVocab; j++ {
				wv := any(nil)
				switch {
				case j < n:
					wv = w.Value.Index(j).Any()
				case w.Key == "tokenizer.ggml.tokens":
					wv = fmt.Sprintf("[PAD%d]", j)
				default:
					wv = TokenUnused
				}
				if gv := g.Value.Index(j).Any(); !reflect.DeepEqual(gv, wv) {
					t.Errorf("%s[%d] = %v, want %v", w.Key, j, gv, wv)
					break
				}
			}
		default:
			if g.Value.Type() != w.Value.Type() || !reflect.DeepEqual(g.Value.Any(), w.Value.Any()) {
				t.Errorf("%s = %s %v, want %s %v", w.Key, g.Value.TypeName(), g.Value, w.Value.TypeName(), w.Value)
			}
		}
	}
	if a, _ := f.String("general.architecture"); a != "qwen35" {
		t.Errorf("general.architecture %q", a)
	}
	if n, _ := f.String("general.name"); !strings.HasPrefix(n, "memra synth qwen35 tiny") {
		t.Errorf("general.name %q", n)
	}
}

// TestSynthByteVocab: without VocabGGUF, Synth writes GPT-2's byte-level
// vocabulary: exactly 256 normal tokens, one per byte, where the 188
// printable bytes (! to ~, ¡ to ¬, ® to ÿ) stand for themselves and the
// other 68 for U+0100 to U+0143 in byte order (space is Ġ, newline Ċ,
// soft hyphen Ń); then <|endoftext|>, <|im_start|>, <|im_end|> as control
// tokens (padding and eos ids 256 and 258) and [PADi] up to the preset's
// vocab. The tokenizer it makes loads.
func TestSynthByteVocab(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.gguf")
	if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	toks, err1 := f.Strings("tokenizer.ggml.tokens")
	types, err2 := f.Int32s("tokenizer.ggml.token_type")
	if err1 != nil || err2 != nil || len(toks) != 512 || len(types) != 512 {
		t.Fatalf("tokens %d (%v), types %d (%v); want 512", len(toks), err1, len(types), err2)
	}
	normal := 0
	for _, ty := range types {
		if ty == TokenNormal {
			normal++
		}
	}
	if normal != 256 {
		t.Errorf("%d normal tokens, want 256 (one per byte)", normal)
	}
	next := rune(0x100)
	for b := 0; b < 256; b++ {
		r := []rune(toks[b])
		printable := b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae
		want := rune(b)
		if !printable {
			want = next
			next++
		}
		if len(r) != 1 || r[0] != want || types[b] != TokenNormal {
			t.Errorf("byte %#x: token %q type %d, want %q normal", b, toks[b], types[b], want)
		}
	}
	if next != 0x144 {
		t.Errorf("%d bytes mapped above U+00FF, want 68", next-0x100)
	}
	for b, want := range map[int]string{0: "Ā", ' ': "Ġ", '\n': "Ċ", 0x7f: "ġ", 0xa0: "ł", 0xad: "Ń", '!': "!", 0xff: "ÿ"} {
		if toks[b] != want {
			t.Errorf("byte %#x: %q, want %q", b, toks[b], want)
		}
	}
	for i, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
		if toks[256+i] != s || types[256+i] != TokenControl {
			t.Errorf("token %d: %q type %d, want %q control", 256+i, toks[256+i], types[256+i], s)
		}
	}
	for i := 259; i < 512; i++ {
		if toks[i] != fmt.Sprintf("[PAD%d]", i) || types[i] != TokenUnused {
			t.Fatalf("token %d: %q type %d, want [PAD%d] unused", i, toks[i], types[i], i)
		}
	}
	for k, v := range map[string]uint32{"tokenizer.ggml.eos_token_id": 258, "tokenizer.ggml.padding_token_id": 256} {
		if got, err := f.Uint32(k); err != nil || got != v {
			t.Errorf("%s = %d, %v; want %d", k, got, err, v)
		}
	}
	if err := byteVocab(512).Check("qwen35"); err != nil {
		t.Errorf("the byte-level vocabulary does not load: %v", err)
	}
}
