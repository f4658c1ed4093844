package tokenizer

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memra-ai/memra/gguf"
)

// FuzzEncode checks the encoder on arbitrary bytes:
//   - the byte-level pre-tokenizers split valid UTF-8 exactly as the rune
//     reference scanners (pretok_ref_test.go) do, for qwen2, qwen35 and
//     llama-bpe;
//   - every piece merges to the same ids through mergeHeap and mergeSmall;
//   - Decode(Encode(s)) is s with each byte outside well-formed UTF-8 read as
//     U+FFFD (doc.go), with and without special-token parsing;
//   - NFC mode never fails and decodes to valid UTF-8.
//
// Seeds: the 330 golden strings plus a few malformed ones.
func FuzzEncode(f *testing.F) {
	tok := loadQwen3(f)
	for _, c := range loadStrings(f) {
		f.Add(c.Text)
	}
	for _, s := range []string{"\xff", "a\xc3", "\xe2\x82", "<|im_start|>\xf0\x9f", "\xed\xa0\x80 x", "'S\r\n\r\n 123456"} {
		f.Add(s)
	}
	tab := classTable()
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return // the splitters are linear; long inputs only slow the search down
		}
		if utf8.ValidString(s) {
			for _, p := range []preType{preQwen2, preQwen35, preLlama3} {
				got, want := pieces(p, s), refPieces(p, tab, s)
				if !slices.Equal(got, want) {
					t.Fatalf("%s %q: byte scanner %q, reference %q", p, s, got, want)
				}
				st := newEncState()
				for _, w := range got {
					if len(w) < 2 {
						continue
					}
					small := slices.Clone(tok.mergeSmall(st, w))
					heap := slices.Clone(tok.mergeHeap(st, w))
					if !slices.Equal(small, heap) {
						t.Fatalf("piece %q: mergeSmall %v, mergeHeap %v", w, small, heap)
					}
				}
			}
		}
		want := validUTF8(s)
		for _, special := range []bool{false, true} {
			ids, err := tok.Encode(s, EncodeOptions{ParseSpecial: special})
			if err != nil {
				t.Fatalf("Encode(%q, special %v): %v", s, special, err)
			}
			got, err := tok.Decode(ids)
			if err != nil {
				t.Fatalf("Decode(Encode(%q)): %v", s, err)
			}
			if got != want {
				t.Fatalf("special %v: Decode(Encode(%q)) = %q, want %q", special, s, got, want)
			}
		}
		ids, err := tok.Encode(s, EncodeOptions{NFC: true})
		if err != nil {
			t.Fatalf("Encode(%q, NFC): %v", s, err)
		}
		got, err := tok.Decode(ids)
		if err != nil || !utf8.ValidString(got) {
			t.Fatalf("NFC: Decode(Encode(%q)) = %q, %v: want valid UTF-8", s, got, err)
		}
	})
}

// Flags of FuzzFromGGUF's flags byte.
const (
	fuzzByteTokens = 1 << iota // put the 256 byte-alphabet tokens first
	fuzzPreBit0                // with fuzzPreBit1: which tokenizer.ggml.pre
	fuzzPreBit1
	fuzzTypes  // write tokenizer.ggml.token_type
	fuzzBOS    // write tokenizer.ggml.bos_token_id
	fuzzEOS    // write tokenizer.ggml.eos_token_id
	fuzzAddBOS // write tokenizer.ggml.add_bos_token ...
	fuzzAddBOSValue
)

// fuzzVocabGGUF writes a GGUF image whose tokenizer metadata is the
// tokens and merges of the "\n"-separated lists, the types (each byte a
// signed type, 1 past its end), and what flags says.
func fuzzVocabGGUF(tokens, merges string, types []byte, flags uint8, bos, eos uint32) ([]byte, []string, error) {
	var toks []string
	if flags&fuzzByteTokens != 0 {
		bl := byteLevelTable()
		for b := range 256 {
			toks = append(toks, string(bl.toRune[b]))
		}
	}
	if tokens != "" {
		toks = append(toks, strings.Split(tokens, "\n")...)
	}
	var ms []string
	if merges != "" {
		ms = strings.Split(merges, "\n")
	}
	pre := [4]string{"qwen2", "qwen35", "llama-bpe", "gpt-4o"}[flags>>1&3]
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	w.SetKV(KeyModel, gguf.StringValue("gpt2"))
	w.SetKV(KeyPre, gguf.StringValue(pre))
	w.SetKV(KeyTokens, gguf.StringsValue(toks))
	if flags&fuzzTypes != 0 {
		ty := make([]int32, len(toks))
		for i := range ty {
			ty[i] = int32(TokenNormal)
			if i < len(types) {
				ty[i] = int32(int8(types[i]))
			}
		}
		w.SetKV(KeyTokenType, gguf.Int32sValue(ty))
	}
	w.SetKV(KeyMerges, gguf.StringsValue(ms))
	if flags&fuzzBOS != 0 {
		w.SetKV(KeyBOS, gguf.Uint32Value(bos))
	}
	if flags&fuzzEOS != 0 {
		w.SetKV(KeyEOS, gguf.Uint32Value(eos))
	}
	if flags&fuzzAddBOS != 0 {
		w.SetKV(KeyAddBOS, gguf.BoolValue(flags&fuzzAddBOSValue != 0))
	}
	err := w.Write()
	return buf.Bytes(), toks, err
}

// FuzzFromGGUF checks the tokenizer built from hostile GGUF metadata
// (tokens, merges, token types, special ids, pre-tokenizer) written with
// gguf's Writer and parsed back: FromGGUF loads or returns an error, and a
// tokenizer that loads has one id per token, each of which decodes (whole
// and streamed) and maps back to itself by text; its special and
// end-of-generation ids lie in the vocabulary; Encode of any text gives
// ids in the vocabulary; and when every byte-alphabet token is a normal
// one and none is user-defined, Decode(Encode(s)) is s with invalid UTF-8
// read as U+FFFD.
//
// Seeds: the first 600 tokens of Qwen3's vocabulary (testdata) with the
// merges among them and its special tokens, and hand-made edge cases.
func FuzzFromGGUF(f *testing.F) {
	real := loadQwen3(f)
	var toks, merges []string
	for id := range int32(600) {
		toks = append(toks, real.TokenText(id))
	}
	types := make([]byte, len(toks))
	for i := range types {
		types[i] = byte(TokenNormal)
	}
	for _, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>"} {
		id, _ := real.TokenID(s)
		toks = append(toks, s)
		types = append(types, byte(real.TokenType(id)))
	}
	g, err := gguf.Open(filepath.Join(testdataDir, vocabGGUFName))
	if err != nil {
		f.Fatal(err)
	}
	all, err := g.Strings(KeyMerges)
	g.Close()
	if err != nil {
		f.Fatal(err)
	}
	in := map[string]bool{}
	for _, s := range toks {
		in[s] = true
	}
	for _, m := range all {
		l, r, _ := strings.Cut(m, " ")
		if in[l] && in[r] && in[l+r] {
			merges = append(merges, m)
		}
	}
	const qwen = fuzzTypes | fuzzBOS | fuzzEOS | fuzzAddBOS // add_bos_token false
	f.Add(strings.Join(toks, "\n"), strings.Join(merges, "\n"), types, uint8(qwen), uint32(600), uint32(602), "Hello, world! <think>x</think><|im_end|>")
	// Without the user-defined <think>: Decode(Encode(s)) must give s back.
	f.Add(strings.Join(toks[:603], "\n"), strings.Join(merges, "\n"), types, uint8(qwen|fuzzPreBit1), uint32(600), uint32(602), "Hello, world! 123 \xff\u00e9")
	f.Add("", "", []byte(nil), uint8(fuzzByteTokens), uint32(0), uint32(0), "abc")
	f.Add("ab\nabc\n<|x|>\n\n", "a b\nab c\nb c\nab\nx", []byte{1, 1, 3, 0}, uint8(fuzzByteTokens|fuzzEOS|fuzzAddBOS|fuzzAddBOSValue|fuzzBOS), uint32(258), uint32(256), "abcabc<|x|>")
	f.Add("ab", "a b", []byte{1, 5}, uint8(fuzzByteTokens|fuzzTypes|fuzzPreBit1), uint32(0), uint32(1<<31), "ab")
	f.Add("Ġ\n!", "", []byte{0xff, 7}, uint8(fuzzByteTokens|fuzzTypes), uint32(0), uint32(0), "")
	f.Fuzz(func(t *testing.T, tokens, merges string, types []byte, flags uint8, bos, eos uint32, text string) {
		img, toks, err := fuzzVocabGGUF(tokens, merges, types, flags, bos, eos)
		if err != nil {
			return // gguf refuses the metadata (e.g. a string too long)
		}
		g, err := gguf.Parse(img)
		if err != nil {
			t.Fatalf("gguf reads back none of what it wrote: %v", err)
		}
		tok, err := FromGGUF(g)
		if err != nil {
			return
		}
		n := len(toks)
		if tok.Vocab() != n {
			t.Fatalf("%d tokens written, Vocab %d", n, tok.Vocab())
		}
		inVocab := func(id int32) bool { return id >= 0 && int(id) < n }
		for _, id := range []int32{tok.BOS(), tok.EOS(), tok.PAD(), tok.EOT()} {
			if id != NoToken && !inVocab(id) {
				t.Fatalf("special id %d outside the vocabulary of %d", id, n)
			}
		}
		for _, id := range tok.EOGs() {
			if !inVocab(id) {
				t.Fatalf("end-of-generation id %d outside the vocabulary of %d", id, n)
			}
		}
		st := tok.NewStream()
		roundTrip := true
		bl := byteLevelTable()
		for id := range int32(n) {
			if _, err := tok.Decode([]int32{id}); err != nil {
				t.Fatalf("Decode(%d): %v", id, err)
			}
			st.Next(id)
			if got, ok := tok.TokenID(tok.TokenText(id)); !ok || got != id {
				t.Fatalf("token %d (%q) maps back to %d, %v", id, tok.TokenText(id), got, ok)
			}
			_, inAlphabet := bl.decode(tok.TokenText(id))
			typ := tok.TokenType(id)
			if typ == TokenUserDefined || inAlphabet && typ != TokenNormal {
				roundTrip = false
			}
		}
		st.Flush()
		if err := st.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		if len(text) > 1024 {
			text = text[:1024]
		}
		for _, special := range []bool{false, true} {
			ids, err := tok.Encode(text, EncodeOptions{ParseSpecial: special})
			if err != nil {
				t.Fatalf("Encode(%q, special %v): %v", text, special, err)
			}
			got, err := tok.Decode(ids)
			if err != nil {
				t.Fatalf("Decode(Encode(%q)): %v", text, err)
			}
			if !special && !tok.AddBOS() && roundTrip && got != validUTF8(text) {
				t.Fatalf("Decode(Encode(%q)) = %q, want %q", text, got, validUTF8(text))
			}
		}
	})
}
