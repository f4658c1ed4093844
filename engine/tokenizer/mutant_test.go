package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// loadVocab builds a tokenizer from fuzzVocabGGUF's metadata.
func loadVocab(t *testing.T, tokens, merges string, types []byte, flags uint8, bos, eos uint32) (*Tokenizer, error) {
	t.Helper()
	img, _, err := fuzzVocabGGUF(tokens, merges, types, flags, bos, eos)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse(img)
	if err != nil {
		t.Fatal(err)
	}
	return FromGGUF(g)
}

// byteTokens is the byte alphabet's 256 tokens in byte order, "\n"-joined
// for fuzzVocabGGUF.
func byteTokens() string {
	bl := byteLevelTable()
	var b strings.Builder
	for c := range 256 {
		if c > 0 {
			b.WriteByte('\n')
		}
		b.WriteRune(bl.toRune[c])
	}
	return b.String()
}

// typesWith is 256 + len(extra) token types for fuzzVocabGGUF: the 256
// byte tokens normal, then extra.
func typesWith(extra ...TokenType) []byte {
	out := make([]byte, 256, 256+len(extra))
	for i := range out {
		out[i] = byte(TokenNormal)
	}
	for _, x := range extra {
		out = append(out, byte(x))
	}
	return out
}

// TestSpecialIDOne: token 1 is an ordinary id (Llama 2's and many other
// vocabularies' <s>), not "no token": with <unk> <s> </s> as ids 0 1 2
// (unknown, control, control) and then the 256 byte tokens, BOS 1 is added
// and parsed, EOS 2 ends generation, and the other way round.
func TestSpecialIDOne(t *testing.T) {
	const flags = fuzzTypes | fuzzBOS | fuzzEOS | fuzzAddBOS | fuzzAddBOSValue
	for _, c := range []struct{ bos, eos int32 }{{1, 2}, {2, 1}} {
		tok, err := loadVocab(t, "<unk>\n<s>\n</s>\n"+byteTokens(), "", []byte{2, 3, 3}, flags, uint32(c.bos), uint32(c.eos))
		if err != nil {
			t.Fatalf("bos %d eos %d: %v", c.bos, c.eos, err)
		}
		h, i := int32(3+'h'), int32(3+'i')
		sText := [3]string{"<unk>", "<s>", "</s>"}
		text := sText[c.bos] + "hi" + sText[c.eos]
		got, err := tok.Encode(text, EncodeOptions{ParseSpecial: true})
		if want := []int32{c.bos, c.bos, h, i, c.eos}; err != nil || !slices.Equal(got, want) {
			t.Errorf("bos %d eos %d: Encode(%q) = %v (%v), want %v", c.bos, c.eos, text, got, err, want)
		}
		if tok.BOS() != c.bos || tok.EOS() != c.eos || !tok.IsEOG(c.eos) || !slices.Equal(tok.EOGs(), []int32{c.eos}) {
			t.Errorf("bos %d eos %d: BOS %d EOS %d EOGs %v", c.bos, c.eos, tok.BOS(), tok.EOS(), tok.EOGs())
		}
	}
	if NoToken >= 0 {
		t.Errorf("NoToken = %d is a token id", NoToken)
	}
}

// TestTokenTypeRange: llama.cpp's token types are 0 (undefined) to 6
// (byte); a vocabulary using either end loads, one step past either is
// refused with the index, the type and the token.
func TestTokenTypeRange(t *testing.T) {
	for _, typ := range []TokenType{TokenUndefined, TokenByte} {
		tok, err := loadVocab(t, byteTokens()+"\nab", "", typesWith(typ), fuzzTypes, 0, 0)
		if err != nil {
			t.Errorf("type %d: %v", typ, err)
			continue
		}
		if got := tok.TokenType(256); got != typ {
			t.Errorf("type %d read back as %d", typ, got)
		}
	}
	for _, typ := range []TokenType{-1, 7} {
		_, err := loadVocab(t, byteTokens()+"\nab", "", typesWith(typ), fuzzTypes, 0, 0)
		want := fmt.Sprintf(`token_type[256] = %d (token "ab")`, typ)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("type %d: err %v, want it to mention %s", typ, err, want)
		}
	}
}

// TestBadMerges: a merge that is not "left right" of three tokens in the
// vocabulary is refused, naming the merge: without a space (however
// short), or with a missing left or right half when their concatenation is
// a token.
func TestBadMerges(t *testing.T) {
	for _, c := range []struct{ merge, want string }{
		{"ab", `merges[0] = "ab" has no space`},
		{"a", `merges[0] = "a" has no space`},
		{" ", `merges[0] = " " has no space`},
		{"zz b", `merges[0] = "zz b" names a token that is not in the vocabulary`},
		{"b zz", `merges[0] = "b zz" names a token that is not in the vocabulary`},
	} {
		_, err := loadVocab(t, byteTokens()+"\nzzb\nbzz", c.merge, nil, 0, 0, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merge %q: err %v, want it to mention %s", c.merge, err, c.want)
		}
	}
}

// TestSpecialLongestFirst: special tokens are cut out of text longest
// first (llama.cpp's order), whatever their order in the vocabulary:
// user-defined "xy" (id 256) and "xyz" (id 257) on "axyzb" give a, xyz, b.
func TestSpecialLongestFirst(t *testing.T) {
	tok, err := loadVocab(t, byteTokens()+"\nxy\nxyz", "", typesWith(TokenUserDefined, TokenUserDefined), fuzzTypes, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.Encode("axyzb", EncodeOptions{})
	if want := []int32{'a', 257, 'b'}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Encode(axyzb) = %v (%v), want %v", got, err, want)
	}
}

// TestTokenAccessorsAtEnds: the first and last ids are tokens, one past
// either end is nothing: ids named by tokenizer.json, not by the code.
func TestTokenAccessorsAtEnds(t *testing.T) {
	tok := loadQwen3(t)
	if id := ids(t, "!")[0]; id != 0 {
		t.Fatalf(`tokenizer.json has "!" at %d, want 0`, id)
	}
	if tok.TokenText(0) != "!" || tok.TokenPiece(0) != "!" || tok.TokenType(0) != TokenNormal {
		t.Errorf("id 0: %q %q %d", tok.TokenText(0), tok.TokenPiece(0), tok.TokenType(0))
	}
	end := ids(t, "<|im_end|>")[0]
	if tok.TokenText(end) != "<|im_end|>" || tok.TokenPiece(end) != "<|im_end|>" || tok.TokenType(end) != TokenControl {
		t.Errorf("<|im_end|> (%d): %q %q %d", end, tok.TokenText(end), tok.TokenPiece(end), tok.TokenType(end))
	}
	last := int32(tok.Vocab() - 1) // Qwen3's padding rows end at 151935
	if tok.TokenText(last) != "[PAD151935]" || tok.TokenPiece(last) != "" || tok.TokenType(last) != TokenUnused {
		t.Errorf("id %d: %q %q %d", last, tok.TokenText(last), tok.TokenPiece(last), tok.TokenType(last))
	}
	for _, id := range []int32{-1, int32(tok.Vocab()), 1 << 30} {
		if tok.TokenText(id) != "" || tok.TokenPiece(id) != "" || tok.TokenType(id) != TokenUndefined {
			t.Errorf("id %d: %q %q %d, want nothing", id, tok.TokenText(id), tok.TokenPiece(id), tok.TokenType(id))
		}
	}
}
