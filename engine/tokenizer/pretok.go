package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// preType selects the pre-tokenizer (tokenizer.ggml.pre).
type preType uint8

const (
	preQwen2  preType = iota // qwen2: single digits, \p{L}+ words
	preQwen35                // qwen35: qwen2 with \p{M} joined to words
	preLlama3                // llama-bpe: llama.cpp's Llama 3 scanner
)

func (p preType) String() string {
	switch p {
	case preQwen2:
		return "qwen2"
	case preQwen35:
		return "qwen35"
	case preLlama3:
		return "llama-bpe"
	}
	return "unknown"
}

// parsePre maps a tokenizer.ggml.pre value to a preType, with llama.cpp's
// aliases for the same patterns.
func parsePre(name string) (preType, bool) {
	switch name {
	case "qwen2", "deepseek-r1-qwen", "megrez":
		return preQwen2, true
	case "qwen35":
		return preQwen35, true
	case "llama3", "llama-v3", "llama-bpe":
		return preLlama3, true
	}
	return 0, false
}

// The scanners below work on the UTF-8 bytes of a fragment (valid UTF-8:
// encodeText replaces bad bytes first) and return one piece at a time, so an
// encode needs no per-code-point arrays. Each piece depends only on where it
// starts: the patterns have no state between matches.

// scanner reads code points and their classes out of s.
type scanner struct {
	s   string
	tab *[0x10000]uint8 // classTable()
}

// at returns the code point at byte j (j < len(s)), its classes and width.
func (sc *scanner) at(j int) (rune, uint8, int) {
	if r := rune(sc.s[j]); r < utf8.RuneSelf {
		return r, sc.tab[r], 1
	}
	return sc.atSlow(j)
}

// atSlow is at for a multi-byte code point (kept out of line so that at
// inlines).
func (sc *scanner) atSlow(j int) (rune, uint8, int) {
	r, w := utf8.DecodeRuneInString(sc.s[j:])
	return r, classOf(sc.tab, r), w
}

// cls returns the classes of the code point at byte j, 0 past the end.
func (sc *scanner) cls(j int) uint8 {
	if j >= len(sc.s) {
		return 0
	}
	if b := sc.s[j]; b < utf8.RuneSelf {
		return sc.tab[b]
	}
	_, k, _ := sc.at(j)
	return k
}

// skip returns the byte after the run of code points from j whose classes
// intersect mask.
func (sc *scanner) skip(j int, mask uint8) int {
	for j < len(sc.s) {
		if b := sc.s[j]; b < utf8.RuneSelf { // ASCII inline: most text
			if sc.tab[b]&mask == 0 {
				break
			}
			j++
			continue
		}
		_, k, w := sc.atSlow(j)
		if k&mask == 0 {
			break
		}
		j += w
	}
	return j
}

// skipCRLF returns the byte after the run of \r and \n from j.
func (sc *scanner) skipCRLF(j int) int {
	for j < len(sc.s) && (sc.s[j] == '\r' || sc.s[j] == '\n') {
		j++
	}
	return j
}

// contraction returns the byte length of a contraction at s[i] ("'s", "'t",
// "'re", "'ve", "'m", "'ll", "'d" in any case, letters lowered by lower), or
// 0.
func (sc *scanner) contraction(i int, lower func(rune) rune) int {
	n := len(sc.s)
	if sc.s[i] != '\'' || i+1 >= n {
		return 0
	}
	r1, _, w1 := sc.at(i + 1)
	c1 := lower(r1)
	switch c1 {
	case 's', 't', 'm', 'd':
		return 1 + w1
	}
	if j := i + 1 + w1; j < n {
		r2, _, w2 := sc.at(j)
		c2 := lower(r2)
		if (c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l') {
			return j + w2 - i
		}
	}
	return 0
}

// spaces scans the white space run from i for the last three alternatives
// (\s*[\r\n]+|\s+(?!\S)|\s+): it returns the run's end j, the byte after its
// last newline (-1 if none), the start of its last code point and the number
// of code points in it.
func (sc *scanner) spaces(i int) (j, afterNL, last, count int) {
	j, afterNL, last = i, -1, i
	for j < len(sc.s) {
		r, k, w := sc.at(j)
		if k&clsSpace == 0 {
			break
		}
		if isCRLF(r) {
			afterNL = j + w
		}
		last = j
		j += w
		count++
	}
	return j, afterNL, last, count
}

// pieceEnd returns the byte end of the piece that starts at byte i of
// sc.s (i < len(sc.s)).
func (p preType) pieceEnd(sc *scanner, i int) int {
	if p == preLlama3 {
		return sc.llama3Piece(i)
	}
	return sc.qwenPiece(i, p == preQwen35)
}

// qwenPiece matches the Qwen2 pattern (withMarks: the Qwen3.5 variant) at
// byte i with the leftmost-alternative semantics of a backtracking regex
// engine:
//
//	1 (?i:'s|'t|'re|'ve|'m|'ll|'d)
//	2 [^\r\n\p{L}\p{N}]?W+          W = \p{L}   (qwen35: [\p{L}\p{M}])
//	3 \p{N}
//	4  ?P+[\r\n]*                   P = [^\s\p{L}\p{N}]   (qwen35: also not \p{M})
//	5 \s*[\r\n]+
//	6 \s+(?!\S)
//	7 \s+
func (sc *scanner) qwenPiece(i int, withMarks bool) int {
	word := clsLetter
	notP := clsSpace | clsLetter | clsNumber
	if withMarks {
		word |= clsMark
		notP |= clsMark
	}
	n := len(sc.s)
	c, k, w := sc.at(i)
	end := i + w
	if k&word != 0 {
		return sc.skip(end, word)
	}
	if c == '\'' {
		if m := sc.contraction(i, asciiLower); m > 0 {
			return i + m
		}
	}
	if k&clsNumber != 0 {
		return end // one digit
	}
	var k1 uint8 // classes of the next code point (0 at the end)
	var w1 int
	if end < n {
		_, k1, w1 = sc.at(end)
	}
	if !isCRLF(c) && k1&word != 0 {
		return sc.skip(end+w1, word)
	}
	if k&notP == 0 || (c == ' ' && end < n && k1&notP == 0) {
		if c == ' ' {
			end += w1
		}
		for end < n {
			_, kk, ww := sc.at(end)
			if kk&notP != 0 {
				break
			}
			end += ww
		}
		return sc.skipCRLF(end)
	}
	if k&clsSpace != 0 {
		j, afterNL, last, count := sc.spaces(i)
		switch {
		case afterNL >= 0: // \s*[\r\n]+ stops after the last newline of the run
			return afterNL
		case j < n && count > 1: // \s+(?!\S) leaves the last space to the next word
			return last
		default:
			return j
		}
	}
	return end
}

// llama3Piece is llama.cpp's hand-written scanner for the Llama 3 pattern
// (unicode_regex_split_custom_llama3), quirks included: an unassigned code
// point never joins a punctuation run, and contractions lowercase with the
// Unicode tables.
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func (sc *scanner) llama3Piece(i int) int {
	n := len(sc.s)
	punct := func(k uint8) bool { return k&(clsSpace|clsLetter|clsNumber) == 0 }
	c, k, w := sc.at(i)
	if m := sc.contraction(i, unicode.ToLower); m > 0 {
		return i + m
	}
	if !isCRLF(c) && k&clsNumber == 0 && (k&clsLetter != 0 || sc.cls(i+w)&clsLetter != 0) {
		return sc.skip(i+w, clsLetter)
	}
	if k&clsNumber != 0 {
		j := i + w
		for range 2 { // up to three digits
			if j >= n {
				break
			}
			_, kk, ww := sc.at(j)
			if kk&clsNumber == 0 {
				break
			}
			j += ww
		}
		return j
	}
	k2, j := k, i
	if c == ' ' {
		j = i + w
		k2 = sc.cls(j)
	}
	if punct(k2) && k&clsAssigned != 0 {
		for j < n {
			_, kk, ww := sc.at(j)
			if !punct(kk) || kk&clsAssigned == 0 {
				break
			}
			j += ww
		}
		return sc.skipCRLF(j)
	}
	j, afterNL, last, count := sc.spaces(i)
	switch {
	case afterNL >= 0:
		return afterNL
	case count > 1 && j < n:
		return last
	case count == 0:
		return i + w // no alternative matched: one code point
	}
	return j
}

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

// asciiLower lowercases ASCII letters only, as llama.cpp's spelled-out
// contraction classes ('[sS]...) do.
func asciiLower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + ('a' - 'A')
	}
	return r
}
