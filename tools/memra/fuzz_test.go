package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// FuzzParseIDs checks --prompt-tokens' parser (and tokenize --decode's) on
// arbitrary text: it returns ids or an error, and accepted ids are one per
// comma- or space-separated field, each below vocab and equal to its
// field's decimal value, and print back (space-separated, as tokenize
// does) to a list that parses to the same ids. An error names the field's
// place in the list.
func FuzzParseIDs(f *testing.F) {
	for _, c := range []struct {
		s     string
		vocab uint32
	}{
		{"318,387, 467 300\t350\n82", 512},
		{"1 2 3", 3},
		{"0", 1},
		{"", 10},
		{" , ,", 10},
		{"-1", 10},
		{"+5,05", 10},
		{"99999999999999999999", 10},
		{"2147483647", math.MaxInt32},
		{"1\u00a02\u20293", 10},
		{"0x10", 100},
		{"1_000", 2000},
	} {
		f.Add(c.s, c.vocab)
	}
	f.Fuzz(func(t *testing.T, s string, v uint32) {
		vocab := int(v % (math.MaxInt32 + 1)) // a vocabulary's size is an int32 (tokenizer, loader)
		ids, err := parseIDs(s, vocab)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "token ") && err.Error() != "no token ids" {
				t.Fatalf("error %q does not name the token", err)
			}
			return
		}
		fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		if len(ids) != len(fields) {
			t.Fatalf("%d ids from %d fields of %q", len(ids), len(fields), s)
		}
		out := make([]string, len(ids))
		for i, id := range ids {
			if id < 0 || int(id) >= vocab {
				t.Fatalf("id %d outside the vocabulary of %d", id, vocab)
			}
			if x, err := strconv.ParseInt(fields[i], 10, 64); err != nil || x != int64(id) {
				t.Fatalf("field %q parsed as %d", fields[i], id)
			}
			out[i] = strconv.Itoa(int(id))
		}
		back, err := parseIDs(strings.Join(out, " "), vocab)
		if err != nil || len(back) != len(ids) {
			t.Fatalf("%v printed back parses as %v, %v", ids, back, err)
		}
		for i := range ids {
			if back[i] != ids[i] {
				t.Fatalf("%v printed back parses as %v", ids, back)
			}
		}
	})
}
