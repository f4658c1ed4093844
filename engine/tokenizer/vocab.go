package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// TokenType is a token's tokenizer.ggml.token_type (llama.cpp's
// llama_token_type).
type TokenType int32

// Token types, numbered as in GGUF files.
const (
	TokenUndefined   TokenType = 0
	TokenNormal      TokenType = 1 // part of the BPE vocabulary, written in the byte alphabet
	TokenUnknown     TokenType = 2
	TokenControl     TokenType = 3 // special token: <|im_start|>, <|endoftext|> ...
	TokenUserDefined TokenType = 4 // added token matched in any text: <think>, <tool_call> ...
	TokenUnused      TokenType = 5 // padding up to the embedding size
	TokenByte        TokenType = 6
)

// NoToken is the id of a special token the vocabulary does not have.
const NoToken int32 = -1

// vocabSpec is what a tokenizer is built from; FromGGUF fills it from a
// GGUF file's metadata.
type vocabSpec struct {
	source       string // file name for messages
	pre          string
	tokens       []string
	types        []TokenType // nil: all normal
	merges       []string    // "left right"
	bos, eos     int32
	pad          int32
	addBOS       *bool
	chatTemplate string
}

// Tokenizer is a byte-level BPE tokenizer. It is immutable after
// construction and safe for concurrent use.
type Tokenizer struct {
	pre          preType
	ignoreMerges bool // llama-bpe: a piece that is a whole token is taken as is

	tokens   []string    // token text as stored in the vocabulary
	types    []TokenType // per token
	pieces   []string    // bytes each token decodes to ("" for unused)
	textToID map[string]int32
	wordToID map[string]int32 // raw bytes -> id, for ignoreMerges
	byteTok  [256]int32       // token of each single byte
	merges   *pairTable
	// bytePairs is merges for the pairs of byte tokens, indexed by
	// byte1<<8 | byte2: a word's first round of lookups, about half of
	// all, hits this dense 512 KiB table instead of the hash table.
	bytePairs *[1 << 16]uint64
	// maxRaw is the longest raw text of a token in the byte alphabet, the
	// only tokens BPE can produce: a word of n bytes gives at least
	// ⌈n/maxRaw⌉ ids, which lets Encode refuse a word over MaxTokens
	// without merging it.
	maxRaw int

	// special lists control, user-defined and unknown tokens, longest text
	// first: the order llama.cpp cuts them out of text.
	special []int32

	bos, eos, pad, eot int32
	addBOS             bool
	eog                map[int32]bool

	chatTemplate string
	chatOnce     sync.Once
	chat         chatRenderer
	chatErr      error

	states sync.Pool // *encState
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// newTokenizer validates spec and builds the lookup tables.
func newTokenizer(spec *vocabSpec) (*Tokenizer, error) {
	pre, ok := parsePre(spec.pre)
	if !ok {
		return nil, fmt.Errorf("%s: tokenizer.ggml.pre %q is not supported (want qwen2, qwen35 or llama-bpe)", spec.source, spec.pre)
	}
	n := len(spec.tokens)
	if n == 0 {
		return nil, fmt.Errorf("%s: tokenizer.ggml.tokens is empty", spec.source)
	}
	if n > 1<<31-1 {
		return nil, fmt.Errorf("%s: %d tokens is too many", spec.source, n)
	}
	if spec.types != nil && len(spec.types) != n {
		return nil, fmt.Errorf("%s: tokenizer.ggml.token_type has %d entries for %d tokens", spec.source, len(spec.types), n)
	}
	t := &Tokenizer{
		pre:      pre,
		tokens:   spec.tokens,
		types:    make([]TokenType, n),
		pieces:   make([]string, n),
		textToID: make(map[string]int32, n),
		wordToID: make(map[string]int32),
		merges:   newPairTable(len(spec.merges)),
		bos:      NoToken, eos: NoToken, pad: NoToken, eot: NoToken,
		eog:          make(map[int32]bool),
		chatTemplate: spec.chatTemplate,
	}
	t.ignoreMerges = pre == preLlama3
	bl := byteLevelTable()
	for i, s := range spec.tokens {
		id := int32(i)
		if s == "" {
			// llama.cpp renames empty tokens so that they cannot match text.
			s = fmt.Sprintf("[EMPTY_%d]", i)
			t.tokens[i] = s
		}
		if prev, dup := t.textToID[s]; dup {
			return nil, fmt.Errorf("%s: duplicate token %q with ids %d and %d", spec.source, s, prev, i)
		}
		t.textToID[s] = id
		typ := TokenNormal
		if spec.types != nil {
			typ = spec.types[i]
		}
		if typ < TokenUndefined || typ > TokenByte {
			// Not a type llama.cpp defines: such a token would decode to
			// nothing, silently.
			return nil, fmt.Errorf("%s: tokenizer.ggml.token_type[%d] = %d (token %q) is not a token type (0 to 6)", spec.source, i, typ, s)
		}
		t.types[i] = typ
		raw, inAlphabet := bl.decode(s)
		switch typ {
		case TokenNormal:
			if inAlphabet {
				t.pieces[i] = raw
			} else {
				t.pieces[i] = s // not byte-level text: shown as is
			}
		case TokenControl, TokenUserDefined, TokenUnknown:
			t.pieces[i] = s
		}
		if inAlphabet {
			t.maxRaw = max(t.maxRaw, len(raw))
			if t.ignoreMerges {
				t.wordToID[raw] = id
			}
		}
	}
	for b := 0; b < 256; b++ {
		id, ok := t.textToID[string(bl.toRune[b])]
		if !ok {
			return nil, fmt.Errorf("%s: the vocabulary has no token for byte 0x%02x (%q)", spec.source, b, string(bl.toRune[b]))
		}
		t.byteTok[b] = id
	}
	for i, m := range spec.merges {
		sp := -1
		if len(m) > 1 {
			if j := strings.IndexByte(m[1:], ' '); j >= 0 {
				sp = j + 1
			}
		}
		if sp < 0 {
			return nil, fmt.Errorf("%s: tokenizer.ggml.merges[%d] = %q has no space", spec.source, i, m)
		}
		left, right := m[:sp], m[sp+1:]
		a, okA := t.textToID[left]
		b, okB := t.textToID[right]
		c, okC := t.textToID[left+right]
		if !okA || !okB || !okC {
			return nil, fmt.Errorf("%s: tokenizer.ggml.merges[%d] = %q names a token that is not in the vocabulary", spec.source, i, m)
		}
		t.merges.insert(pairKey(a, b), uint64(i)<<32|uint64(uint32(c))) // a repeated pair keeps its first rank, as in llama.cpp
	}
	t.bytePairs = new([1 << 16]uint64)
	for i := range t.bytePairs {
		t.bytePairs[i] = t.pairValue(t.byteTok[i>>8], t.byteTok[i&0xFF])
	}
	for i, typ := range t.types {
		if typ == TokenControl || typ == TokenUserDefined || typ == TokenUnknown {
			t.special = append(t.special, int32(i))
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(t.tokens[t.special[a]]) > len(t.tokens[t.special[b]])
	})
	inRange := func(id int32) bool { return id >= 0 && int(id) < n }
	for _, p := range []struct {
		dst  *int32
		id   int32
		name string
	}{{&t.bos, spec.bos, "bos"}, {&t.eos, spec.eos, "eos"}, {&t.pad, spec.pad, "padding"}} {
		if p.id == NoToken {
			continue
		}
		if !inRange(p.id) {
			return nil, fmt.Errorf("%s: tokenizer.ggml.%s_token_id = %d is outside the vocabulary of %d", spec.source, p.name, p.id, n)
		}
		*p.dst = p.id
	}
	t.addBOS = pre == preLlama3 // llama.cpp's default for llama-bpe
	if spec.addBOS != nil {
		t.addBOS = *spec.addBOS
	}
	switch {
	case !t.addBOS || t.bos != NoToken:
	case spec.addBOS == nil:
		return nil, fmt.Errorf("%s: tokenizer.ggml.pre %q adds BOS when tokenizer.ggml.add_bos_token is absent, but tokenizer.ggml.bos_token_id is not set", spec.source, spec.pre)
	default:
		return nil, fmt.Errorf("%s: tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is not set", spec.source)
	}
	t.findEOG()
	return t, nil
}

// eogTexts are the token texts llama.cpp treats as end of generation.
var eogTexts = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
	"<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
}

// eotTexts are the texts llama.cpp takes as the end-of-turn token (when a
// vocabulary has several, llama.cpp's pick depends on hash order; we take the
// first listed here).
var eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "<end_of_utterance>"}

// fimEOGTexts are the fill-in-the-middle pad/repo/file-separator tokens,
// which llama.cpp also adds to the end-of-generation set.
var fimEOGTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>"}

// findEOG builds the end-of-generation set the way llama.cpp does: by token
// text, plus the EOS token.
func (t *Tokenizer) findEOG() {
	for _, s := range eotTexts {
		if id, ok := t.textToID[s]; ok {
			t.eot = id
			break
		}
	}
	for _, list := range [][]string{eogTexts, fimEOGTexts} {
		for _, s := range list {
			if id, ok := t.textToID[s]; ok {
				t.eog[id] = true
			}
		}
	}
	if t.eos != NoToken {
		t.eog[t.eos] = true
	}
	if t.eot != NoToken {
		t.eog[t.eot] = true
	}
}

// Vocab returns the number of tokens (the embedding rows the ids index).
func (t *Tokenizer) Vocab() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence token id, or NoToken.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence token id, or NoToken.
func (t *Tokenizer) EOS() int32 { return t.eos }

// PAD returns the padding token id, or NoToken.
func (t *Tokenizer) PAD() int32 { return t.pad }

// EOT returns the end-of-turn token id (<|im_end|> for Qwen), or NoToken.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode adds BOS by default:
// tokenizer.ggml.add_bos_token, or when the file lacks it, true for
// llama-bpe and false otherwise, as llama.cpp has it.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// IsEOG reports whether generation stops at id: EOS, end of turn, and the
// other end tokens llama.cpp recognises by text.
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// EOGs returns the end-of-generation ids in increasing order.
func (t *Tokenizer) EOGs() []int32 {
	ids := make([]int32, 0, len(t.eog))
	for id := range t.eog {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return ids
}

// TokenText returns the token's text as the vocabulary stores it (byte
// alphabet for normal tokens, e.g. "Ġthe"), or "" for an id out of range.
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenPiece returns the bytes the token decodes to ("" for unused tokens
// and ids out of range).
func (t *Tokenizer) TokenPiece(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// TokenType returns the token's type (TokenUndefined for ids out of range).
func (t *Tokenizer) TokenType(id int32) TokenType {
	if id < 0 || int(id) >= len(t.types) {
		return TokenUndefined
	}
	return t.types[id]
}

// TokenID returns the id of the token whose stored text is s.
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	id, ok := t.textToID[s]
	return id, ok
}

// Pre returns the pre-tokenizer name in use ("qwen2", "qwen35", "llama-bpe").
func (t *Tokenizer) Pre() string { return t.pre.String() }
