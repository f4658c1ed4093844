package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memra-ai/memra/gguf"
)

// pieces splits s with the pre-tokenizer p and returns the pieces' text.
func pieces(p preType, s string) []string {
	sc := scanner{s: s, tab: classTable()}
	var out []string
	for i := 0; i < len(s); {
		end := p.pieceEnd(&sc, i)
		out = append(out, s[i:end])
		i = end
	}
	return out
}

// The expected pieces below are worked out by hand from the patterns'
// regex semantics (ordered alternation, greedy, backtracking).
func TestSplitQwen2(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{"I've 12 don't", []string{"I", "'ve", " ", "1", "2", " don", "'t"}},
		{"WE'VE 'LL", []string{"WE", "'VE", " '", "LL"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a   ", []string{"a", "   "}},
		{"x\n\n  y", []string{"x", "\n\n", " ", " y"}},
		{"x \n y", []string{"x", " \n", " y"}},
		{"foo.\r\n\r\nbar", []string{"foo", ".\r\n\r\n", "bar"}},
		{" ...x", []string{" ...", "x"}},
		{"-abc", []string{"-abc"}},
		{"\nabc", []string{"\n", "abc"}},
		{"你好，世界", []string{"你好", "，世界"}}, // "，" is [^\r\n\p{L}\p{N}] before letters
		{"3.14", []string{"3", ".", "1", "4"}},
		{"\u00a0x", []string{"\u00a0x"}},
		{"e\u0301s", []string{"e", "\u0301s"}},
		{"नमस्ते", []string{"नमस", "्त", "े"}}, // virama (Mn) prefixes त; े (Mc) alone
		{"'", []string{"'"}},
		{"  \t", []string{"  \t"}},
		{"x \u0378.", []string{"x", " \u0378."}}, // unassigned joins the punctuation run (regex semantics)
		{"'\u017ft", []string{"'\u017ft"}},       // llama.cpp's '[sS]: ſ is no contraction (HF's (?i) folds it: "'ſ", "t")
	}
	for _, c := range cases {
		if got := pieces(preQwen2, c.in); !slices.Equal(got, c.want) {
			t.Errorf("qwen2 %q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSplitQwen35(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"नमस्ते दुनिया", []string{"नमस्ते", " दुनिया"}},
		{"e\u0301s", []string{"e\u0301s"}},
		{"\u0301 x", []string{"\u0301", " x"}},
		{".\u0301", []string{".\u0301"}}, // prefix char + [\p{L}\p{M}]+
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{"12", []string{"1", "2"}},
	}
	for _, c := range cases {
		if got := pieces(preQwen35, c.in); !slices.Equal(got, c.want) {
			t.Errorf("qwen35 %q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSplitLlama3(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"1234567", []string{"123", "456", "7"}},
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{"x \u0378.", []string{"x", " ", "\u0378", "."}}, // unassigned: a piece of its own
		{"a  b\n", []string{"a", " ", " b", "\n"}},
		{"a...b", []string{"a", "...", "b"}},       // a punctuation run is one piece
		{"x\U00010000y", []string{"x\U00010000y"}}, // U+10000, the first code point past the BMP, is a letter
	}
	for _, c := range cases {
		if got := pieces(preLlama3, c.in); !slices.Equal(got, c.want) {
			t.Errorf("llama3 %q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEncodeKnownIDs(t *testing.T) {
	tok := loadQwen3(t)
	cases := []struct {
		in   string
		opt  EncodeOptions
		want []string // token texts in tokenizer.json
	}{
		{"Hello world", EncodeOptions{}, []string{"Hello", "Ġworld"}},
		{"<think>x</think>", EncodeOptions{}, []string{"<think>", "x", "</think>"}}, // user-defined: always
		{"<|im_start|>user", EncodeOptions{ParseSpecial: true}, []string{"<|im_start|>", "user"}},
		{"12", EncodeOptions{}, []string{"1", "2"}},
	}
	for _, c := range cases {
		got, err := tok.Encode(c.in, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if want := ids(t, c.want...); !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v %q", c.in, got, want, c.want)
		}
	}
}

func TestSpecialTokens(t *testing.T) {
	tok := loadQwen3(t)
	imStart := ids(t, "<|im_start|>")[0]
	// Without ParseSpecial control tokens are text.
	plain, _ := tok.Encode("<|im_start|>", EncodeOptions{})
	if slices.Contains(plain, imStart) || len(plain) < 2 {
		t.Errorf("plain <|im_start|> = %v, want text tokens", plain)
	}
	// Unknown special-looking text is always plain text, and decodes back.
	for _, special := range []bool{false, true} {
		got, _ := tok.Encode("<|nope|>", EncodeOptions{ParseSpecial: special})
		for _, id := range got {
			if tok.TokenType(id) != TokenNormal {
				t.Errorf("<|nope|> special=%v gave non-normal token %d %q", special, id, tok.TokenText(id))
			}
		}
		if d, _ := tok.Decode(got); d != "<|nope|>" {
			t.Errorf("decode = %q", d)
		}
	}
	// Types as llama.cpp's converter sets them.
	for text, want := range map[string]TokenType{
		"<|im_start|>": TokenControl, "<|endoftext|>": TokenControl, "<|fim_prefix|>": TokenControl,
		"<think>": TokenUserDefined, "<tool_call>": TokenUserDefined, "Ġworld": TokenNormal,
	} {
		if got := tok.TokenType(ids(t, text)[0]); got != want {
			t.Errorf("type of %q = %d, want %d", text, got, want)
		}
	}
	if got := tok.TokenType(151935); got != TokenUnused || tok.TokenText(151935) != "[PAD151935]" {
		t.Errorf("padding token 151935: %d %q", got, tok.TokenText(151935))
	}
	if tok.Vocab() != 151936 {
		t.Errorf("Vocab() = %d, want 151936 (Qwen3 embedding rows)", tok.Vocab())
	}
	if tok.EOS() != ids(t, "<|im_end|>")[0] || tok.BOS() != ids(t, "<|endoftext|>")[0] || tok.PAD() != ids(t, "<|endoftext|>")[0] {
		t.Errorf("EOS/BOS/PAD = %d/%d/%d", tok.EOS(), tok.BOS(), tok.PAD())
	}
	wantEOG := ids(t, "<|endoftext|>", "<|im_end|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>")
	slices.Sort(wantEOG)
	if got := tok.EOGs(); !slices.Equal(got, wantEOG) {
		t.Errorf("EOGs = %v, want %v", got, wantEOG)
	}
	if tok.IsEOG(ids(t, "<|im_start|>")[0]) || !tok.IsEOG(tok.EOS()) {
		t.Error("IsEOG wrong")
	}
}

func TestBOS(t *testing.T) {
	tok := loadQwen3(t)
	if tok.AddBOS() {
		t.Fatal("Qwen3 has add_bos_token = false")
	}
	def, _ := tok.Encode("hi", EncodeOptions{})
	with, _ := tok.Encode("hi", EncodeOptions{AddBOS: BOSAlways})
	if len(with) != len(def)+1 || with[0] != tok.BOS() || !slices.Equal(with[1:], def) {
		t.Errorf("BOSAlways: %v vs %v", with, def)
	}
	if empty, _ := tok.Encode("", EncodeOptions{}); len(empty) != 0 {
		t.Errorf("empty text gave %v", empty)
	}
}

func TestInvalidUTF8(t *testing.T) {
	tok := loadQwen3(t)
	for _, c := range []struct{ in, same string }{
		{"a\xffb", "a\uFFFDb"},
		{"\xe4\xbd", "\uFFFD\uFFFD"},     // truncated 3-byte sequence: one per byte
		{"x\x80\x80y", "x\uFFFD\uFFFDy"}, // stray continuation bytes
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
	} {
		got, err := tok.Encode(c.in, EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := tok.Encode(c.same, EncodeOptions{})
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want as %q: %v", c.in, got, c.same, want)
		}
		if d, _ := tok.Decode(got); d != c.same {
			t.Errorf("%q decodes to %q, want %q", c.in, d, c.same)
		}
	}
}

func TestMaxTokens(t *testing.T) {
	tok := loadQwen3(t)
	text := "word" + strings.Repeat(" word", 99)
	all, _ := tok.Encode(text, EncodeOptions{})
	if len(all) != 100 {
		t.Fatalf("%d tokens, want 100 (\"word\" + 99 \" word\")", len(all))
	}
	if _, err := tok.Encode(text, EncodeOptions{MaxTokens: 100}); err != nil {
		t.Errorf("exactly at the limit: %v", err)
	}
	_, err := tok.Encode(text, EncodeOptions{MaxTokens: 64})
	if !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "64") {
		t.Errorf("over the limit: err = %v, want ErrTooLong naming 64", err)
	}
	// The encoder stops at the limit: of 100,000 distinct words (each
	// merged and cached once, at least one token each), a 64-token limit
	// lets it merge at most 65, the one that passes the limit included.
	var b strings.Builder
	for i := range 100000 {
		b.WriteByte(' ')
		for x, k := i, 0; k < 5; x, k = x/26, k+1 { // five letters: one piece per word, all distinct
			b.WriteByte(byte('a' + x%26))
		}
	}
	st := newEncState()
	if _, err := tok.encodeWith(st, b.String(), EncodeOptions{MaxTokens: 64}); !errors.Is(err, ErrTooLong) {
		t.Errorf("100,000 words, MaxTokens 64: err = %v, want ErrTooLong", err)
	}
	if st.cache.n > 65 {
		t.Errorf("100,000 words, MaxTokens 64: %d words merged, want at most 65 (the encoder went on past the limit)", st.cache.n)
	}
	if _, err := tok.Decode([]int32{5, 151936}); err == nil || !strings.Contains(err.Error(), "151936") {
		t.Errorf("decode out of range: %v", err)
	}
}

// randomWord joins 2 to maxParts+1 parts drawn from alphabet.
func randomWord(rng *rand.Rand, alphabet []string, maxParts int) string {
	var b strings.Builder
	for n := 2 + rng.IntN(maxParts); n > 0; n-- {
		b.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// mergesAgree fails the test unless the two merge loops give w the same
// ids, and returns them.
func mergesAgree(t *testing.T, tok *Tokenizer, st *encState, w string) []int32 {
	t.Helper()
	small := slices.Clone(tok.mergeSmall(st, w))
	heap := slices.Clone(tok.mergeHeap(st, w))
	if !slices.Equal(small, heap) {
		t.Fatalf("%q: small %v, heap %v", w, small, heap)
	}
	return heap
}

// TestMergeHeapMatchesSmall checks the two merge loops against each other
// on random words (words of printable ASCII, CJK and emoji bytes).
func TestMergeHeapMatchesSmall(t *testing.T) {
	tok := loadQwen3(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "e", "th", "in", "er", " ", "你", "好", "🎉", "0", "é", "\u0301"}
	st := newEncState()
	for range 2000 {
		w := randomWord(rng, alphabet, 30)
		heap := mergesAgree(t, tok, st, w)
		var dec []byte
		for _, id := range heap {
			dec = append(dec, tok.pieces[id]...)
		}
		if string(dec) != w {
			t.Fatalf("%q merged to %q", w, dec)
		}
	}
}

func TestStream(t *testing.T) {
	tok := loadQwen3(t)
	bt := func(bs ...byte) []int32 {
		out := make([]int32, len(bs))
		for i, b := range bs {
			out[i] = tok.byteTok[b]
		}
		return out
	}
	// 🎉 = F0 9F 8E 89, fed a byte at a time: nothing until the last byte.
	s := tok.NewStream()
	var got []string
	for _, id := range bt(0xF0, 0x9F, 0x8E, 0x89) {
		got = append(got, s.Next(id))
	}
	if want := []string{"", "", "", "🎉"}; !slices.Equal(got, want) {
		t.Errorf("byte-wise emoji: %q, want %q", got, want)
	}
	// A byte that can never start a character comes out as U+FFFD at once;
	// an unfinished one is U+FFFD per byte at Flush.
	s = tok.NewStream()
	if out := s.Next(bt(0xFF)[0]); out != "\uFFFD" {
		t.Errorf("0xFF: %q", out)
	}
	s.Next(bt(0xE4)[0])
	if out := s.Next(bt(0xBD)[0]); out != "" {
		t.Errorf("held prefix leaked: %q", out)
	}
	if out := s.Next(bt('a')[0]); out != "\uFFFD\uFFFDa" {
		t.Errorf("broken sequence then a: %q", out)
	}
	s.Next(bt(0xE4)[0])
	if out := s.Flush(); out != "\uFFFD" {
		t.Errorf("flush: %q", out)
	}
	// E0 80 can never be valid (overlong): not held back.
	s = tok.NewStream()
	if out := s.Next(bt(0xE0)[0]) + s.Next(bt(0x80)[0]); out != "\uFFFD\uFFFD" {
		t.Errorf("E0 80: %q", out)
	}
	if s.Next(-1) != "" || s.Err() == nil {
		t.Error("bad id not reported")
	}
	// Every golden string, streamed token by token: each piece valid UTF-8,
	// the concatenation equal to Decode.
	for _, c := range loadStrings(t) {
		ids, _ := tok.Encode(c.Text, EncodeOptions{ParseSpecial: true})
		s := tok.NewStream()
		var b strings.Builder
		for _, id := range ids {
			out := s.Next(id)
			if !utf8.ValidString(out) {
				t.Fatalf("case %d: stream emitted invalid UTF-8 %q", c.ID, out)
			}
			b.WriteString(out)
		}
		b.WriteString(s.Flush())
		if b.String() != c.Text {
			t.Errorf("case %d: stream %q, want %q", c.ID, b.String(), c.Text)
		}
	}
}

func TestChatTemplate(t *testing.T) {
	tok := loadQwen3(t)
	if !tok.HasChatTemplate() {
		t.Fatal("vocab GGUF lost tokenizer.chat_template")
	}
	msgs := []Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}
	const head = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
	on, err := tok.ApplyChatTemplate(msgs, true, true)
	if err != nil || on != head {
		t.Errorf("thinking on: %q, %v", on, err)
	}
	off, _ := tok.ApplyChatTemplate(msgs, true, false)
	if off != head+"<think>\n\n</think>\n\n" {
		t.Errorf("thinking off: %q", off)
	}
	if _, err := tok.ApplyChatTemplate(nil, true, true); err == nil {
		t.Error("no messages: want error")
	}
	// Without a template: the built-in ChatML, same text for this chat.
	plain := withChatTemplate(t, tok, "")
	if plain.HasChatTemplate() {
		t.Fatal("HasChatTemplate without one")
	}
	if got, _ := plain.ApplyChatTemplate(msgs, true, false); got != off {
		t.Errorf("ChatML fallback: %q, want %q", got, off)
	}
}

// withChatTemplate rebuilds tok's vocabulary and merges (without its
// special-token ids) with another chat template ("" for none).
func withChatTemplate(t *testing.T, tok *Tokenizer, tmpl string) *Tokenizer {
	t.Helper()
	out, err := newTokenizer(&vocabSpec{
		source: "test", pre: "qwen2",
		// A copy: newTokenizer renames empty tokens in place.
		tokens: append([]string(nil), tok.tokens...), types: tok.types, merges: mergesOf(tok),
		bos: NoToken, eos: NoToken, pad: NoToken, chatTemplate: tmpl,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mergesOf rebuilds the merge list (by rank) from a tokenizer's table.
func mergesOf(tok *Tokenizer) []string {
	var out []string
	tok.merges.each(func(k, v uint64) {
		r := int(v >> 32)
		for len(out) <= r {
			out = append(out, "")
		}
		out[r] = tok.tokens[int32(k>>32)] + " " + tok.tokens[int32(uint32(k))]
	})
	return out
}

func TestFromGGUFErrors(t *testing.T) {
	build := func(edit func(w *gguf.Writer)) (*gguf.File, error) {
		var buf bytes.Buffer
		w := gguf.NewWriter(&buf, 3)
		w.SetKV("general.architecture", gguf.StringValue("qwen3"))
		edit(w)
		if err := w.Write(); err != nil {
			return nil, err
		}
		return gguf.Parse(buf.Bytes())
	}
	bytesTokens := func() []string {
		bl := byteLevelTable()
		var out []string
		for b := 0; b < 256; b++ {
			out = append(out, string(bl.toRune[b]))
		}
		return out
	}
	cases := []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"no model", func(w *gguf.Writer) {}, "tokenizer.ggml.model"},
		{"spm", func(w *gguf.Writer) { w.SetKV(KeyModel, gguf.StringValue("llama")) }, "only byte-level BPE"},
		{"bad pre", func(w *gguf.Writer) {
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("falcon"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
		}, `"falcon" is not supported`},
		{"missing byte", func(w *gguf.Writer) {
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("qwen2"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()[1:]))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
		}, "no token for byte 0x00"},
		{"bad merge", func(w *gguf.Writer) {
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("qwen2"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyMerges, gguf.StringsValue([]string{"a b"}))
		}, "merges[0]"},
		{"token type out of range", func(w *gguf.Writer) {
			types := make([]int32, 256)
			for i := range types {
				types[i] = int32(TokenNormal)
			}
			types[33] = 99
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("qwen2"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyTokenType, gguf.Int32sValue(types))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
		}, "token_type[33] = 99"},
		{"token types longer than tokens", func(w *gguf.Writer) {
			types := make([]int32, 257)
			for i := range types {
				types[i] = int32(TokenNormal)
			}
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("qwen2"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyTokenType, gguf.Int32sValue(types))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
		}, "257 entries for 256 tokens"},
		{"eos out of range", func(w *gguf.Writer) {
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("qwen2"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
			w.SetKV(KeyEOS, gguf.Uint32Value(999))
		}, "eos_token_id = 999"},
		{"add_bos_token without a bos", func(w *gguf.Writer) {
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("qwen2"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
			w.SetKV(KeyAddBOS, gguf.BoolValue(true))
		}, "tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is not set"},
		// llama-bpe adds BOS when the file does not say (llama.cpp's
		// default): the error names that default, not a key the file lacks.
		{"llama-bpe's default BOS without a bos", func(w *gguf.Writer) {
			w.SetKV(KeyModel, gguf.StringValue("gpt2"))
			w.SetKV(KeyPre, gguf.StringValue("llama-bpe"))
			w.SetKV(KeyTokens, gguf.StringsValue(bytesTokens()))
			w.SetKV(KeyMerges, gguf.StringsValue(nil))
		}, `tokenizer.ggml.pre "llama-bpe" adds BOS when tokenizer.ggml.add_bos_token is absent, but tokenizer.ggml.bos_token_id is not set`},
	}
	for _, c := range cases {
		f, err := build(c.edit)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = FromGGUF(f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// TestChatTemplateEnginePanic: the Jinja engine panics on some templates
// (selectattr with one argument slices its arguments past their end); the
// template is the file's data, so ApplyChatTemplate returns an error.
func TestChatTemplateEnginePanic(t *testing.T) {
	tok := loadQwen3(t)
	for _, tmpl := range []string{
		"{{ messages|selectattr('tool_calls')|list|length }}",
		"{% for m in messages|selectattr('role') %}{{ m.role }}{% endfor %}",
	} {
		withTmpl := withChatTemplate(t, tok, tmpl)
		_, err := withTmpl.ApplyChatTemplate([]Message{{Role: "user", Content: "U"}}, true, true)
		if err == nil || !strings.Contains(err.Error(), "tokenizer.chat_template") || !strings.Contains(err.Error(), "panic") {
			t.Errorf("%q: err = %v, want an error naming tokenizer.chat_template and the engine's panic", tmpl, err)
		}
	}
}

// TestChatTemplateEnableThinking: enable_thinking is passed either way, as
// apply_chat_template(enable_thinking=True/False) does; a template that
// thinks only when it is true must see it.
func TestChatTemplateEnableThinking(t *testing.T) {
	tok := loadQwen3(t)
	withTmpl := withChatTemplate(t, tok,
		"{% if enable_thinking is not defined %}undefined{% elif enable_thinking %}on{% else %}off{% endif %}")
	for _, thinking := range []bool{true, false} {
		want := map[bool]string{true: "on", false: "off"}[thinking]
		got, err := withTmpl.ApplyChatTemplate([]Message{{Role: "user", Content: "U"}}, true, thinking)
		if err != nil || got != want {
			t.Errorf("enableThinking %v: %q, %v; want %q", thinking, got, err, want)
		}
	}
}

// TestSplitGoldens compares the qwen2 and qwen35 scanners with pieces that
// the Python regex module cut with the patterns themselves
// (testdata/tokenizer/splits.json, scripts/tokenizer/make_splits.py): an
// implementation independent of this package and of pretok_ref_test.go's
// reference, over 1016 strings of white space runs, contractions, digits of
// several scripts, emoji with ZWJ and modifiers, and combining marks.
func TestSplitGoldens(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdataDir, "splits.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Generator string
		Cases     []struct {
			Text   string
			Qwen2  []string
			Qwen35 []string
		}
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 1000 {
		t.Fatalf("splits.json has %d cases, want the generator's 1016", len(g.Cases))
	}
	for _, p := range []preType{preQwen2, preQwen35} {
		bad := 0
		for _, c := range g.Cases {
			want := c.Qwen2
			if p == preQwen35 {
				want = c.Qwen35
			}
			if got := pieces(p, c.Text); !slices.Equal(got, want) {
				bad++
				if bad <= 5 {
					t.Errorf("%s %+q: got %+q, want %+q (%s)", p, c.Text, got, want, g.Generator)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d strings split differently", p, bad, len(g.Cases))
		}
	}
}

// TestMaxTokensLongWord: a single pre-token (a run of letters, spaces or
// punctuation) can be the whole text. One too long to fit MaxTokens even at
// the vocabulary's longest token per id is refused without merging it: a
// 4 MiB word used to take seconds and a gigabyte of scratch under a
// 100-token limit.
func TestMaxTokensLongWord(t *testing.T) {
	tok := loadQwen3(t)
	for _, s := range []string{strings.Repeat("a", 4<<20), strings.Repeat(" ", 4<<20) + "x", "x" + strings.Repeat("=", 4<<20)} {
		st := newEncState()
		_, err := tok.encodeWith(st, s, EncodeOptions{MaxTokens: 100})
		if !errors.Is(err, ErrTooLong) {
			t.Errorf("%q... (%d bytes), MaxTokens 100: err = %v, want ErrTooLong", s[:4], len(s), err)
		}
		if cap(st.heap) != 0 || cap(st.next) != 0 || cap(st.syms) > smallWord {
			t.Errorf("%q... (%d bytes), MaxTokens 100: the word was merged (scratch of %d heap entries, %d symbols)", s[:4], len(s), cap(st.heap), cap(st.syms))
		}
	}
	// A long word that fits is encoded as without a limit, exactly at it too.
	s := strings.Repeat("a", 1000) + strings.Repeat(" ", 1000) + "b"
	all, err := tok.Encode(s, EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.Encode(s, EncodeOptions{MaxTokens: len(all)})
	if err != nil || !slices.Equal(got, all) {
		t.Errorf("MaxTokens %d: %v, %v; want %v", len(all), got, err, all)
	}
	if _, err := tok.Encode(s, EncodeOptions{MaxTokens: len(all) - 1}); !errors.Is(err, ErrTooLong) {
		t.Errorf("MaxTokens %d: err = %v, want ErrTooLong", len(all)-1, err)
	}
	if _, err := tok.Encode("a", EncodeOptions{MaxTokens: math.MaxInt}); err != nil {
		t.Errorf("MaxTokens MaxInt: %v", err)
	}
}
