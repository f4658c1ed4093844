package tokenizer

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// BOSMode says whether Encode puts the BOS token first.
type BOSMode uint8

const (
	BOSFromVocab BOSMode = iota // as Tokenizer.AddBOS says (false for Qwen)
	BOSAlways
	BOSNever
)

// EncodeOptions are Encode's switches; the zero value is llama.cpp's
// llama_tokenize(text, add_special=true, parse_special=false).
type EncodeOptions struct {
	// ParseSpecial makes control tokens written in the text (<|im_start|>,
	// <|im_end|>, <|endoftext|> ...) encode as themselves. Without it they are
	// plain text. User-defined tokens (<think>, <tool_call> ...) are matched
	// either way, as llama.cpp and Hugging Face do. Text that merely looks
	// like a special token (<|nope|>) is always plain text.
	ParseSpecial bool
	// AddBOS overrides the vocabulary's add_bos_token.
	AddBOS BOSMode
	// NFC normalises each text fragment to Unicode NFC before splitting, as
	// Hugging Face's tokenizer.json for Qwen does (llama.cpp does not).
	NFC bool
	// MaxTokens, when > 0, is the most tokens the result may have (e.g. the
	// context length); a longer input fails with an error wrapping
	// ErrTooLong. Merging stops once the limit is passed, so a huge input
	// costs BPE work for about MaxTokens tokens (plus linear passes over
	// the text to find special tokens and fix invalid UTF-8).
	MaxTokens int
}

// ErrTooLong is wrapped by Encode's error when the result would exceed
// EncodeOptions.MaxTokens.
var ErrTooLong = errors.New("tokenizer: input longer than the token limit")

// encState is the scratch of one Encode call, pooled per Tokenizer so that
// encoding allocates little and keeps a per-state cache of merged words.
type encState struct {
	syms  []int32
	ranks []uint64 // merge value of each adjacent pair (mergeSmall)
	heap  bpeHeap
	next  []int32
	prev  []int32
	cache *wordCache
	pairs *[1 << pairCacheBits]pairSlot
}

// uncachedWord is the longest word merged without the cache: for such short
// words the few pair lookups cost less than a cache lookup and insert.
const uncachedWord = 3

func (t *Tokenizer) getState() *encState {
	if s, ok := t.states.Get().(*encState); ok {
		return s
	}
	return newEncState()
}

func newEncState() *encState {
	return &encState{cache: newWordCache(), pairs: new([1 << pairCacheBits]pairSlot)}
}

// Encode turns text into token ids.
func (t *Tokenizer) Encode(text string, opt EncodeOptions) ([]int32, error) {
	st := t.getState()
	defer t.states.Put(st)
	return t.encodeWith(st, text, opt)
}

// encodeWith is Encode with the scratch state given.
func (t *Tokenizer) encodeWith(st *encState, text string, opt EncodeOptions) ([]int32, error) {
	size := len(text)/3 + 2 // ~3+ bytes per token for most text
	if opt.MaxTokens > 0 && opt.MaxTokens < size {
		size = opt.MaxTokens + 1 // not a huge text's worth for a small limit
	}
	out := make([]int32, 0, size)
	addBOS := t.addBOS
	switch opt.AddBOS {
	case BOSAlways:
		addBOS = true
	case BOSNever:
		addBOS = false
	}
	if addBOS {
		if t.bos == NoToken {
			return nil, errors.New("tokenizer: AddBOS asked but the vocabulary has no BOS token")
		}
		out = append(out, t.bos)
	}
	for _, fr := range t.partition(text, opt.ParseSpecial) {
		over := false
		if fr.id != NoToken {
			out = append(out, fr.id)
		} else {
			out, over = t.encodeText(st, text[fr.start:fr.end], opt.NFC, opt.MaxTokens, out)
		}
		if over || opt.MaxTokens > 0 && len(out) > opt.MaxTokens {
			return nil, fmt.Errorf("%w: more than %d tokens (MaxTokens) from %d bytes of text", ErrTooLong, opt.MaxTokens, len(text))
		}
	}
	return out, nil
}

// fragment is a piece of the input: text[start:end], or the token id when
// a special token was cut out there.
type fragment struct {
	start, end int
	id         int32
}

// partition cuts special tokens out of text as llama.cpp's
// tokenizer_st_partition does: each special token in turn, longest first,
// splits every text fragment at all its occurrences. Control and unknown
// tokens take part only when parseSpecial is set; user-defined ones always.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{0, len(text), NoToken}}
	var next []fragment
	for _, id := range t.special {
		typ := t.types[id]
		if !parseSpecial && typ != TokenUserDefined {
			continue
		}
		tok := t.tokens[id]
		if !strings.Contains(text, tok) {
			continue
		}
		next = next[:0]
		for _, fr := range frags {
			if fr.id != NoToken {
				next = append(next, fr)
				continue
			}
			start := fr.start
			for start < fr.end {
				i := strings.Index(text[start:fr.end], tok)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{start, start + i, NoToken})
				}
				next = append(next, fragment{start + i, start + i + len(tok), id})
				start += i + len(tok)
			}
			if start < fr.end {
				next = append(next, fragment{start, fr.end, NoToken})
			}
		}
		frags, next = next, frags
	}
	return frags
}

// validUTF8 returns s with every byte that is not part of a well-formed
// UTF-8 sequence replaced by U+FFFD, one per byte, as llama.cpp reads text.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	buf := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			buf = append(buf, "\uFFFD"...)
		} else {
			buf = append(buf, s[i:i+w]...)
		}
		i += w
	}
	return string(buf)
}

// encodeText pre-tokenizes one text fragment and BPE-encodes each piece.
// With limit > 0 it stops once out holds more than limit ids, so that an
// input far over EncodeOptions.MaxTokens costs what the limit does, not
// what the whole text would; over reports a piece left unmerged because
// its ids could not fit (a single piece, a run of letters or spaces, can
// be the whole text, and merging megabytes takes seconds and gigabytes).
func (t *Tokenizer) encodeText(st *encState, s string, useNFC bool, limit int, out []int32) (_ []int32, over bool) {
	s = validUTF8(s)
	if useNFC {
		s = nfc(s)
	}
	sc := scanner{s: s, tab: classTable()}
	for i := 0; i < len(s); {
		end := t.pre.pieceEnd(&sc, i)
		if limit > 0 && (end-i+t.maxRaw-1)/t.maxRaw > limit-len(out) {
			return out, true
		}
		out = t.encodeWord(st, s[i:end], out)
		if limit > 0 && len(out) > limit {
			break
		}
		i = end
	}
	return out, false
}

// encodeWord BPE-encodes one pre-token (raw bytes) and appends its ids.
func (t *Tokenizer) encodeWord(st *encState, w string, out []int32) []int32 {
	if len(w) == 1 {
		return append(out, t.byteTok[w[0]])
	}
	if t.ignoreMerges {
		if id, ok := t.wordToID[w]; ok {
			return append(out, id)
		}
	}
	if len(w) <= uncachedWord {
		return appendIDs(out, t.mergeSmall(st, w))
	}
	cached, h, ok := st.cache.get(w)
	if ok {
		return appendIDs(out, cached)
	}
	var ids []int32
	if len(w) <= smallWord {
		ids = t.mergeSmall(st, w)
	} else {
		ids = t.mergeHeap(st, w)
	}
	st.cache.put(w, h, ids)
	return appendIDs(out, ids)
}

// appendIDs is append(out, ids...) without a memmove call for one id, the
// most common case.
func appendIDs(out, ids []int32) []int32 {
	if len(ids) == 1 {
		return append(out, ids[0])
	}
	return append(out, ids...)
}
