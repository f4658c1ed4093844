package layers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/memra-ai/memra/"

// imports returns the memra packages the non-test Go files of dir (relative
// to the repository root) import.
func imports(t *testing.T, root, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, dir, n), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p := strings.Trim(im.Path.Value, `"`)
			if strings.HasPrefix(p, mod) && !slices.Contains(out, strings.TrimPrefix(p, mod)) {
				out = append(out, strings.TrimPrefix(p, mod))
			}
		}
	}
	return out
}

// TestImportDirection: gguf → engine/model → the backends (engine/cpu,
// engine/gpu over engine/cuda) and the decode layer (engine/sample) →
// tools. Each package may import only what is listed for it (besides its
// own internal packages and kernels); the backends never import each
// other, and the sampler sees a backend only through its Decoder interface.
func TestImportDirection(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	allowed := map[string][]string{
		"gguf":             {},
		"engine/model":     {"gguf"},
		"engine/tokenizer": {"gguf"},
		"engine/cpu":       {"gguf", "engine/model"},
		"engine/sample":    {"engine/model"},
		"engine/cuda":      {},
		"engine/gpu":       {"gguf", "engine/model", "engine/cuda", "engine/sample", "kernels"},
		"engine/convert":   {"gguf", "engine/model", "engine/tokenizer"},
	}
	// Every package of the engine but its internal ones is listed, so a new
	// one has to be placed in the direction before its imports pass.
	ents, err := os.ReadDir(filepath.Join(root, "engine"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if pkg := "engine/" + e.Name(); e.IsDir() && e.Name() != "internal" && e.Name() != "testdata" {
			if _, ok := allowed[pkg]; !ok {
				t.Errorf("%s is not placed in TestImportDirection's list", pkg)
			}
		}
	}
	for pkg, ok := range allowed {
		for _, im := range imports(t, root, pkg) {
			if strings.HasPrefix(im, pkg+"/internal/") || strings.HasPrefix(im, "engine/internal/") || strings.HasPrefix(im, "kernels/internal/") {
				continue
			}
			if !slices.Contains(ok, im) {
				t.Errorf("%s imports %s, against the direction docs/design.md states (allowed: %v)", pkg, im, ok)
			}
		}
	}
}
