package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The rune-array scanners that pretok.go's byte scanners replaced, kept as
// an independent reference: TestScannersMatchReference checks that both
// split random text identically.

// split appends to ends the end index (exclusive, in code points) of every
// piece of the fragment rs, whose classes are cls (len(cls) == len(rs)).
func (p preType) splitRef(rs []rune, cls []uint8, ends []int32) []int32 {
	if p == preLlama3 {
		return refSplitLlama3(rs, cls, ends)
	}
	return refSplitQwen(rs, cls, ends, p == preQwen35)
}

// contraction returns the length (2 or 3) of a contraction at rs[i] ("'s",
// "'t", "'re", "'ve", "'m", "'ll", "'d" in any case), or 0.
func refContraction(rs []rune, i int, lower func(rune) rune) int {
	n := len(rs)
	if rs[i] != '\'' || i+1 >= n {
		return 0
	}
	c1 := lower(rs[i+1])
	switch c1 {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < n {
		c2 := lower(rs[i+2])
		if (c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l') {
			return 3
		}
	}
	return 0
}

// splitQwen scans the Qwen2 pattern (withMarks: the Qwen3.5 variant) with the
// leftmost-alternative semantics of a backtracking regex engine:
//
//	1 (?i:'s|'t|'re|'ve|'m|'ll|'d)
//	2 [^\r\n\p{L}\p{N}]?W+          W = \p{L}   (qwen35: [\p{L}\p{M}])
//	3 \p{N}
//	4  ?P+[\r\n]*                   P = [^\s\p{L}\p{N}]   (qwen35: also not \p{M})
//	5 \s*[\r\n]+
//	6 \s+(?!\S)
//	7 \s+
func refSplitQwen(rs []rune, cls []uint8, ends []int32, withMarks bool) []int32 {
	n := len(rs)
	word := clsLetter
	notP := clsSpace | clsLetter | clsNumber
	if withMarks {
		word |= clsMark
		notP |= clsMark
	}
	for i := 0; i < n; {
		c, k := rs[i], cls[i]
		end := i + 1
		switch {
		case c == '\'' && refContraction(rs, i, asciiLower) > 0:
			end = i + refContraction(rs, i, asciiLower)
		case k&word != 0:
			for end < n && cls[end]&word != 0 {
				end++
			}
		case !isCRLF(c) && k&clsNumber == 0 && i+1 < n && cls[i+1]&word != 0:
			end = i + 2
			for end < n && cls[end]&word != 0 {
				end++
			}
		case k&clsNumber != 0:
			// one digit: end = i+1
		case k&notP == 0 || (c == ' ' && i+1 < n && cls[i+1]&notP == 0):
			if c == ' ' {
				end = i + 2
			}
			for end < n && cls[end]&notP == 0 {
				end++
			}
			for end < n && isCRLF(rs[end]) {
				end++
			}
		case k&clsSpace != 0:
			j, lastNL := i, -1
			for j < n && cls[j]&clsSpace != 0 {
				if isCRLF(rs[j]) {
					lastNL = j
				}
				j++
			}
			switch {
			case lastNL >= 0: // \s*[\r\n]+ stops after the last newline of the run
				end = lastNL + 1
			case j < n && j-i > 1: // \s+(?!\S) leaves the last space to the next word
				end = j - 1
			default:
				end = j
			}
		}
		ends = append(ends, int32(end))
		i = end
	}
	return ends
}

// splitLlama3 is llama.cpp's hand-written scanner for the Llama 3 pattern
// (unicode_regex_split_custom_llama3), quirks included: an unassigned code
// point never joins a punctuation run, and contractions lowercase with the
// Unicode tables.
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func refSplitLlama3(rs []rune, cls []uint8, ends []int32) []int32 {
	n := len(rs)
	at := func(j int) uint8 {
		if j < n {
			return cls[j]
		}
		return 0
	}
	punct := func(k uint8) bool { return k&(clsSpace|clsLetter|clsNumber) == 0 }
	for i := 0; i < n; {
		c, k := rs[i], cls[i]
		if m := refContraction(rs, i, unicode.ToLower); m > 0 {
			ends = append(ends, int32(i+m))
			i += m
			continue
		}
		if !isCRLF(c) && k&clsNumber == 0 && (k&clsLetter != 0 || at(i+1)&clsLetter != 0) {
			j := i + 1
			for at(j)&clsLetter != 0 {
				j++
			}
			ends = append(ends, int32(j))
			i = j
			continue
		}
		if k&clsNumber != 0 {
			j := i
			for at(j)&clsNumber != 0 {
				j++
				if j-i == 3 {
					ends = append(ends, int32(j))
					i = j
				}
			}
			if j > i {
				ends = append(ends, int32(j))
			}
			i = j
			continue
		}
		k2 := k
		if c == ' ' {
			k2 = at(i + 1)
		}
		if punct(k2) && k&clsAssigned != 0 {
			j := i
			if c == ' ' {
				j++
			}
			for punct(k2) && k2&clsAssigned != 0 {
				j++
				k2 = at(j)
			}
			for j < n && isCRLF(rs[j]) {
				j++
			}
			ends = append(ends, int32(j))
			i = j
			continue
		}
		j, lastNL := i, -1
		for at(j)&clsSpace != 0 {
			if isCRLF(rs[j]) {
				lastNL = j
			}
			j++
		}
		switch {
		case lastNL >= 0:
			j = lastNL + 1
		case j-i > 1 && j < n:
			j--
		case j == i:
			j = i + 1 // no alternative matched: one code point
		}
		ends = append(ends, int32(j))
		i = j
	}
	return ends
}

// TestScannersMatchReference splits random strings with the byte scanners
// and with the rune-array reference scanners above; the pieces must agree
// for every pre type. The alphabet mixes what the patterns distinguish:
// contractions in both cases, \r\n and other spaces (NBSP, tab, U+3000),
// ASCII and non-ASCII letters, digits and marks, punctuation, an unassigned
// code point, non-BMP letters/symbols, and letters that Unicode lowercases
// to ASCII (İ, K) or that are long s (ſ).
func TestScannersMatchReference(t *testing.T) {
	alphabet := []string{
		"'", "s", "S", "t", "re", "RE", "v", "e", "l", "L", "m", "d", "D", "x",
		" ", "  ", "\t", "\r", "\n", "\r\n", "\u00a0", "\u3000",
		"0", "7", "٣", "Ⅻ", "½", "你", "好", "न", "्", "त", "े", "é", "\u0301",
		".", ",", "!", "-", "，", "€", "\u0378", "😀", "𝐀", "\uFFFD", "İ", "\u212a", "ſ", "\u200b",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	tab := classTable()
	for range 20000 {
		var b strings.Builder
		for n := 1 + rng.IntN(16); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		for _, p := range []preType{preQwen2, preQwen35, preLlama3} {
			if got, want := pieces(p, s), refPieces(p, tab, s); !slices.Equal(got, want) {
				t.Fatalf("%s %q: byte scanner %q, reference %q", p, s, got, want)
			}
		}
	}
}

// refPieces splits valid UTF-8 s with the rune reference scanner of p.
func refPieces(p preType, tab *[0x10000]uint8, s string) []string {
	var rs []rune
	var cls []uint8
	for _, r := range s {
		rs = append(rs, r)
		cls = append(cls, classOf(tab, r))
	}
	var out []string
	start := 0
	for _, e := range p.splitRef(rs, cls, nil) {
		out = append(out, string(rs[start:e]))
		start = int(e)
	}
	return out
}
