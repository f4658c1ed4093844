// Command cudagen writes memra's generated CUDA Go code: the purego driver
// binding (engine/cuda/driver_gen.go) and the typed kernel launchers
// (engine/gpu/launch_gen.go). It runs from go:generate directives:
//
//	cudagen -driver -out driver_gen.go               (in engine/cuda)
//	cudagen -launchers -pkg gpu -out launch_gen.go   (in engine/gpu)
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/memra-ai/memra/gen/cudadrv"
	"github.com/memra-ai/memra/gen/launch"
	"github.com/memra-ai/memra/kernels"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cudagen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("cudagen", flag.ContinueOnError)
	driver := fs.Bool("driver", false, "write the purego CUDA driver binding (package cuda)")
	launchers := fs.Bool("launchers", false, "write the typed kernel launchers from kernels.Spec()")
	pkg := fs.String("pkg", "gpu", "package name of the launcher file")
	out := fs.String("out", "", "output file (required)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil // -h: the usage, which Parse printed, is the answer
	} else if err != nil {
		return err
	}
	// Parsing stops at the first non-flag: any flag after it would be
	// ignored, yet recorded in the header.
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: cudagen takes flags only", fs.Arg(0))
	}
	if *out == "" || *driver == *launchers {
		fs.Usage()
		return fmt.Errorf("need exactly one of -driver or -launchers, and -out")
	}
	pkgSet := false
	fs.Visit(func(f *flag.Flag) { pkgSet = pkgSet || f.Name == "pkg" })
	if *driver && pkgSet {
		return fmt.Errorf("-pkg names the launchers' package; the driver binding is always package cuda")
	}
	// The header records the invocation, so regenerating with the same flags
	// reproduces the file byte for byte.
	command := strings.Join(append([]string{"cudagen"}, args...), " ")
	var src []byte
	var err error
	if *driver {
		src, err = cudadrv.Generate(command, cudadrv.Driver())
	} else {
		src, err = launch.Generate(command, *pkg, kernels.Spec())
	}
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(*out); err == nil && bytes.Equal(old, src) {
		return nil // unchanged: keep the mtime
	}
	return os.WriteFile(*out, src, 0o644)
}
