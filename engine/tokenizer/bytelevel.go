package tokenizer

import (
	"sync"
	"unicode"
)

// byteLevel is GPT-2's reversible map between the 256 byte values and 256
// printable code points, which byte-level BPE vocabularies are written in:
// printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to themselves,
// the other 68 bytes, in order, to U+0100 onwards.
type byteLevel struct {
	toRune [256]rune
	toByte map[rune]byte
}

var byteLevelTable = sync.OnceValue(func() *byteLevel {
	bl := &byteLevel{toByte: make(map[rune]byte, 256)}
	printable := func(b int) bool {
		return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
	}
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !printable(b) {
			r = rune(256 + n)
			n++
		}
		bl.toRune[b] = r
		bl.toByte[r] = byte(b)
	}
	return bl
})

// decode turns a token written in the byte alphabet back into raw
// bytes; ok is false if a code point is outside the alphabet.
func (bl *byteLevel) decode(s string) (raw string, ok bool) {
	buf := make([]byte, 0, len(s))
	for _, r := range s {
		b, found := bl.toByte[r]
		if !found {
			return "", false
		}
		buf = append(buf, b)
	}
	return string(buf), true
}

// Code point classes the pre-tokenizers test. A code point has at most one
// of letter/number/mark (its general category); space is Unicode's
// White_Space property, which is what \s means in Oniguruma (Hugging Face)
// and in llama.cpp's tables.
const (
	clsLetter   uint8 = 1 << iota // \p{L}
	clsNumber                     // \p{N}
	clsMark                       // \p{M}
	clsSpace                      // \s
	clsAssigned                   // any assigned category (llama.cpp's flags != 0)
)

// classTable holds the classes of the BMP, one byte per code point, built
// once from Go's Unicode tables (read-only afterwards); other planes use the
// tables directly.
var classTable = sync.OnceValue(func() *[0x10000]uint8 {
	var t [0x10000]uint8
	for r := rune(0); r < 0x10000; r++ {
		t[r] = classSlow(r)
	}
	return &t
})

func classSlow(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.L, r):
		c = clsLetter
	case unicode.Is(unicode.N, r):
		c = clsNumber
	case unicode.Is(unicode.M, r):
		c = clsMark
	}
	if unicode.Is(unicode.White_Space, r) {
		c |= clsSpace
	}
	if c != 0 || unicode.In(r, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		c |= clsAssigned
	}
	return c
}

// classOf returns the class bits of r, using the BMP table t.
func classOf(t *[0x10000]uint8, r rune) uint8 {
	if r < 0x10000 && r >= 0 {
		return t[r]
	}
	return classSlow(r)
}
