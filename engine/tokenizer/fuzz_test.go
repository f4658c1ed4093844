package tokenizer

import (
	"slices"
	"testing"
	"unicode/utf8"
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
