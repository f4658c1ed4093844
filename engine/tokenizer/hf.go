package tokenizer

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// HFOptions are the facts a Hugging Face conversion takes from outside
// tokenizer.json / tokenizer_config.json (from config.json and from
// llama.cpp's pre-tokenizer detection).
type HFOptions struct {
	// Pre is tokenizer.ggml.pre: "qwen2" for Qwen2/Qwen3, "qwen35" for
	// Qwen3.5, "llama-bpe" for Llama 3.
	Pre string
	// VocabSize is config.json's vocab_size (the embedding rows): ids the
	// tokenizer does not use are filled with UNUSED "[PAD<id>]" tokens, as
	// llama.cpp's converter does. 0: no padding.
	VocabSize int
	// BOS is config.json's bos_token_id, used when tokenizer_config.json
	// names no bos_token (Qwen); NoToken for none.
	BOS int32
}

// HFVocab is a tokenizer converted from Hugging Face files by llama.cpp's
// rules (convert_hf_to_gguf.py get_vocab_base + gguf-py SpecialVocab): the
// values of the GGUF tokenizer.* keys.
type HFVocab struct {
	Pre          string
	Tokens       []string
	Types        []TokenType
	Merges       []string // "left right"
	BOS          int32    // NoToken when absent
	EOS          int32
	PAD          int32
	AddBOS       *bool // tokenizer_config.json add_bos_token, when it is a bool
	ChatTemplate string
}

type hfAddedToken struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	Special    bool   `json:"special"`
	Normalized bool   `json:"normalized"`
}

type hfTokenizerJSON struct {
	AddedTokens []hfAddedToken `json:"added_tokens"`
	Model       struct {
		Type   string           `json:"type"`
		Vocab  map[string]int32 `json:"vocab"`
		Merges json.RawMessage  `json:"merges"`
	} `json:"model"`
}

// ConvertHF converts tokenizer.json and tokenizer_config.json (its chat
// template, special tokens and add_bos_token) to GGUF tokenizer values.
func ConvertHF(tokenizerJSON, tokenizerConfigJSON []byte, opt HFOptions) (*HFVocab, error) {
	var tj hfTokenizerJSON
	if err := json.Unmarshal(tokenizerJSON, &tj); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: model.type is %q, want BPE", tj.Model.Type)
	}
	var cfg map[string]json.RawMessage
	if len(tokenizerConfigJSON) > 0 {
		if err := json.Unmarshal(tokenizerConfigJSON, &cfg); err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: %w", err)
		}
	}
	byID := map[int32]string{}
	maxID := int32(-1)
	for s, id := range tj.Model.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("tokenizer.json: token %q has negative id %d", s, id)
		}
		byID[id] = s
		maxID = max(maxID, id)
	}
	added := map[int32]hfAddedToken{}
	for _, a := range tj.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("tokenizer.json: added token %q has negative id %d", a.Content, a.ID)
		}
		added[a.ID] = a
		byID[a.ID] = a.Content
		maxID = max(maxID, a.ID)
	}
	n := int(maxID) + 1
	if opt.VocabSize > 0 {
		if opt.VocabSize < n {
			return nil, fmt.Errorf("vocab_size %d is smaller than the tokenizer's %d ids", opt.VocabSize, n)
		}
		n = opt.VocabSize
	}
	v := &HFVocab{Pre: opt.Pre, Tokens: make([]string, n), Types: make([]TokenType, n), BOS: NoToken, EOS: NoToken, PAD: NoToken}
	for i := 0; i < n; i++ {
		id := int32(i)
		s, ok := byID[id]
		switch a, isAdded := added[id]; {
		case !ok:
			v.Tokens[i], v.Types[i] = fmt.Sprintf("[PAD%d]", i), TokenUnused
		case isAdded:
			if a.Special || LooksSpecial(s) {
				v.Types[i] = TokenControl
			} else {
				s = strings.ReplaceAll(s, "\u2581", " ")
				v.Types[i] = TokenUserDefined
			}
			v.Tokens[i] = s
		default:
			v.Tokens[i], v.Types[i] = s, TokenNormal
		}
	}
	merges, err := parseHFMerges(tj.Model.Merges)
	if err != nil {
		return nil, err
	}
	v.Merges = merges
	// Special tokens: tokenizer_config.json's *_token names, looked up among
	// the added tokens; BOS falls back to config.json's id.
	lookup := func(key string) (int32, error) {
		raw, ok := cfg[key]
		if !ok {
			return NoToken, nil
		}
		var name string
		var obj struct {
			Content string `json:"content"`
		}
		switch {
		case string(raw) == "null":
			return NoToken, nil
		case json.Unmarshal(raw, &name) == nil:
		case json.Unmarshal(raw, &obj) == nil:
			name = obj.Content
		default:
			return NoToken, fmt.Errorf("tokenizer_config.json: %s is not a string or token object", key)
		}
		for _, a := range tj.AddedTokens {
			if a.Content == name {
				return a.ID, nil
			}
		}
		if id, ok := tj.Model.Vocab[name]; ok {
			return id, nil
		}
		return NoToken, fmt.Errorf("tokenizer_config.json: %s %q is not a token", key, name)
	}
	for _, p := range []struct {
		key string
		dst *int32
	}{{"bos_token", &v.BOS}, {"eos_token", &v.EOS}, {"pad_token", &v.PAD}} {
		id, err := lookup(p.key)
		if err != nil {
			return nil, err
		}
		*p.dst = id
	}
	if v.BOS == NoToken {
		v.BOS = opt.BOS
	}
	if raw, ok := cfg["add_bos_token"]; ok {
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			v.AddBOS = &b
		}
	}
	if raw, ok := cfg["chat_template"]; ok {
		ct, err := parseChatTemplate(raw)
		if err != nil {
			return nil, err
		}
		v.ChatTemplate = ct
	}
	return v, nil
}

// LooksSpecial is llama.cpp's converter rule for added tokens that are not
// marked special but are control tokens by their spelling.
func LooksSpecial(s string) bool {
	switch s {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return (strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>")) ||
		(strings.HasPrefix(s, "<\uff5c") && strings.HasSuffix(s, "\uff5c>")) ||
		(strings.HasPrefix(s, "<unused") && strings.HasSuffix(s, ">"))
}

// parseHFMerges reads model.merges in either format: ["a b", ...] or
// [["a","b"], ...]; pairs are joined by a space, with a space inside a part
// written as U+0120 as gguf-py does.
func parseHFMerges(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("tokenizer.json: model.merges is missing")
	}
	var flat []string
	if err := json.Unmarshal(raw, &flat); err == nil {
		return flat, nil
	}
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("tokenizer.json: model.merges: %w", err)
	}
	out := make([]string, len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("tokenizer.json: model.merges[%d] has %d parts, want 2", i, len(p))
		}
		out[i] = strings.ReplaceAll(p[0], " ", "\u0120") + " " + strings.ReplaceAll(p[1], " ", "\u0120")
	}
	return out, nil
}

// parseChatTemplate reads chat_template: a string, or a list of named
// templates of which "default" is taken.
func parseChatTemplate(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("tokenizer_config.json: chat_template: %w", err)
	}
	sort.SliceStable(named, func(a, b int) bool { return named[a].Name == "default" && named[b].Name != "default" })
	if len(named) == 0 {
		return "", nil
	}
	return named[0].Template, nil
}

// FromHFJSON builds a tokenizer from Hugging Face files, converted exactly
// as a GGUF file made by llama.cpp's converter would hold them.
func FromHFJSON(tokenizerJSON, tokenizerConfigJSON []byte, opt HFOptions) (*Tokenizer, error) {
	v, err := ConvertHF(tokenizerJSON, tokenizerConfigJSON, opt)
	if err != nil {
		return nil, err
	}
	return v.Tokenizer()
}

// Tokenizer builds the tokenizer these values describe.
func (v *HFVocab) Tokenizer() (*Tokenizer, error) {
	return newTokenizer(&vocabSpec{
		source: "tokenizer.json", pre: v.Pre,
		tokens: append([]string(nil), v.Tokens...), types: v.Types, merges: v.Merges,
		bos: v.BOS, eos: v.EOS, pad: v.PAD, addBOS: v.AddBOS, chatTemplate: v.ChatTemplate,
	})
}
