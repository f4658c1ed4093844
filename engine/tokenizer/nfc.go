package tokenizer

import (
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nfc returns s (valid UTF-8) in Unicode Normalization Form C.
//
// golang.org/x/text's NFC departs from UAX #15 in two ways that Hugging
// Face's NFC normalizer (like Python's unicodedata) does not:
//   - it follows the Stream-Safe Text Format: after 30 non-starters in a
//     row it inserts U+034F COMBINING GRAPHEME JOINER and sorts each
//     30-mark segment apart, so Zalgo text gains a character it had not;
//   - after a starter that composes with the one before it (U+0B3E ORIYA
//     VOWEL SIGN AA, U+0CD5, U+0DCF ...), marks to reorder compose across
//     it: "e\u0B3E\u0316\u0301" comes out as "\u00E9\u0B3E\u0316".
//
// Text that could meet either takes nfcExact; all other text, x/text's
// faster path, whose output is the same there.
func nfc(s string) string {
	if xtextMayDiffer(s) {
		return nfcExact(s)
	}
	return norm.NFC.String(s)
}

// streamSafeLimit is x/text's maxNonStarters: the most non-starters in a row
// it normalises without inserting a U+034F.
const streamSafeLimit = 30

// xtextMayDiffer reports whether x/text's NFC of s might differ from
// nfcExact's: s has a starter that composes backward, or a run of
// non-starters that might pass streamSafeLimit. The run over-counts what
// x/text counts (the non-starters of each code point's compatibility
// decomposition, which its tables use).
func xtextMayDiffer(s string) bool {
	back := backwardStarters()
	run := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf { // ASCII: a starter without decomposition
			run = 0
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if back[r] {
			return true
		}
		compat := norm.NFKD.PropertiesString(s[i:])
		canon := norm.NFD.PropertiesString(s[i:])
		n := max(1, utf8.RuneCount(compat.Decomposition()), utf8.RuneCount(canon.Decomposition()))
		// x/text counts a Hangul vowel or trailing jamo (class 0, but it
		// composes backward) into the run.
		jamoVT := r >= 0x1161 && r <= 0x1175 || r >= 0x11A8 && r <= 0x11C2
		if compat.LeadCCC() == 0 && canon.LeadCCC() == 0 && canon.CCC() == 0 && !jamoVT {
			run = n // a starter: the count restarts from its trailing non-starters (at most n)
		} else {
			run += n
		}
		if run > streamSafeLimit {
			return true
		}
		i += w
	}
	return false
}

// backwardStarters is the set of starters (class 0) that appear after the
// first code point of a canonical decomposition: those that can compose
// with what precedes them. Hangul jamo are not among them (x/text composes
// Hangul by rule, and correctly).
var backwardStarters = sync.OnceValue(func() map[rune]bool {
	set := make(map[rune]bool)
	for r := rune(0xC0); r <= unicode.MaxRune; r++ {
		if r == 0xD800 {
			r = 0xE000 // surrogates are not characters
		}
		d := norm.NFD.PropertiesString(string(r)).Decomposition()
		for i, x := range []rune(string(d)) {
			if i > 0 && norm.NFD.PropertiesString(string(x)).CCC() == 0 {
				set[x] = true
			}
		}
	}
	return set
})

// nfcExact is NFC by the definition in UAX #15, without the Stream-Safe
// limit: canonical decomposition, canonical ordering of every run of
// non-starters however long, canonical composition. It is linear in len(s)
// apart from sorting the runs, and slower than x/text's NFC by a constant.
func nfcExact(s string) string {
	// Canonical decomposition, one code point at a time (a single code
	// point's decomposition has at most 4 runes, far below the limit).
	var d []rune
	for _, r := range s {
		if r < 0xC0 { // nothing below À decomposes canonically
			d = append(d, r)
			continue
		}
		for _, x := range norm.NFD.String(string(r)) {
			d = append(d, x)
		}
	}
	ccc := make([]uint8, len(d))
	for i, r := range d {
		if r >= 0x300 { // no combining class below U+0300
			ccc[i] = norm.NFD.PropertiesString(string(r)).CCC()
		}
	}
	// Canonical ordering: a stable sort of each run of non-starters by class.
	type mark struct {
		r   rune
		ccc uint8
	}
	var run []mark
	for i := 0; i < len(d); {
		if ccc[i] == 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && ccc[j] != 0 {
			j++
		}
		if j-i > 1 {
			run = run[:0]
			for k := i; k < j; k++ {
				run = append(run, mark{d[k], ccc[k]})
			}
			slices.SortStableFunc(run, func(a, b mark) int { return int(a.ccc) - int(b.ccc) })
			for k, m := range run {
				d[i+k], ccc[i+k] = m.r, m.ccc
			}
		}
		i = j
	}
	// Canonical composition: each code point joins the last starter when
	// nothing between blocks it and the pair has a primary composite. After
	// ordering, only the last code point kept since the starter can block.
	out := d[:0]
	starter := -1 // index in out of the last starter
	last := -1    // class of the last code point kept after it (-1: none; never 0)
	for i, r := range d {
		c := int(ccc[i])
		if starter >= 0 && last < c {
			if p, ok := composite(out[starter], r); ok {
				out[starter] = p
				continue
			}
		}
		if c == 0 {
			starter, last = len(out), -1
		} else {
			last = c
		}
		out = append(out, r)
	}
	return string(out)
}

// composite returns the primary composite of a starter and the code point
// that follows it, if there is one. x/text composes the pair: one code point
// out means they combine (composition exclusions included).
func composite(starter, r rune) (rune, bool) {
	if r < 0x300 { // every composite's second code point is U+0300 or above
		return 0, false
	}
	var buf [2 * utf8.UTFMax]byte
	b := utf8.AppendRune(utf8.AppendRune(buf[:0], starter), r)
	c := norm.NFC.Bytes(b)
	p, w := utf8.DecodeRune(c)
	if w != len(c) {
		return 0, false
	}
	return p, true
}
