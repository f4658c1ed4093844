package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
)

func tokenizeCmd() command {
	return command{
		name:    "tokenize",
		summary: "encode UTF-8 text from stdin to token ids",
		usage:   "-m FILE.gguf [--special] [--nfc] < text",
		run: func(args []string, stdout, stderr io.Writer) error {
			return runTokenize(args, os.Stdin, stdout, stderr)
		},
	}
}

func detokenizeCmd() command {
	return command{
		name:    "detokenize",
		summary: "decode token ids from stdin to text",
		usage:   "-m FILE.gguf < ids",
		run: func(args []string, stdout, stderr io.Writer) error {
			return runDetokenize(args, os.Stdin, stdout, stderr)
		},
	}
}

// loadTokenizer opens path and builds its tokenizer (the file is closed
// again: the tokenizer copies what it needs).
func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return tokenizer.FromGGUF(f)
}

// stdinOnly is tokenize's and detokenize's usage check: a model and no
// arguments, since what they read (what: "the text comes" or "the ids
// come") is on stdin.
// An argument left is named: it is most often that input, typed where the
// command does not look for it.
func stdinOnly(fs *flag.FlagSet, model, what string) error {
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: unexpected argument %q: %s on stdin (printf '...' | memra %s -m FILE.gguf)", errUsage, fs.Arg(0), what, fs.Name())
	}
	if model == "" {
		return fmt.Errorf("%w: need -m FILE.gguf (%s on stdin)", errUsage, what)
	}
	return nil
}

func runTokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("tokenize", tokenizeCmd().usage, `Reads UTF-8 text from stdin (all of it, newlines included) and prints the
token ids on one line, space-separated. BOS is added when the file's
tokenizer.ggml.add_bos_token asks for it, or, without that key, for a
llama-bpe vocabulary (as llama.cpp; Qwen's add none). Invalid UTF-8 bytes
read as U+FFFD.
`, `  printf 'Hello world' | memra tokenize -m model.gguf
`, stdout)
	model := fs.String("m", "", "GGUF `file` whose tokenizer.* metadata to use (required)")
	special := fs.Bool("special", false, "parse control tokens written in the text (<|im_start|> ...); without it they are plain text")
	nfc := fs.Bool("nfc", false, "normalise the text to Unicode NFC first (Hugging Face's behaviour; llama.cpp does not)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := stdinOnly(fs, *model, "the text comes"); err != nil {
		return err
	}
	tok, err := loadTokenizer(*model)
	if err != nil {
		return err
	}
	text, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	ids, err := tok.Encode(string(text), tokenizer.EncodeOptions{ParseSpecial: *special, NFC: *nfc})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for i, id := range ids {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(strconv.Itoa(int(id)))
	}
	w.WriteByte('\n')
	return w.Flush()
}

func runDetokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("detokenize", detokenizeCmd().usage, `Reads token ids from stdin (separated by spaces, newlines or commas) and
writes the text they decode to, with nothing added. Control tokens are
written as their text.
`, `  printf 'Hello world' | memra tokenize -m m.gguf | memra detokenize -m m.gguf
`, stdout)
	model := fs.String("m", "", "GGUF `file` whose tokenizer.* metadata to use (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := stdinOnly(fs, *model, "the ids come"); err != nil {
		return err
	}
	tok, err := loadTokenizer(*model)
	if err != nil {
		return err
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	var ids []int32
	if strings.TrimSpace(string(in)) != "" { // no ids: no text
		if ids, err = parseIDs(string(in), tok.Vocab()); err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
	}
	text, err := tok.Decode(ids)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		return fmt.Errorf("write stdout: %w", err)
	}
	// Unused (padding) ids have no text: said, as memra run says it, rather
	// than passed over in silence.
	unused := 0
	for _, id := range ids {
		if tok.TokenType(id) == tokenizer.TokenUnused {
			unused++
		}
	}
	if unused > 0 {
		fmt.Fprintf(stderr, "memra detokenize: %d of the ids %s the vocabulary's unused (padding) %s, which %s no text\n",
			unused, plural(unused, "is", "are"), plural(unused, "token", "tokens"), plural(unused, "has", "have"))
	}
	return nil
}
