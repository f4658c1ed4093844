package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/tokenizer"
)

var vocabGGUF = filepath.Join("..", "..", "engine", "testdata", "tokenizer", "qwen3-vocab.gguf")

func TestTokenizeCLI(t *testing.T) {
	cases := []struct {
		args []string
		in   string
		want string
	}{
		// Ids from Qwen's tokenizer.json: Hello=9707, Ġworld=1879,
		// <|im_start|>=151644, "<"=27, "|"=91.
		{[]string{"-m", vocabGGUF}, "Hello world", "9707 1879\n"},
		{[]string{"-m", vocabGGUF, "--special"}, "<|im_start|>", "151644\n"},
		{[]string{"-m", vocabGGUF}, "<|", "27 91\n"},
		{[]string{"-m", vocabGGUF}, "", "\n"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if err := runTokenize(c.args, strings.NewReader(c.in), &out, &errb); err != nil {
			t.Fatalf("%v %q: %v (%s)", c.args, c.in, err, errb.String())
		}
		if out.String() != c.want {
			t.Errorf("%v %q: got %q, want %q", c.args, c.in, out.String(), c.want)
		}
	}
}

func TestDetokenizeCLI(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runDetokenize([]string{"-m", vocabGGUF}, strings.NewReader("151644 9707,1879\n151645\n"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>Hello world<|im_end|>"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	// Round trip through both commands, text with a newline and emoji.
	const text = "Grüße 🎉\nline two"
	var ids bytes.Buffer
	if err := runTokenize([]string{"-m", vocabGGUF}, strings.NewReader(text), &ids, &errb); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runDetokenize([]string{"-m", vocabGGUF}, &ids, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != text {
		t.Errorf("round trip: %q", out.String())
	}
}

// TestDetokenizeNotesUnused: unused (padding) ids decode to no text, and
// detokenize says how many there were on stderr.
func TestDetokenizeNotesUnused(t *testing.T) {
	path := synthTiny(t)
	tok, err := loadTokenizer(path)
	if err != nil {
		t.Fatal(err)
	}
	var pads []string
	for id := range int32(tok.Vocab()) {
		if tok.TokenType(id) == tokenizer.TokenUnused && len(pads) < 2 {
			pads = append(pads, strconv.Itoa(int(id)))
		}
	}
	if len(pads) < 2 {
		t.Fatalf("the synthetic vocabulary has %d unused ids, want 2", len(pads))
	}
	var out, errb bytes.Buffer
	if err := runDetokenize([]string{"-m", path}, strings.NewReader("104 "+strings.Join(pads, " ")+" 105"), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hi" || !strings.Contains(errb.String(), "2 of the ids are the vocabulary's unused (padding) tokens, which have no text") {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if err := runDetokenize([]string{"-m", path}, strings.NewReader("104 "+pads[0]), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "h" || !strings.Contains(errb.String(), "1 of the ids is the vocabulary's unused (padding) token, which has no text") {
		t.Errorf("one unused id: stdout %q, stderr %q", out.String(), errb.String())
	}
}

func TestTokenizeCLIErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runTokenize(nil, strings.NewReader("x"), &out, &errb); !errors.Is(err, errUsage) {
		t.Errorf("no -m: %v", err)
	}
	if err := runTokenize([]string{"-m", "nope.gguf"}, strings.NewReader("x"), &out, &errb); err == nil || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("missing file: %v", err)
	}
	// The input typed as an argument is named, with where it goes; the
	// message used to ask for -m though -m was given.
	err := runTokenize([]string{"-m", vocabGGUF, "Hello world"}, strings.NewReader(""), &out, &errb)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `unexpected argument "Hello world": the text comes on stdin`) {
		t.Errorf("text as an argument: %v", err)
	}
	err = runDetokenize([]string{"-m", vocabGGUF, "1", "2"}, strings.NewReader(""), &out, &errb)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `unexpected argument "1": the ids come on stdin`) {
		t.Errorf("ids as arguments: %v", err)
	}
	err = runDetokenize([]string{"-m", vocabGGUF}, strings.NewReader("1 abc"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), `"abc"`) {
		t.Errorf("bad id: %v", err)
	}
	err = runDetokenize([]string{"-m", vocabGGUF}, strings.NewReader("999999"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "999999") {
		t.Errorf("id out of range: %v", err)
	}
	// Past int32 too: out of the vocabulary, not "not an integer".
	err = runDetokenize([]string{"-m", vocabGGUF}, strings.NewReader("1 99999999999"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "token 2, 99999999999, is outside the vocabulary [0, ") {
		t.Errorf("id past int32: %v", err)
	}
}
