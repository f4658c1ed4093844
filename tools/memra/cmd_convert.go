package main

import (
	"flag"
	"fmt"
	"io"
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
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	if len(dirs) != 1 || *out == "" {
		return fmt.Errorf("%w: need HF_DIR and -o OUT.gguf", errUsage)
	}
	dir := dirs[0]
	ft, err := convert.ParseFileType(*typ)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	bar := newProgressBar(stderr, *progress, "convert")
	err = convert.ConvertFile(dir, *out, convert.Options{Type: ft, Name: *name, NoMTP: *noMTP, Progress: bar.update})
	bar.finish(err == nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}
