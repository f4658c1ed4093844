package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memra-ai/memra/engine/convert"
)

func convertCmd() command {
	return command{
		name:    "convert",
		summary: "convert a Hugging Face Qwen3.5 / Qwen3 checkpoint to GGUF",
		usage:   "[--type " + strings.Join(convert.FileTypeNames(), "|") + "] [--name NAME] [--no-mtp] [--progress] HF_DIR -o OUT.gguf",
		run:     runConvert,
	}
}

func runConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("convert", convertCmd().usage, `Converts a Hugging Face checkpoint directory (config.json, *.safetensors
and the tokenizer files; Qwen3.5 hybrid or Qwen3 dense) to one GGUF file that
memra and llama.cpp read: tensor names and shapes as llama.cpp's converter
writes them, the tokenizer and chat template in the metadata, the matrices in
--type (1-D tensors, norms and the convolution stay f32). The file is
written to a temporary file beside it (OUT.gguf.PID-N.tmp) and renamed when
whole; an error or a signal (^C, SIGTERM, SIGHUP, a closed stderr pipe;
exit 130, 143, 129, 141) removes it, so OUT.gguf is never a partial file,
even with two writers at once. An existing OUT.gguf is replaced only if it
is a GGUF file (or empty): -o naming config.json, a shard or any other file
is refused before any work.
`, `  memra convert ~/hf/Qwen3.5-0.8B -o qwen3.5-0.8b.gguf
  memra convert ~/hf/Qwen3.5-9B --type q8_0 --progress -o qwen3.5-9b-q8_0.gguf
  memra info qwen3.5-9b-q8_0.gguf
`, stdout)
	out := fs.String("o", "", "output GGUF path (required)")
	typ := fs.String("type", "bf16", "matrix type: "+typeHelp)
	name := fs.String("name", "", "general.name (default: the checkpoint directory's name)")
	noMTP := fs.Bool("no-mtp", false, "drop multi-token-prediction layers")
	progress := fs.Bool("progress", false, "show a progress bar even when stderr is not a terminal")
	// The checkpoint directory may stand before, between or after the flags.
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(dirs) > 1:
		return fmt.Errorf("%w: unexpected argument %q (convert takes one HF_DIR; the output is -o)", errUsage, dirs[1])
	case len(dirs) == 0 || *out == "":
		return fmt.Errorf("%w: need HF_DIR and -o OUT.gguf", errUsage)
	}
	dir := dirs[0]
	ft, err := convert.ParseFileType(*typ)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// Said as the mistake it is: a file (a .safetensors, a .gguf) given for
	// the directory read as "open x.gguf/config.json: not a directory".
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("checkpoint directory: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("%s is a file: HF_DIR is the checkpoint's directory (config.json, *.safetensors, the tokenizer files)", dir)
	}
	bar := newProgressBar(stderr, *progress, "convert")
	err = writeFile(*out, stderr, func(ctx context.Context) error {
		warn := func(msg string) { fmt.Fprintf(stderr, "memra convert: warning: %s\n", msg) }
		return convert.ConvertFile(ctx, dir, *out, convert.Options{Type: ft, Name: *name, NoMTP: *noMTP, Progress: bar.update, Warn: warn})
	})
	bar.finish(err == nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}
