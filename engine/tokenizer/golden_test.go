package tokenizer

import (
	"fmt"
	"go/doc"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestGoldens requires ids identical to Hugging Face tokenizers' for every
// string in strings.json, in the four modes (NFC or not, special tokens
// parsed or not), and decode(encode(s)) == s.
func TestGoldens(t *testing.T) {
	g := loadGoldens(t)
	tok := loadQwen3(t)
	cs := loadStrings(t)
	if len(g.Cases) != len(cs) {
		t.Fatalf("goldens.json has %d cases, strings.json %d: regenerate goldens", len(g.Cases), len(cs))
	}
	type mode struct {
		name string
		opt  EncodeOptions
		want func(i int) []int32
	}
	modes := []mode{
		{"raw/plain", EncodeOptions{}, func(i int) []int32 { return g.Cases[i].Raw.Plain }},
		{"raw/special", EncodeOptions{ParseSpecial: true}, func(i int) []int32 { return g.Cases[i].Raw.Special }},
		{"nfc/plain", EncodeOptions{NFC: true}, func(i int) []int32 { return g.Cases[i].NFC.Plain }},
		{"nfc/special", EncodeOptions{NFC: true, ParseSpecial: true}, func(i int) []int32 { return g.Cases[i].NFC.Special }},
	}
	for _, m := range modes {
		bad, badRT := 0, 0
		for i, c := range cs {
			if g.Cases[i].ID != c.ID {
				t.Fatalf("case %d: goldens id %d != strings id %d", i, g.Cases[i].ID, c.ID)
			}
			got, err := tok.Encode(c.Text, m.opt)
			if err != nil {
				t.Fatalf("%s case %d: %v", m.name, c.ID, err)
			}
			if want := m.want(i); !slices.Equal(got, want) {
				bad++
				if bad <= 5 {
					t.Errorf("%s case %d (%s) %q:\n got %v\nwant %v", m.name, c.ID, c.Kind, c.Text, got, want)
				}
			}
			dec, err := tok.Decode(got)
			if err != nil {
				t.Fatal(err)
			}
			want := c.Text
			if m.opt.NFC {
				want = norm.NFC.String(c.Text) // the round trip holds up to NFC
			}
			if dec != want {
				badRT++
				if badRT <= 5 {
					t.Errorf("%s case %d: decode(encode(s)) = %q, want %q", m.name, c.ID, dec, want)
				}
			}
		}
		t.Logf("%s: %d/%d identical ids, %d round-trip failures (HF tokenizers %s)", m.name, len(cs)-bad, len(cs), badRT, g.TokenizersVersion)
		if bad > 0 {
			t.Errorf("%s: %d of %d cases differ", m.name, bad, len(cs))
		}
	}
}

// TestRoundTrip needs no goldens: decode(encode(s)) == s for every string
// in both special-token modes.
func TestRoundTrip(t *testing.T) {
	tok := loadQwen3(t)
	for _, c := range loadStrings(t) {
		for _, special := range []bool{false, true} {
			got, err := tok.Encode(c.Text, EncodeOptions{ParseSpecial: special})
			if err != nil {
				t.Fatal(err)
			}
			dec, err := tok.Decode(got)
			if err != nil {
				t.Fatal(err)
			}
			if dec != c.Text {
				t.Errorf("case %d special=%v: decode(encode(%q)) = %q", c.ID, special, c.Text, dec)
			}
		}
	}
}

// TestChatGoldens renders the conversations of goldens.json with the
// template and compares with jinja2's output.
func TestChatGoldens(t *testing.T) {
	g := loadGoldens(t)
	tok := loadQwen3(t)
	if len(g.Chat) == 0 {
		t.Fatal("goldens.json has no chat renders")
	}
	for _, c := range g.Chat {
		msgs := make([]Message, len(c.Messages))
		for i, m := range c.Messages {
			msgs[i] = Message{Role: m["role"], Content: m["content"], ReasoningContent: m["reasoning_content"]}
		}
		thinking := c.EnableThinking == nil || *c.EnableThinking
		got, err := tok.ApplyChatTemplate(msgs, c.AddGenerationPrompt, thinking)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got != c.Text {
			t.Errorf("%s:\n got %q\nwant %q", c.Name, got, c.Text)
		}
	}
}

// TestExamplesIndependent holds example_test.go's Output to what Hugging
// Face's tokenizer said (goldens.json, by the strings' text) and to
// tokenizer.json's own ids, so that the examples show correct ids rather
// than whatever Encode printed when they were written; a Stream's pieces
// must be whole characters that join to the text.
func TestExamplesIndependent(t *testing.T) {
	g := loadGoldens(t)
	cs := loadStrings(t)
	golden := func(text string, special bool) []int32 {
		t.Helper()
		for i, c := range cs {
			if c.Text == text {
				if special {
					return g.Cases[i].Raw.Special
				}
				return g.Cases[i].Raw.Plain
			}
		}
		t.Fatalf("%q is not in strings.json", text)
		return nil
	}
	vocab, err := hfVocab()
	if err != nil {
		t.Fatal(err)
	}
	end, ok := vocab["<|im_end|>"]
	if !ok {
		t.Fatal("tokenizer.json has no <|im_end|>")
	}
	hello := "Hello, my dog is cute"
	s := "x<|im_end|>y<|im_start|>z"
	want := fmt.Sprintln(golden(hello, false), hello) +
		fmt.Sprintln(golden(s, false)) +
		fmt.Sprint(golden(s, true), " ", end, " true")
	if got := exampleOutput(t, "example_test.go", "Tokenizer_Encode"); got != want {
		t.Errorf("ExampleTokenizer_Encode's Output:\n%s\nwant (goldens.json, tokenizer.json):\n%s", got, want)
	}

	text := "龍龘齉"
	ids := golden(text, false)
	lines := strings.Split(exampleOutput(t, "example_test.go", "Stream"), "\n")
	if len(lines) != len(ids)+1 {
		t.Fatalf("ExampleStream's Output has %d lines, want %d (a line a token and Flush's)", len(lines), len(ids)+1)
	}
	var joined strings.Builder
	held := false
	for i, id := range ids {
		var gotID int32
		var piece string
		if _, err := fmt.Sscanf(lines[i], "%d %q", &gotID, &piece); err != nil || gotID != id {
			t.Fatalf("ExampleStream line %d %q: want id %d (goldens.json) and a quoted piece (%v)", i, lines[i], id, err)
		}
		if !utf8.ValidString(piece) {
			t.Errorf("ExampleStream line %d: piece %q is not whole characters", i, piece)
		}
		held = held || piece == ""
		joined.WriteString(piece)
	}
	if joined.String() != text || !held || lines[len(ids)] != `"" <nil>` {
		t.Errorf("ExampleStream's pieces join to %q (want %q), one held back: %v, Flush line %q", joined.String(), text, held, lines[len(ids)])
	}
}

// exampleOutput returns the "// Output:" text of the example named name in
// file (without its "Example" prefix), as go test compares it.
func exampleOutput(t *testing.T, file, name string) string {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range doc.Examples(af) {
		if ex.Name == name {
			if ex.Output == "" {
				t.Fatalf("example %q in %s has no Output", name, file)
			}
			return strings.TrimSpace(ex.Output)
		}
	}
	t.Fatalf("no example %q in %s", name, file)
	return ""
}
