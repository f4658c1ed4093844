package tokenizer

import "unicode"

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

// split appends to ends the end index (exclusive, in code points) of every
// piece of the fragment rs, whose classes are cls (len(cls) == len(rs)).
func (p preType) split(rs []rune, cls []uint8, ends []int32) []int32 {
	if p == preLlama3 {
		return splitLlama3(rs, cls, ends)
	}
	return splitQwen(rs, cls, ends, p == preQwen35)
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

// contraction returns the length (2 or 3) of a contraction at rs[i] ("'s",
// "'t", "'re", "'ve", "'m", "'ll", "'d" in any case), or 0.
func contraction(rs []rune, i int, lower func(rune) rune) int {
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
func splitQwen(rs []rune, cls []uint8, ends []int32, withMarks bool) []int32 {
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
		case c == '\'' && contraction(rs, i, asciiLower) > 0:
			end = i + contraction(rs, i, asciiLower)
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
func splitLlama3(rs []rune, cls []uint8, ends []int32) []int32 {
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
		if m := contraction(rs, i, unicode.ToLower); m > 0 {
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
