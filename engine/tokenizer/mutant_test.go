package tokenizer

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// TestIgnoreMergesTakesWholeWords: llama-bpe (llama3) takes a pre-token
// that is a token as that token, whether or not the merges reach it, and
// merges any other; qwen2 always merges. The vocabulary is the 256 byte
// tokens, "abc" and "ab" with the one merge "a b": "abc" is a token no
// merge builds.
func TestIgnoreMergesTakesWholeWords(t *testing.T) {
	load := func(flags uint8) *Tokenizer {
		t.Helper()
		img, _, err := fuzzVocabGGUF("abc\nab", "a b", nil, flags, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Parse(img)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := FromGGUF(g)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	const abc, ab = 256, 257 // after the 256 byte tokens
	// flags: byte tokens, pre = flags>>1&3 (0 qwen2, 2 llama-bpe), a BOS
	// (llama-bpe adds one by default) that Encode is told to leave out.
	llama := load(fuzzByteTokens | 2<<1 | fuzzBOS)
	qwen := load(fuzzByteTokens | 0<<1)
	b := func(tok *Tokenizer, c byte) int32 { return tok.byteTok[c] }
	for _, c := range []struct {
		tok  *Tokenizer
		in   string
		want []int32
	}{
		{llama, "abc", []int32{abc}},
		{llama, "abd", []int32{ab, b(llama, 'd')}},
		{llama, "xabc", []int32{b(llama, 'x'), ab, b(llama, 'c')}},
		{qwen, "abc", []int32{ab, b(qwen, 'c')}},
	} {
		got, err := c.tok.Encode(c.in, EncodeOptions{AddBOS: BOSNever})
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ignore merges %v, %q: %v (%v), want %v", c.tok.ignoreMerges, c.in, got, err, c.want)
		}
	}
}

// TestStreamHoldsEveryLeadByte: a character fed a byte at a time (byte-level
// BPE's fallback tokens) is held until complete for every lead byte range,
// the ends included: C2/DF (two bytes), E0/EF (three), F0/F4 (four); an id
// one past the vocabulary is "" and an error, not an index out of range.
func TestStreamHoldsEveryLeadByte(t *testing.T) {
	tok := loadQwen3(t)
	for _, r := range []rune{'\u0080', '\u07ff', '\u0800', '\uffff', '\U00010000', '\U0010ffff'} {
		s := tok.NewStream()
		var got []string
		for _, c := range []byte(string(r)) {
			got = append(got, s.Next(tok.byteTok[c]))
		}
		want := make([]string, len(got))
		want[len(want)-1] = string(r)
		if !slices.Equal(got, want) || s.Flush() != "" {
			t.Errorf("U+%04X byte-wise: %q, want %q", r, got, want)
		}
	}
	s := tok.NewStream()
	n := int32(tok.Vocab())
	if out := s.Next(n); out != "" || s.Err() == nil {
		t.Errorf("Next(%d), one past the vocabulary: %q, err %v", n, out, s.Err())
	}
}

// TestMergeHeapQuotes: mergeHeap marks a merged-away symbol -1 so that the
// stale candidates starting there are skipped; '"' is token 1 in Qwen3's
// vocabulary (after '!'), so words of quotes and punctuation, which merge
// with '"' on either side, check that no real id stands in for the mark.
func TestMergeHeapQuotes(t *testing.T) {
	tok := loadQwen3(t)
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"\"", "\"", "!", ".", ",", ")", "(", ":", "a", " ", "\n"}
	st := newEncState()
	for range 3000 {
		mergesAgree(t, tok, st, randomWord(rng, alphabet, 60))
	}
}
