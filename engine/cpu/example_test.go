package cpu_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
)

// Example loads a GGUF file and generates text on the CPU: gguf.Open maps
// the file, model.Load checks it and views its weights, tokenizer.FromGGUF
// reads its vocabulary, cpu.New allocates the cache, and sample.Generate
// runs the token loop. The file here is the tiny preset of memra synth
// (random weights and a byte-level vocabulary, so the text is noise); any
// qwen35 or qwen3 GGUF goes where path is.
func Example() {
	dir, err := os.MkdirTemp("", "memra-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	err = convert.SynthFile(context.Background(), path, convert.SynthOptions{Preset: "tiny", Type: convert.FileF32, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}

	f, err := gguf.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close() // the model's weights are views of the mapping: close it last
	m, err := model.Load(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	prompt, err := tok.Encode("Hello", tokenizer.EncodeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	const n = 8
	// The last generated token is never fed back: prompt + n − 1 positions.
	b, err := cpu.New(m, cpu.Options{Ctx: len(prompt) + n - 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	opts := sample.Options{Greedy: true, Stop: tok.EOGs()}
	ids, _, err := sample.Generate(b, prompt, n, opts, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := tok.Decode(ids)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("prompt:", prompt)
	fmt.Println("generated:", ids)
	fmt.Printf("text: %q\n", text)
	// Output:
	// prompt: [72 101 108 108 111]
	// generated: [291 345 317 130 87 116 482 105]
	// text: "\x82Wti"
}

// TestExampleIndependent holds Example's Output to what is computed
// without the code it demonstrates: the prompt and the text from the
// byte-level vocabulary's construction (id b is byte b, 256–258 the control
// tokens, the rest padding that decodes to nothing), and the generated ids
// from the float64 reference forward pass (reference_test.go), its argmax
// step by step. Example's own run then checks the backend against them.
func TestExampleIndependent(t *testing.T) {
	want := exampleOutput(t, "example_test.go", "")
	lines := strings.Split(strings.TrimSpace(want), "\n")
	if len(lines) != 3 {
		t.Fatalf("Example's Output has %d lines, want 3:\n%s", len(lines), want)
	}

	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := convert.SynthFile(context.Background(), path, convert.SynthOptions{Preset: "tiny", Type: convert.FileF32, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{'H', 'e', 'l', 'l', 'o'}
	if got := fmt.Sprint("prompt: ", prompt); lines[0] != got {
		t.Errorf("Output's prompt line %q, want %q", lines[0], got)
	}

	const n = 8
	stop := map[int32]bool{256: true, 257: true, 258: true} // <|endoftext|>, <|im_start|>, <|im_end|>
	ref := newRef(t, m)
	var logits []float64
	for _, p := range prompt {
		logits = ref.step(int(p))
	}
	var ids []int32
	var text strings.Builder
	for len(ids) < n {
		best, second := 0, -1
		for i := 1; i < len(logits); i++ {
			if logits[i] > logits[best] {
				best, second = i, best
			} else if second < 0 || logits[i] > logits[second] {
				second = i
			}
		}
		// The backend's f32 logits are within forwardTol of these (relative
		// to their largest magnitude): a closer runner-up could swap.
		if gap := logits[best] - logits[second]; gap < 10*forwardTol*maxAbs(logits) {
			t.Fatalf("step %d: reference argmax %d leads %d by %.3g only: the greedy tokens are not a fair check", len(ids), best, second, gap)
		}
		id := int32(best)
		ids = append(ids, id)
		switch {
		case id < 256:
			text.WriteByte(byte(id))
		case id == 256:
			text.WriteString("<|endoftext|>")
		case id == 257:
			text.WriteString("<|im_start|>")
		case id == 258:
			text.WriteString("<|im_end|>")
		}
		if len(ids) == n || stop[id] {
			break
		}
		logits = ref.step(best)
	}
	if got := fmt.Sprint("generated: ", ids); lines[1] != got {
		t.Errorf("Output's generated line %q, reference %q", lines[1], got)
	}
	if got := fmt.Sprintf("text: %q", text.String()); lines[2] != got {
		t.Errorf("Output's text line %q, from the vocabulary %q", lines[2], got)
	}
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, v, -v)
	}
	return m
}

// exampleOutput returns the "// Output:" text of the example named name
// ("" for the package's Example) in file, as go test compares it.
func exampleOutput(t *testing.T, file, name string) string {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range doc.Examples([]*ast.File{af}...) {
		if ex.Name == name {
			if ex.EmptyOutput || ex.Output == "" {
				t.Fatalf("example %q in %s has no Output", name, file)
			}
			return ex.Output
		}
	}
	t.Fatalf("no example %q in %s", name, file)
	return ""
}
