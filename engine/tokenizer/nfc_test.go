package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestNFCDefinition: NFC as UAX #15 defines it, on the two kinds of text
// where x/text's NFC departs from it. The expected strings are Python's
// unicodedata.normalize("NFC", s): a run of marks is sorted whole by
// combining class, however long (x/text inserts U+034F after 30 and sorts
// each segment apart), and a starter blocks composition across it (x/text
// composes e with U+0301 across U+0B3E once it has reordered the marks).
func TestNFCDefinition(t *testing.T) {
	tok := loadQwen3(t)
	for _, c := range []struct{ in, want string }{
		// 230 and 220 alternating: all the 220s first, then é takes the
		// first 230 (a 220 does not block a 230).
		{"e" + strings.Repeat("\u0301\u0316", 20), "\u00e9" + strings.Repeat("\u0316", 20) + strings.Repeat("\u0301", 19)},
		{"a" + strings.Repeat("\u0301", 40) + " b", "\u00e1" + strings.Repeat("\u0301", 39) + " b"},
		{"x" + strings.Repeat("\u0308", 35) + "\u0300", "\u1e8d" + strings.Repeat("\u0308", 34) + "\u0300"},
		{"e\u0b3e\u0301\u0316", "e\u0b3e\u0316\u0301"},
		{"e\u0dcf\u0316\u0301", "e\u0dcf\u0316\u0301"},
		// x/text counts into its run of 30 what only a compatibility
		// decomposition makes a mark (U+FF9E, halfwidth voiced sound
		// mark: U+3099), and Hangul vowels and trailing consonants up to
		// the last of each (U+1175, U+11C2); NFC adds no U+034F.
		{"a" + strings.Repeat("\uff9e", 40), "a" + strings.Repeat("\uff9e", 40)},
		{"\u1100" + strings.Repeat("\u1175", 40), "\uae30" + strings.Repeat("\u1175", 39)},
		{"\uac00" + strings.Repeat("\u11c2", 40), "\uac1b" + strings.Repeat("\u11c2", 39)},
		// À (U+00C0, the first code point that decomposes) is A U+0300;
		// U+0325 (class 220) sorts before the grave and takes the A.
		{"\u00c0\u0325\u0b3e", "\u1e00\u0300\u0b3e"},
	} {
		if got := nfc(c.in); got != c.want {
			t.Errorf("nfc(%+q) =\n %+q, want\n %+q", c.in, got, c.want)
		}
		ids, err := tok.Encode(c.in, EncodeOptions{NFC: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tok.Decode(ids); err != nil || got != c.want {
			t.Errorf("Decode(Encode(%+q, NFC)) = %+q, %v; want %+q", c.in, got, err, c.want)
		}
	}
}

// nfcRunes mixes starters, precomposed letters, marks of several classes
// (0, 1, 7, 9, 10, 202, 220, 230, 240), code points with two-mark
// decompositions (U+0344, U+0F73), singletons (U+0340, U+212B), Hangul,
// starters that compose (U+0B47 U+0B3E), a compatibility decomposition
// with marks (U+1FED) and U+034F itself.
var nfcRunes = []rune{
	'a', 'e', 'u', 'A', ' ', 0xE9, 0x1D8, 0x390, 0x344, 0xF73, 0x1FED,
	0x300, 0x301, 0x308, 0x316, 0x327, 0x345, 0x5B0, 0x93C, 0x94D, 0x334,
	0xAC00, 0x1100, 0x1161, 0x11A8, 0xB47, 0xB3E, 0x340, 0x212B, 0x4E00, 0x34F,
}

func randomNFCText(rng *rand.Rand, n int, marky bool) string {
	var b strings.Builder
	for range n {
		r := nfcRunes[rng.IntN(len(nfcRunes))]
		if marky && rng.IntN(4) > 0 {
			r = nfcRunes[11+rng.IntN(10)] // a combining mark
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestNFCMatchesXText: nfc (x/text where xtextMayDiffer says it is safe)
// must always equal nfcExact, and nfcExact must equal x/text's NFC wherever
// x/text keeps to UAX #15 (no U+034F inserted, no U+0B3E, the one starter
// in nfcRunes that composes backward), on random text from nfcRunes and on
// the golden strings.
func TestNFCMatchesXText(t *testing.T) {
	check := func(s string) (xtextOff bool) {
		t.Helper()
		exact, x := nfcExact(s), norm.NFC.String(s)
		if got := nfc(s); got != exact {
			t.Fatalf("nfc(%+q) = %+q, nfcExact %+q", s, got, exact)
		}
		xtextOff = strings.Count(x, "\u034f") > strings.Count(s, "\u034f") || strings.ContainsRune(s, 0xB3E)
		if !xtextOff && exact != x {
			t.Fatalf("nfcExact(%+q) = %+q, x/text %+q", s, exact, x)
		}
		if strings.Count(exact, "\u034f") > strings.Count(s, "\u034f") {
			t.Fatalf("nfcExact(%+q) = %+q inserts U+034F", s, exact)
		}
		if again := nfcExact(exact); again != exact {
			t.Fatalf("nfcExact is not idempotent on %+q: %+q then %+q", s, exact, again)
		}
		return xtextOff
	}
	for _, c := range loadStrings(t) {
		check(validUTF8(c.Text))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	off := 0
	for i := range 40000 {
		n := 1 + rng.IntN(10)
		if i%2 == 0 {
			n = 20 + rng.IntN(60)
		}
		if check(randomNFCText(rng, n, i%4 < 2)) {
			off++
		}
	}
	if off < 1000 {
		t.Fatalf("x/text departs from UAX #15 on only %d of 40000 strings: the test hardly exercises nfcExact", off)
	}
}
