package tokenizer

import (
	"fmt"
	"slices"
	"testing"

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

func ExampleTokenizer_Encode() {
	tok, err := qwen3()
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, _ := tok.Encode("<|im_start|>user\nHi<|im_end|>", EncodeOptions{ParseSpecial: true})
	fmt.Println(ids)
	text, _ := tok.Decode(ids)
	fmt.Printf("%q\n", text)
	// Output:
	// [151644 872 198 13048 151645]
	// "<|im_start|>user\nHi<|im_end|>"
}
