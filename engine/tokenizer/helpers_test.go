package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

const (
	testdataDir = "../testdata/tokenizer"
	// vocabGGUFName is Qwen3's vocabulary converted by llama.cpp's rules;
	// engine/convert's TestVocabGGUF builds it and keeps it current.
	vocabGGUFName = "qwen3-vocab.gguf"
)

// qwen3 loads testdata/tokenizer/qwen3-vocab.gguf once for all tests.
var qwen3 = sync.OnceValues(func() (*Tokenizer, error) {
	f, err := gguf.Open(filepath.Join(testdataDir, vocabGGUFName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return FromGGUF(f)
})

func loadQwen3(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := qwen3()
	if err != nil {
		t.Fatalf("load %s: %v", vocabGGUFName, err)
	}
	return tok
}

// hfVocab reads tokenizer.json's model.vocab and added tokens directly, so
// tests can name expected ids by token text without the code under test.
// testdata keeps the file gzip-compressed (tokenizer.json.gz).
var hfVocab = sync.OnceValues(func() (map[string]int32, error) {
	f, err := os.Open(filepath.Join(testdataDir, "tokenizer.json.gz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	var tj struct {
		Added []struct {
			ID      int32  `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
		Model struct {
			Vocab map[string]int32 `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, err
	}
	for _, a := range tj.Added {
		tj.Model.Vocab[a.Content] = a.ID
	}
	return tj.Model.Vocab, nil
})

// ids maps token texts (as in tokenizer.json, e.g. "Ġworld") to their ids.
func ids(t testing.TB, texts ...string) []int32 {
	t.Helper()
	v, err := hfVocab()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int32, len(texts))
	for i, s := range texts {
		id, ok := v[s]
		if !ok {
			t.Fatalf("token %q is not in tokenizer.json", s)
		}
		out[i] = id
	}
	return out
}

type goldenFile struct {
	TokenizersVersion string `json:"tokenizers_version"`
	Cases             []struct {
		ID  int `json:"id"`
		NFC struct {
			Special []int32 `json:"special"`
			Plain   []int32 `json:"plain"`
		} `json:"nfc"`
		Raw struct {
			Special []int32 `json:"special"`
			Plain   []int32 `json:"plain"`
		} `json:"raw"`
	} `json:"cases"`
	Chat []struct {
		Name                string `json:"name"`
		Messages            []map[string]string
		AddGenerationPrompt bool  `json:"add_generation_prompt"`
		EnableThinking      *bool `json:"enable_thinking"`
		Text                string
	} `json:"chat"`
}

type stringCase struct {
	ID   int    `json:"id"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func loadStrings(t testing.TB) []stringCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, "strings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []stringCase
	if err := json.Unmarshal(data, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// loadGoldens reads goldens.json. It is committed: a missing file fails
// rather than skips, or the comparison with Hugging Face would stop silently.
func loadGoldens(t *testing.T) *goldenFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, "goldens.json"))
	if err != nil {
		t.Fatalf("%v (made by scripts/tokenizer/make_goldens.py)", err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}
