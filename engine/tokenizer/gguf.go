package tokenizer

import (
	"errors"
	"fmt"

	"github.com/memra-ai/memra/gguf"
)

// GGUF metadata keys of the tokenizer (llama.cpp's names).
const (
	KeyModel        = "tokenizer.ggml.model"
	KeyPre          = "tokenizer.ggml.pre"
	KeyTokens       = "tokenizer.ggml.tokens"
	KeyTokenType    = "tokenizer.ggml.token_type"
	KeyMerges       = "tokenizer.ggml.merges"
	KeyBOS          = "tokenizer.ggml.bos_token_id"
	KeyEOS          = "tokenizer.ggml.eos_token_id"
	KeyPAD          = "tokenizer.ggml.padding_token_id"
	KeyAddBOS       = "tokenizer.ggml.add_bos_token"
	KeyChatTemplate = "tokenizer.chat_template"
)

// FromGGUF loads the tokenizer from a GGUF file's tokenizer.* metadata.
// tokenizer.ggml.model must be "gpt2" (byte-level BPE); tokenizer.ggml.pre
// one of qwen2, qwen35, llama-bpe (and llama.cpp's aliases of these).
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	src := f.Name()
	if src == "" {
		src = "gguf"
	}
	model, err := f.String(KeyModel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if model != "gpt2" {
		return nil, fmt.Errorf("%s: %s is %q; only byte-level BPE (\"gpt2\") is supported", src, KeyModel, model)
	}
	spec := &vocabSpec{source: src, bos: NoToken, eos: NoToken, pad: NoToken}
	if spec.pre, err = f.String(KeyPre); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if spec.tokens, err = f.Strings(KeyTokens); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	spec.tokens = append([]string(nil), spec.tokens...) // newTokenizer may rename empty ones
	switch types, err := f.Int32s(KeyTokenType); {
	case err == nil:
		spec.types = make([]TokenType, len(types))
		for i, x := range types {
			spec.types[i] = TokenType(x)
		}
	case !errors.Is(err, gguf.ErrKeyNotFound):
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if spec.merges, err = f.Strings(KeyMerges); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	for _, p := range []struct {
		key string
		dst *int32
	}{{KeyBOS, &spec.bos}, {KeyEOS, &spec.eos}, {KeyPAD, &spec.pad}} {
		id, err := f.Uint32(p.key)
		switch {
		case err == nil:
			if int64(id) >= int64(len(spec.tokens)) {
				return nil, fmt.Errorf("%s: %s = %d is outside the vocabulary of %d", src, p.key, id, len(spec.tokens))
			}
			*p.dst = int32(id)
		case !errors.Is(err, gguf.ErrKeyNotFound):
			return nil, fmt.Errorf("%s: %w", src, err)
		}
	}
	switch b, err := f.Bool(KeyAddBOS); {
	case err == nil:
		spec.addBOS = &b
	case !errors.Is(err, gguf.ErrKeyNotFound):
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	switch s, err := f.String(KeyChatTemplate); {
	case err == nil:
		spec.chatTemplate = s
	case !errors.Is(err, gguf.ErrKeyNotFound):
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return newTokenizer(spec)
}

// MetadataEOGs returns the end-of-generation ids f's metadata names by
// number (tokenizer.ggml.eos_token_id, when present and below vocab), for a
// caller whose tokenizer does not load (an unsupported tokenizer.ggml.model)
// but whose generation should still stop where the model ends. When the
// tokenizer loads, its EOGs are a superset.
func MetadataEOGs(f *gguf.File, vocab int) []int32 {
	if id, err := f.Uint32(KeyEOS); err == nil && int64(id) < int64(vocab) {
		return []int32{int32(id)}
	}
	return nil
}
