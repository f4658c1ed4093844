package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
)

func tinyModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	s := modeltest.TinyQwen35()
	s.Type = func(string) gguf.Type { return gguf.TypeBF16 }
	if err := modeltest.Write(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

// greedyRef decodes greedily with the library directly: feed the prompt,
// take argmax, feed it back.
func greedyRef(t *testing.T, path string, prompt []int32, n int) []int32 {
	t.Helper()
	m := modeltest.Open(t, path)
	b, err := cpu.New(m, cpu.Options{Ctx: 64, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var logits []float32
	for _, tk := range prompt {
		if logits, err = b.DecodeStep(tk); err != nil {
			t.Fatal(err)
		}
	}
	var out []int32
	for len(out) < n {
		next := int32(sample.Argmax(logits))
		out = append(out, next)
		if logits, err = b.DecodeStep(next); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestRunPromptTokens(t *testing.T) {
	path := tinyModel(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-m", path, "--prompt-tokens", "5, 17,300", "-n", "6", "--greedy", "--print-tokens", "--threads", "2", "--device", "cpu"},
		&stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr.String())
	}
	want := greedyRef(t, path, []int32{5, 17, 300}, 6)
	var ws []string
	for _, id := range want {
		ws = append(ws, strconv.Itoa(int(id)))
	}
	if got := stdout.String(); got != strings.Join(ws, " ")+"\n" {
		t.Errorf("stdout %q, want %q", got, strings.Join(ws, " ")+"\n")
	}
	if s := stderr.String(); !strings.Contains(s, "prompt 3 tok") || !strings.Contains(s, "generated 6 tok") ||
		!strings.Contains(s, "tok/s") || !strings.Contains(s, "| stop: -n 6\n") || strings.Count(s, "\n") != 1 {
		t.Errorf("summary %q", s)
	}
	// Without --print-tokens the ids are the output only because the file
	// has no tokenizer (this one has no tokenizer metadata): said, once.
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"run", "-m", path, "--prompt-tokens", "5", "-n", "2", "--greedy", "--device", "cpu"}, &stdout, &stderr); code != 0 ||
		strings.Count(stderr.String(), "no text: the file's tokenizer does not load") != 1 {
		t.Errorf("ids without --print-tokens: exit %d, %s", code, stderr.String())
	}
}

func TestRunErrors(t *testing.T) {
	path := tinyModel(t)
	nanPath := filepath.Join(t.TempDir(), "nan.gguf")
	s := modeltest.TinyQwen35()
	s.NaN = map[string]bool{"output_norm.weight": true} // every logit NaN
	if err := modeltest.Write(nanPath, s); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-p", "hi"}, 2, "-m MODEL.gguf is required"},
		{[]string{"run", "-m", path}, 2, "exactly one of -p"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--device", "cuda"}, 1, "--device cuda: no CUDA"},
		{[]string{"run", "-m", path, "-p", "hi", "--device", "tpu"}, 2, "want cpu, cuda or auto"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1,x"}, 2, `token 2, "x", is not a token id`},
		{[]string{"run", "-m", path, "--prompt-tokens", "1,320"}, 2, "token 2, 320, is outside the vocabulary [0, 320)"},
		{[]string{"run", "-m", path, "--prompt-tokens", "99999999999"}, 2, "token 1, 99999999999, is outside the vocabulary"},
		{[]string{"run", "-m", path, "--prompt-tokens", " , "}, 2, "no token ids"},
		// Sampling values the sampler's float32 cannot hold, and penalties
		// past the bounds that keep logits finite.
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--top-p", "1e-50"}, 2, "--top-p 1e-50 is outside float32's range"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--repeat-penalty", "1e39"}, 2, "--repeat-penalty 1e+39 is outside float32's range"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--repeat-penalty", "1e-45"}, 2, "--repeat-penalty 1e-45: want 0 or 1 (off) or a value in [0.01, 100]"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--temp", "Inf"}, 2, "--temp +Inf: must be ≥ 0 and finite"},
		{[]string{"run", "-m", path, "-p", "hi", "--think"}, 2, "--think works with --chat"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--top-p", "2"}, 2, "--top-p 2"},
		// sample.Options.Validate's refusals, said in the flags' names.
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--temp", "-1"}, 2, "memra run: --temp -1: must be ≥ 0 and finite\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--top-k", "-1"}, 2, "memra run: --top-k -1: must be ≥ 0\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--min-p", "2"}, 2, "memra run: --min-p 2: must be in [0, 1]\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--repeat-window", "-1"}, 2, "memra run: --repeat-window -1: must be ≥ 0\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--chat"}, 2, "memra run: --chat needs a text prompt (-p), not --prompt-tokens\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--json", "--print-tokens"}, 2, `memra run: --json already holds the generated ids (its "tokens"); drop --print-tokens` + "\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "-n", "0"}, 2, "memra run: -n 0: must be positive\n"},
		// The synthetic model has no tokenizer metadata.
		{[]string{"run", "-m", path, "-p", "hello"}, 1, "needs the model's tokenizer"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "8", "--ctx", "4", "--greedy"}, 2, "--ctx 4 holds fewer than the 9 tokens this needs"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--ctx", "-1"}, 2, "--ctx -1"},
		{[]string{"run", "-m", path, "-p", ""}, 2, "the prompt is empty"},
		{[]string{"run", "-m", path, "--prompt-tokens", ""}, 2, "the prompt is empty"},
		{[]string{"run", "-m", path, "-p", "a", "--prompt-tokens", "1"}, 2, "exactly one of -p"},
		{[]string{"run", "-m", filepath.Dir(path), "--prompt-tokens", "1"}, 1, "is a directory"},
		{[]string{"help", "bogus"}, 2, `unknown command "bogus"`},
		// The usual stray arguments come with their fix.
		{[]string{"run", "model.gguf", "-p", "hi"}, 2, `unexpected argument "model.gguf" (the model is given with -m: -m model.gguf)`},
		{[]string{"run", "-m", path, "-p", "hello", "world", "-n", "2"}, 2, `unexpected argument "world" (a prompt of several words is one argument: quote it, -p "hello world")`},
		{[]string{"run", "-m", path, "-p", "hello", "big", "world", "-n", "2"}, 2, `unexpected argument "big" (a prompt of several words is one argument: quote it, -p "hello big world")`},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "x"}, 2, "unexpected argument \"x\"\n"},
		// A switch given its value after a space, as other CLIs take it:
		// said as that, not as a prompt of several words to quote.
		{[]string{"run", "-m", path, "-p", "hi", "--greedy", "false", "-n", "2"}, 2, `unexpected argument "false" (a switch takes its value after "=": --greedy=false)` + "\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--json", "true"}, 2, `unexpected argument "true" (a switch takes its value after "=": --json=true)` + "\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--threads", "-2"}, 2, "--threads -2"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--threads", "100000"}, 2, "want 0 (all cores) to 1024"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--seed", "-5"}, 2, "--seed -5"},
		// The bounds themselves: -1 and 1024 are allowed (TestRunFlagBounds).
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--seed", "-2"}, 2, "--seed -2: want -1 (pick one) or a seed of 0 or more"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--threads", "1025"}, 2, "--threads 1025: want 0 (all cores) to 1024"},
		// -Inf is the sampler's to refuse (not finite); -1e39 is a finite
		// value float32 cannot hold.
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--temp", "-Inf"}, 2, "memra run: --temp -Inf: must be ≥ 0 and finite\n"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1", "--min-p", "-1e39"}, 2, "--min-p -1e+39 is outside float32's range"},
		// Counts past the model's context (256 in modeltest), and ones whose
		// sum would overflow: a usage error, not an allocation that kills.
		{[]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "100000000"}, 2, "-n: 100000000 positions are past the model's context length 256 (qwen35.context_length)"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "9223372036854775807"}, 2, "past the model's context length 256"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1,2", "--ctx", "2000000000"}, 2, "--ctx: 2000000000 positions are past"},
		{[]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "256"}, 2, "the prompt and -n: 257 positions are past"},
		// Weights that are not finite: an error, not a stream of token 0.
		{[]string{"run", "-m", nanPath, "--prompt-tokens", "1,2", "--greedy", "--device", "cpu"}, 1, "every logit is NaN"},
		{[]string{"run", "-m", nanPath, "--prompt-tokens", "1,2", "--top-k", "0", "--device", "cpu"}, 1, "every logit is NaN"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d stderr %q; want exit %d mentioning %q", c.args[1:], code, stderr.String(), c.code, c.want)
		}
	}
}

func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Asked for with "memra help run", the help goes to stdout (to page it).
	if code := run([]string{"help", "run"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 || !strings.Contains(stdout.String(), "Examples:") {
		t.Errorf("memra help run: exit %d, stdout %d bytes, stderr %q", code, stdout.Len(), stderr.String())
	}
	// memra run -h is the same request: stdout too.
	stdout.Reset()
	if code := run([]string{"run", "-h"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	help := stdout.String()
	// The environment run reads (and refuses bad values of, before the GPU
	// is looked for) is named in its help too.
	for _, w := range []string{"Examples:", "memra run -m", "--prompt-tokens", "-top-k", "-seed",
		"MEMRA_KV_FP8=1", "MEMRA_FULL_LOGITS=1", "MEMRA_PDL=0", "MEMRA_ATTN_MMA=0|1|cap"} {
		if !strings.Contains(help, w) {
			t.Errorf("help lacks %q:\n%s", w, help)
		}
	}
}

// TestRunMatchesTransformers runs the CLI on the committed qwen35-tiny
// fixture with its prompt ids: the greedy ids must be transformers' 40
// tokens exactly. Then a chat prompt in text mode must stream text and stop
// without printing the end-of-turn token.
func TestRunMatchesTransformers(t *testing.T) {
	dir := filepath.Join("..", "..", "engine", "testdata", "fixtures")
	raw, err := os.ReadFile(filepath.Join(dir, "qwen35-tiny.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct{ Prompt, Tokens []int32 }
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "qwen35-tiny-f32.gguf")
	var ids []string
	for _, id := range fx.Prompt {
		ids = append(ids, strconv.Itoa(int(id)))
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-m", model, "--prompt-tokens", strings.Join(ids, ","), "-n", strconv.Itoa(len(fx.Tokens)),
		"--greedy", "--print-tokens", "--device", "cpu"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var want []string
	for _, id := range fx.Tokens {
		want = append(want, strconv.Itoa(int(id)))
	}
	if got := strings.TrimSpace(stdout.String()); got != strings.Join(want, " ") {
		t.Fatalf("greedy ids\n got %s\nwant %s (transformers)", got, strings.Join(want, " "))
	}

	stdout.Reset()
	stderr.Reset()
	code = run([]string{"run", "-m", model, "-p", "The quick brown fox", "-n", "12", "--chat", "--greedy", "--device", "cpu"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("chat: exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stdout.String(), "<|im_end|>") {
		t.Errorf("chat output prints the end-of-turn token: %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "generated") || !strings.Contains(stderr.String(), "tok/s") || !strings.Contains(stderr.String(), "| stop: ") {
		t.Errorf("no summary line: %q", stderr.String())
	}
}

// TestStopReason: the summary's stop reason names the end-of-generation
// token a generation ended at, says -n otherwise, and nothing on an error.
func TestStopReason(t *testing.T) {
	tok, err := loadTokenizer(filepath.Join("..", "..", "engine", "testdata", "fixtures", "qwen35-tiny-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	eogs := tok.EOGs()
	if len(eogs) == 0 {
		t.Fatal("the fixture's tokenizer has no end-of-generation token")
	}
	eog := eogs[0]
	want := fmt.Sprintf(" | stop: end-of-generation token %d %q", eog, tok.TokenText(eog))
	if got := stopReason(nil, tok, eogs, eog, 5, 12); got != want {
		t.Errorf("stopped at %d: %q, want %q", eog, got, want)
	}
	if got := stopReason(nil, tok, eogs, eog, 12, 12); got != want {
		t.Errorf("the n-th token an end-of-generation one: %q, want %q", got, want)
	}
	if got := stopReason(nil, tok, eogs, eog, 1, 12); got != want {
		t.Errorf("the first token an end-of-generation one: %q, want %q", got, want)
	}
	if got := stopReason(nil, nil, []int32{eog}, eog, 1, 12); got != fmt.Sprintf(" | stop: end-of-generation token %d (the file's eos_token_id)", eog) {
		t.Errorf("no tokenizer, the first token the metadata's eos: %q", got)
	}
	if got := stopReason(nil, tok, eogs, 5, 12, 12); got != " | stop: -n 12" {
		t.Errorf("ran to -n: %q", got)
	}
	if got := stopReason(nil, nil, nil, eog, 12, 12); got != " | stop: -n 12" {
		t.Errorf("no tokenizer and no stop ids: %q", got)
	}
	// No tokenizer, but the metadata's eos id (MetadataEOGs) stopped it.
	if got := stopReason(nil, nil, []int32{eog}, eog, 5, 12); got != fmt.Sprintf(" | stop: end-of-generation token %d (the file's eos_token_id)", eog) {
		t.Errorf("no tokenizer, stopped at the metadata's eos: %q", got)
	}
	if got := stopReason(errors.New("context full"), tok, eogs, eog, 3, 12); got != "" {
		t.Errorf("failed: %q", got)
	}
}

// Every command reports a flag it does not know once, as a usage error
// (exit 2) that points at its help, and its help (memra help NAME, on
// stdout) has the synopsis, what it does, the flags and examples.
func TestCommandFlagsAndHelp(t *testing.T) {
	for _, c := range commands() {
		var stdout, stderr bytes.Buffer
		code := run([]string{c.name, "--bogus"}, &stdout, &stderr)
		const msg = "flag provided but not defined: -bogus"
		if code != 2 || strings.Count(stderr.String(), msg) != 1 || !strings.Contains(stderr.String(), `"memra help `+c.name+`"`) {
			t.Errorf("%s --bogus: exit %d stderr %q; want exit 2, %q once and a pointer to the help", c.name, code, stderr.String(), msg)
		}
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"help", c.name}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Errorf("help %s: exit %d stderr %q", c.name, code, stderr.String())
		}
		for _, w := range []string{"Usage: memra " + c.name + " " + c.usage, "Flags:\n", "Examples:\n  ", "memra " + c.name + " "} {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("help %s lacks %q:\n%s", c.name, w, stdout.String())
			}
		}
	}
}

// synthTiny writes memra synth's tiny preset (a generated byte-level
// tokenizer of fewer tokens than the model's 512) and returns its path.
func synthTiny(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synth-tiny.gguf")
	if err := runSynth([]string{"--preset", "tiny", "--vocab", "none", "-o", path}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyGGUF writes a copy of the GGUF at path whose metadata edit returns
// from the original's (a tokenizer or template that does not match the
// model), under name in a temporary directory.
func copyGGUF(t *testing.T, path, name string, edit func(f *gguf.File, kvs []gguf.KV) []gguf.KV) string {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dst := filepath.Join(t.TempDir(), name)
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter(out, 3)
	for _, kv := range edit(f, slices.Clone(f.KVs)) {
		w.SetKV(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		data, err := f.Data(ti)
		if err != nil {
			t.Fatal(err)
		}
		w.AddTensorBytes(ti.Name, ti.Type, ti.Shape, data)
	}
	if err := errors.Join(w.Write(), out.Close()); err != nil {
		t.Fatal(err)
	}
	return dst
}

// withTokens copies the GGUF at path with its token list cut or grown to n
// (a tokenizer that does not match the model's vocabulary).
func withTokens(t *testing.T, path string, n int) string {
	t.Helper()
	return copyGGUF(t, path, fmt.Sprintf("vocab-%d.gguf", n), func(f *gguf.File, kvs []gguf.KV) []gguf.KV {
		for i, kv := range kvs {
			switch kv.Key {
			case "tokenizer.ggml.tokens":
				toks, _ := f.Strings(kv.Key)
				for len(toks) < n {
					toks = append(toks, fmt.Sprintf("<extra_%d>", len(toks)))
				}
				kvs[i].Value = gguf.StringsValue(toks[:n])
			case "tokenizer.ggml.token_type":
				types := make([]int32, n)
				for j := range types {
					types[j] = 1
					if j < kv.Value.Len() {
						x, _ := kv.Value.Index(j).Int64()
						types[j] = int32(x)
					}
				}
				kvs[i].Value = gguf.Int32sValue(types)
			}
		}
		return kvs
	})
}

// withTemplate copies the GGUF at path with tokenizer.chat_template set.
func withTemplate(t *testing.T, path, name, tmpl string) string {
	t.Helper()
	return copyGGUF(t, path, name, func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		kvs = slices.DeleteFunc(kvs, func(kv gguf.KV) bool { return kv.Key == "tokenizer.chat_template" })
		return append(kvs, gguf.KV{Key: "tokenizer.chat_template", Value: gguf.StringValue(tmpl)})
	})
}

// TestRenderChat: the file's template renders in the child process to what
// the tokenizer renders in this one; a template that recurses without end,
// loops past the time limit or writes more than the cap is an error that
// says so, where in-process rendering would end or hang the process.
func TestRenderChat(t *testing.T) {
	base := synthTiny(t)
	good := withTemplate(t, base, "good.gguf",
		"{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"+
			"{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}{% endif %}")
	tok, err := loadTokenizer(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, think := range []bool{false, true} {
		want, err := tok.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: "hi there"}}, true, think)
		if err != nil {
			t.Fatal(err)
		}
		got, err := renderChat(good, "hi there", think, chatTimeout)
		if err != nil || got != want {
			t.Errorf("think %v: %q, %v; want %q", think, got, err, want)
		}
	}
	// Only the loop waits for the limit, so it alone gets a short one: the
	// others end by themselves and take the CLI's limit, since recursing to
	// 64 MB of stack took over 1s on a loaded 2-core machine.
	for _, c := range []struct {
		name, tmpl, want string
		limit            time.Duration
	}{
		{"recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursed past 64 MB of stack", chatTimeout},
		// 10^10 empty iterations, 10^5 a list (the engine sizes a range's list up front).
		{"loop", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "rendering took over 1s", time.Second},
		{"size", `{{ "x" * 20000000 }}`, "passed 16 MB", chatTimeout},
		// 1.5 GB in one string: the child's memory cap ends it before its
		// pages are touched, where it filled the machine's memory at ~1.6
		// GB/s until the time limit.
		{"memory", `{{ "x" * 1500000000 }}`, "took over 1024 MB of memory", chatTimeout},
		// The child's one line, not "failed without a word".
		{"error", "{{ messages[0].content | nosuchfilter }}", `error.gguf: chat template: tokenizer: render tokenizer.chat_template: unknown filter "nosuchfilter"`, chatTimeout},
	} {
		path := withTemplate(t, base, c.name+".gguf", c.tmpl)
		_, err := renderChat(path, "hi", false, c.limit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
	// The child alone, as where its parent died: its own limit ends it.
	loop := withTemplate(t, base, "alone.gguf", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], chatCmdName, "false", loop, "300ms")
	child.Stdin = strings.NewReader("hi")
	if out, err := child.CombinedOutput(); ctx.Err() != nil || !strings.Contains(string(out), "its own limit of 300ms") {
		t.Errorf("the renderer alone: %v (%v), %q; want it to end by its own limit", err, ctx.Err(), out)
	}
	// Through memra run: the same error, exit 1, nothing generated.
	var stdout, stderr bytes.Buffer
	path := withTemplate(t, base, "run.gguf", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
	if code := run([]string{"run", "-m", path, "--chat", "-p", "hi", "--device", "cpu"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "recursed past") {
		t.Errorf("run --chat: exit %d, stderr %q", code, stderr.String())
	}
}

// TestRunChatTokens: with --chat the template places the start-of-text
// token, so a file that also asks for one (add_bos_token) gets one, not
// two, as Hugging Face's apply_chat_template does; a template that renders
// nothing is the file's fault, said naming it (exit 1), not a usage error.
func TestRunChatTokens(t *testing.T) {
	base := synthTiny(t)
	bos := copyGGUF(t, base, "bos.gguf", func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		kvs = slices.DeleteFunc(kvs, func(kv gguf.KV) bool {
			return kv.Key == "tokenizer.chat_template" || kv.Key == "tokenizer.ggml.add_bos_token"
		})
		return append(kvs, gguf.KV{Key: "tokenizer.ggml.add_bos_token", Value: gguf.BoolValue(true)},
			gguf.KV{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32Value(256)},
			gguf.KV{Key: "tokenizer.chat_template", Value: gguf.StringValue("{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}")})
	})
	var stderr bytes.Buffer
	if code := run([]string{"run", "-m", bos, "--chat", "-p", "hi", "-n", "1", "--greedy", "--device", "cpu"}, io.Discard, &stderr); code != 0 ||
		!strings.Contains(stderr.String(), "prompt 3 tok") { // <|endoftext|> h i
		t.Errorf("--chat with add_bos_token: exit %d, %s", code, stderr.String())
	}
	// Without a template, the built-in ChatML writes no start-of-text token:
	// add_bos_token adds it.
	chatml := copyGGUF(t, bos, "chatml.gguf", func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		return slices.DeleteFunc(kvs, func(kv gguf.KV) bool { return kv.Key == "tokenizer.chat_template" })
	})
	tok, err := loadTokenizer(chatml)
	if err != nil {
		t.Fatal(err)
	}
	text, err := tok.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: "hi"}}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode(text, tokenizer.EncodeOptions{ParseSpecial: true, AddBOS: tokenizer.BOSNever})
	if err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"run", "-m", chatml, "--chat", "-p", "hi", "-n", "1", "--greedy", "--device", "cpu"}, io.Discard, &stderr); code != 0 ||
		!strings.Contains(stderr.String(), fmt.Sprintf("prompt %d tok", len(ids)+1)) {
		t.Errorf("--chat with the built-in ChatML and add_bos_token: exit %d, %s (want %d + 1 tokens)", code, stderr.String(), len(ids))
	}
	stderr.Reset()
	empty := withTemplate(t, base, "empty.gguf", `{{ "" }}`)
	if code := run([]string{"run", "-m", empty, "--chat", "-p", "hi", "--device", "cpu"}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), empty+": its chat template rendered no text") {
		t.Errorf("empty template: exit %d, %s", code, stderr.String())
	}
}

// TestRunTokenizerVocab: generated ids past the tokenizer's tokens (a model
// vocabulary padded past it) have no text, and the run says how many; a
// tokenizer of more tokens than the model's vocabulary belongs to another
// model and is refused before generating.
func TestRunTokenizerVocab(t *testing.T) {
	path := synthTiny(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "-m", withTokens(t, path, 300), "-p", "hello", "-n", "32", "--greedy", "--device", "cpu"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`memra: [1-9][0-9]* generated ids are past the tokenizer's 300 tokens \(the model's vocabulary is 512\)`).MatchString(stderr.String()) {
		t.Errorf("no note of the ids without text:\n%s", stderr.String())
	}
	// One such id is noted too: a run that ends at the first one.
	var ids bytes.Buffer
	short := withTokens(t, path, 300)
	if code := run([]string{"run", "-m", short, "-p", "hello", "-n", "32", "--greedy", "--device", "cpu", "--print-tokens"}, &ids, io.Discard); code != 0 {
		t.Fatalf("--print-tokens: exit %d", code)
	}
	k := slices.IndexFunc(strings.Fields(ids.String()), func(f string) bool { id, _ := strconv.Atoi(f); return id >= 300 }) + 1
	stderr.Reset()
	if code := run([]string{"run", "-m", short, "-p", "hello", "-n", strconv.Itoa(k), "--greedy", "--device", "cpu"}, io.Discard, &stderr); code != 0 ||
		!strings.Contains(stderr.String(), "memra: 1 generated id is past the tokenizer's 300 tokens (the model's vocabulary is 512) and has no text") {
		t.Errorf("-n %d: exit %d, stderr %q; want the note of 1 id", k, code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := run([]string{"run", "-m", withTokens(t, path, 600), "--prompt-tokens", "1,2", "-n", "4", "--device", "cpu"}, &stdout, &stderr)
	if want := "the tokenizer's 600 tokens do not fit the model's vocabulary of 512"; code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), want)
	}
}

// TestRunOneToken: -n 1 times no decode step (the token comes from the
// prompt's last one), so the summary gives no generation rate rather than 0.
func TestRunOneToken(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "-m", tinyModel(t), "--prompt-tokens", "1,2", "-n", "1", "--greedy", "--device", "cpu"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "| generated 1 tok |") || strings.Contains(s, "0.00 tok/s |") {
		t.Errorf("summary %q", s)
	}
	// Two tokens time one decode step: the rate is given, in the summary
	// and in --json.
	stderr.Reset()
	var js bytes.Buffer
	if code := run([]string{"run", "-m", tinyModel(t), "--prompt-tokens", "1,2", "-n", "2", "--greedy", "--device", "cpu", "--json"}, &js, &stderr); code != 0 {
		t.Fatalf("-n 2: exit %d: %s", code, stderr.String())
	}
	var r runResult
	if err := json.Unmarshal(js.Bytes(), &r); err != nil || r.GenTokPerSec == nil || !regexp.MustCompile(`\| generated 2 tok, [0-9]+\.[0-9]{2} tok/s \|`).MatchString(stderr.String()) {
		t.Errorf("-n 2: %s (%v), stderr %q; want the rate in both", js.String(), err, stderr.String())
	}
}

// TestRunStopsAtFirstToken: a generation whose first token is an
// end-of-generation one stops there: one token, stop "eog" naming it, an
// empty text (not an absent one: the file has a tokenizer) and no
// generation rate. The eos is set to the token a first run generates first.
func TestRunStopsAtFirstToken(t *testing.T) {
	base := synthTiny(t)
	args := func(path string, more ...string) []string {
		return append([]string{"run", "-m", path, "-p", "hello", "-n", "8", "--greedy", "--device", "cpu", "--threads", "1"}, more...)
	}
	var ids bytes.Buffer
	if code := run(args(base, "--print-tokens"), &ids, io.Discard); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	first, _ := strconv.Atoi(strings.Fields(ids.String())[0])
	eos := copyGGUF(t, base, "eos.gguf", func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		for i, kv := range kvs {
			if kv.Key == "tokenizer.ggml.eos_token_id" {
				kvs[i].Value = gguf.Uint32Value(uint32(first))
			}
		}
		return kvs
	})
	var js, stderr bytes.Buffer
	if code := run(args(eos, "--json"), &js, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var r runResult
	if err := json.Unmarshal(js.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Stop != "eog" || r.StopToken == nil || *r.StopToken != int32(first) || !slices.Equal(r.Tokens, []int32{int32(first)}) ||
		r.Text == nil || *r.Text != "" || r.GenTokPerSec != nil {
		t.Errorf("%s", js.String())
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("| generated 1 tok | cpu, 1 thread, greedy | stop: end-of-generation token %d ", first)) {
		t.Errorf("summary %q", stderr.String())
	}
}

// TestRunFillsContext: a run whose prompt and -n need exactly the model's
// context length (256 in modeltest) works with the default --ctx. The last
// token generated is never fed back, so it needs prompt + n − 1 positions;
// the default was prompt + n, one past the limit the check had accepted.
func TestRunFillsContext(t *testing.T) {
	path := tinyModel(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "255", "--greedy", "--print-tokens", "--device", "cpu", "--threads", "1"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := len(strings.Fields(stdout.String())); n != 255 {
		t.Errorf("%d tokens printed, want 255", n)
	}
}

// TestRunPromptTokensAndIgnoredFlags: --prompt-tokens takes tokenize's
// space-separated output as well as commas, and sampling flags that greedy
// decoding ignores are named on stderr rather than dropped in silence.
func TestRunPromptTokensAndIgnoredFlags(t *testing.T) {
	path := tinyModel(t)
	var outs [2]string
	for i, ids := range []string{"1,2,3", "1 2\t3\n"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"run", "-m", path, "--prompt-tokens", ids, "-n", "4", "--greedy", "--top-k", "5", "--seed", "3", "--print-tokens", "--device", "cpu"}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", ids, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "greedy decoding ignores --top-k, --seed") {
			t.Errorf("%q: stderr does not name the ignored flags: %s", ids, stderr.String())
		}
		outs[i] = stdout.String()
	}
	if outs[0] != outs[1] {
		t.Errorf("commas gave %q, spaces %q", outs[0], outs[1])
	}
	// A window without a penalty does nothing, greedy or not: said, and
	// not said when a penalty uses it.
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--repeat-window", "8"}, true},
		{[]string{"--repeat-window", "8", "--repeat-penalty", "1", "--greedy"}, true},
		{[]string{"--repeat-window", "8", "--repeat-penalty", "1.1"}, false},
	} {
		var stderr bytes.Buffer
		args := append([]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "2", "--print-tokens", "--device", "cpu"}, c.args...)
		if code := run(args, io.Discard, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "--repeat-window does nothing without a --repeat-penalty"); got != c.warn {
			t.Errorf("%q: warned %v, want %v: %s", c.args, got, c.warn, stderr.String())
		}
	}
}

// TestRunNotesTopPZero: --top-p 0 means "all" here (Options.TopP), where
// llama.cpp and transformers keep only the most likely token; a sampled run
// given it says so on stderr, and a run with --top-p 1 or without the flag
// does not.
func TestRunNotesTopPZero(t *testing.T) {
	path := tinyModel(t)
	const note = "--top-p 0 keeps every token"
	for _, c := range []struct {
		flags []string
		note  bool
	}{
		{[]string{"--top-p", "0"}, true},
		{[]string{"--top-p", "1"}, false},
		{nil, false},
		{[]string{"--top-p", "0", "--greedy"}, false}, // greedy names it among the flags it ignores
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "2", "--seed", "1", "--print-tokens", "--device", "cpu", "--threads", "1"}, c.flags...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.flags, code, stderr.String())
		}
		if got := strings.Contains(stderr.String(), note); got != c.note {
			t.Errorf("%v: note %v, want %v; stderr: %s", c.flags, got, c.note, stderr.String())
		}
	}
}

// TestRunNotesUnusedTokens: generated ids that are the vocabulary's unused
// (padding) tokens print no text; the run says how many there were instead
// of printing an empty line in silence. The count is checked against the
// same run's ids looked up in the tokenizer.
func TestRunNotesUnusedTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tn.gguf")
	if err := convert.SynthFile(t.Context(), path, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "-m", path, "-p", "hello", "-n", "16", "--greedy", "--device", "cpu"}
	var ids, stderr bytes.Buffer
	if code := run(append(args, "--print-tokens"), &ids, io.Discard); code != 0 {
		t.Fatalf("--print-tokens: exit %d", code)
	}
	tok, err := loadTokenizer(path)
	if err != nil {
		t.Fatal(err)
	}
	unused := 0
	for _, f := range strings.Fields(ids.String()) {
		id, _ := strconv.Atoi(f)
		if tok.TokenType(int32(id)) == tokenizer.TokenUnused {
			unused++
		}
	}
	if unused == 0 { // 6 of 16 when written; deterministic (seed 1, greedy)
		t.Fatalf("the run picked no unused token (%s): the test no longer reaches the note; change the prompt", ids.String())
	}
	if code := run(args, io.Discard, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := fmt.Sprintf("memra: %d of the 16 generated ids are the vocabulary's unused (padding) tokens, which have no text (random weights, as memra synth writes, pick them; a trained model seldom does); --print-tokens shows them\n", unused); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	// One unused id is noted too: a run that ends at the first one.
	k := slices.IndexFunc(strings.Fields(ids.String()), func(f string) bool {
		id, _ := strconv.Atoi(f)
		return tok.TokenType(int32(id)) == tokenizer.TokenUnused
	}) + 1
	stderr.Reset()
	if code := run([]string{"run", "-m", path, "-p", "hello", "-n", strconv.Itoa(k), "--greedy", "--device", "cpu"}, io.Discard, &stderr); code != 0 {
		t.Fatalf("-n %d: exit %d: %s", k, code, stderr.String())
	}
	if want := fmt.Sprintf("memra: 1 of the %d generated ids is the vocabulary's unused (padding) token, which has no text", k); !strings.Contains(stderr.String(), want) {
		t.Errorf("-n %d: stderr lacks %q:\n%s", k, want, stderr.String())
	}
}

// TestRunStopsAtMetadataEOS: a file whose tokenizer does not load (here
// tokenizer.ggml.model "llama") still stops at its eos_token_id with
// --prompt-tokens; before, it ran on to -n. The eos is set to the token
// the run generates third, found by a first run.
func TestRunStopsAtMetadataEOS(t *testing.T) {
	base := synthTiny(t)
	args := func(path string) []string {
		return []string{"run", "-m", path, "--prompt-tokens", "1,2,3", "-n", "8", "--greedy", "--print-tokens", "--device", "cpu"}
	}
	var first bytes.Buffer
	if code := run(args(base), &first, io.Discard); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	ids := strings.Fields(first.String())
	third, _ := strconv.Atoi(ids[2])
	if slices.Contains(ids[:2], ids[2]) {
		t.Fatalf("the third token %s also comes earlier (%v): pick another", ids[2], ids)
	}
	llama := copyGGUF(t, base, "llama.gguf", func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		for i, kv := range kvs {
			switch kv.Key {
			case "tokenizer.ggml.model":
				kvs[i].Value = gguf.StringValue("llama")
			case "tokenizer.ggml.eos_token_id":
				kvs[i].Value = gguf.Uint32Value(uint32(third))
			}
		}
		return kvs
	})
	var out, stderr bytes.Buffer
	if code := run(args(llama), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := strings.Fields(out.String()); !slices.Equal(got, ids[:3]) {
		t.Errorf("tokens %v, want %v (stopping at the eos %d)", got, ids[:3], third)
	}
	if want := fmt.Sprintf("stop: end-of-generation token %d (the file's eos_token_id)", third); !strings.Contains(stderr.String(), want) {
		t.Errorf("summary lacks %q: %s", want, stderr.String())
	}
}

// TestRunBadGPUEnv: a MEMRA_KV_FP8, MEMRA_FULL_LOGITS or MEMRA_PDL value other than 0 or 1,
// or a MEMRA_ATTN_MMA other than 0, 1 or cap, is a usage error before any
// backend opens, under --device auto too, where it read as "no GPU" and
// fell back to the CPU (MEMRA_PDL=off left PDL on; gpu.Load's refusal of
// MEMRA_ATTN_MMA became a CPU run); --device cpu ignores the variables.
func TestRunBadGPUEnv(t *testing.T) {
	path := tinyModel(t)
	for _, v := range []string{"MEMRA_KV_FP8", "MEMRA_FULL_LOGITS", "MEMRA_PDL", "MEMRA_L2WINDOW", "MEMRA_ATTN_MMA"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "yes")
			for _, dev := range []string{"auto", "cuda"} {
				var stderr bytes.Buffer
				code := run([]string{"run", "-m", path, "--prompt-tokens", "1", "-n", "1", "--device", dev}, io.Discard, &stderr)
				if code != 2 || !strings.Contains(stderr.String(), v+`="yes"`) {
					t.Errorf("--device %s: exit %d: %s", dev, code, stderr.String())
				}
			}
			if code := run([]string{"run", "-m", path, "--prompt-tokens", "1", "-n", "1", "--device", "cpu"}, io.Discard, io.Discard); code != 0 {
				t.Errorf("--device cpu: exit %d", code)
			}
		})
	}
}

// TestRunJSON: --json prints one JSON object whose ids are the run's own
// (--print-tokens of the same greedy run), whose text is what the streaming
// run prints, and which says why it stopped: "n", or "eog" with the token
// when the file's end-of-generation token (here made the run's third) ends it.
func TestRunJSON(t *testing.T) {
	base := synthTiny(t)
	args := func(path string, more ...string) []string {
		return append([]string{"run", "-m", path, "-p", "hello", "-n", "8", "--greedy", "--device", "cpu"}, more...)
	}
	var ids, text, js bytes.Buffer
	for _, c := range []struct {
		out  *bytes.Buffer
		more []string
	}{{&ids, []string{"--print-tokens"}}, {&text, nil}, {&js, []string{"--json"}}} {
		if code := run(args(base, c.more...), c.out, io.Discard); code != 0 {
			t.Fatalf("%v: exit %d", c.more, code)
		}
	}
	var r runResult
	if err := json.Unmarshal(js.Bytes(), &r); err != nil || strings.Count(js.String(), "\n") != 1 {
		t.Fatalf("--json output %q: %v", js.String(), err)
	}
	var got []string
	for _, id := range r.Tokens {
		got = append(got, strconv.Itoa(int(id)))
	}
	if strings.Join(got, " ")+"\n" != ids.String() {
		t.Errorf("tokens %v, --print-tokens %q", r.Tokens, ids.String())
	}
	if r.Text == nil || *r.Text+"\n" != text.String() {
		t.Errorf("text %v, streamed %q", r.Text, text.String())
	}
	// Windows's monotonic clock advances in ticks of 0.5-15.6 ms, so there
	// the tiny model's 5-token prompt can take no time at all, which the
	// rate reports as 0 ("nothing was timed"); elsewhere it must be timed.
	timed := r.PromptTokPerSec > 0 || (runtime.GOOS == "windows" && r.PromptTokPerSec == 0)
	if !slices.Equal(r.PromptTokens, []int32{104, 101, 108, 108, 111}) || !r.Greedy || r.Seed != nil ||
		r.Stop != "n" || r.StopToken != nil || r.GenTokPerSec == nil || !timed || r.Backend == "" {
		t.Errorf("result %+v", r)
	}

	third := r.Tokens[2]
	if slices.Contains(r.Tokens[:2], third) {
		t.Fatalf("the third token %d also comes earlier (%v): pick another", third, r.Tokens)
	}
	eos := copyGGUF(t, base, "eos.gguf", func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		for i, kv := range kvs {
			if kv.Key == "tokenizer.ggml.eos_token_id" {
				kvs[i].Value = gguf.Uint32Value(uint32(third))
			}
		}
		return kvs
	})
	js.Reset()
	if code := run(args(eos, "--json"), &js, io.Discard); code != 0 {
		t.Fatalf("eos run: exit %d", code)
	}
	var e runResult
	if err := json.Unmarshal(js.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if e.Stop != "eog" || e.StopToken == nil || *e.StopToken != third || !slices.Equal(e.Tokens, r.Tokens[:3]) {
		t.Errorf("eos run: %+v", e)
	}
	if code := run(args(base, "--json", "--print-tokens"), io.Discard, io.Discard); code != 2 {
		t.Errorf("--json with --print-tokens: exit %d, want 2", code)
	}
	// A sampled run names its seed; one memra picks is below 2^53, exact as
	// a JSON number (a double).
	for _, seed := range []string{"7", "-1"} {
		js.Reset()
		if code := run([]string{"run", "-m", base, "-p", "hello", "-n", "4", "--seed", seed, "--device", "cpu", "--json"}, &js, io.Discard); code != 0 {
			t.Fatalf("--seed %s: exit %d", seed, code)
		}
		var sr runResult
		if err := json.Unmarshal(js.Bytes(), &sr); err != nil || sr.Greedy || sr.Seed == nil || (seed == "7" && *sr.Seed != 7) || *sr.Seed >= 1<<53 {
			t.Errorf("--seed %s: %s (%v)", seed, js.String(), err)
		}
	}
	// Without a tokenizer: no "text", and stderr says why.
	var stderr bytes.Buffer
	js.Reset()
	if code := run([]string{"run", "-m", tinyModel(t), "--prompt-tokens", "5", "-n", "2", "--greedy", "--device", "cpu", "--json"}, &js, &stderr); code != 0 ||
		strings.Contains(js.String(), `"text"`) || !strings.Contains(stderr.String(), `so the JSON has no "text"`) {
		t.Errorf("no tokenizer: exit %d, %s, stderr %s", code, js.String(), stderr.String())
	}
}

// TestRunPromptPastContext: a text prompt longer than the model's context
// is a usage error naming the limit, found while encoding (the encoder
// stops past the limit: tokenizer.EncodeOptions.MaxTokens) rather than
// after encoding all of it.
func TestRunPromptPastContext(t *testing.T) {
	path := synthTiny(t) // context length 4096, a byte-level vocabulary: one token a byte
	var stderr bytes.Buffer
	code := run([]string{"run", "-m", path, "-p", strings.Repeat("ab", 5000), "-n", "1", "--device", "cpu"}, io.Discard, &stderr)
	if want := "the prompt is more than 4096 tokens: 4097 positions are past the model's context length 4096"; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
}

// TestRunOneTokenPrompt: a text prompt of one token (one byte in synth's
// byte-level vocabulary) runs.
func TestRunOneTokenPrompt(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"run", "-m", synthTiny(t), "-p", "h", "-n", "1", "--greedy", "--device", "cpu"}, io.Discard, &stderr); code != 0 ||
		!strings.HasPrefix(stderr.String(), "prompt 1 tok, ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestRunCheckOrder: of two faults in one command line, run reports the
// one it checks first, and the argument checks all come before the file
// is read. Each case pairs neighbours in that order.
func TestRunCheckOrder(t *testing.T) {
	path := tinyModel(t)
	big := withTokens(t, synthTiny(t), 600)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"x", "-p", "hi"}, 2, `unexpected argument "x"` + "\n"},
		{[]string{"-n", "0"}, 2, "-m MODEL.gguf is required"},
		{[]string{"-m", path, "-p", "a", "--prompt-tokens", "1", "--ctx", "-1"}, 2, "exactly one of -p"},
		{[]string{"-m", path, "-p", "", "--ctx", "-1"}, 2, "the prompt is empty"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--ctx", "-1", "--chat"}, 2, "--ctx -1"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--chat", "--json", "--print-tokens"}, 2, "--chat needs a text prompt"},
		{[]string{"-m", path, "-p", "hi", "--think", "--json", "--print-tokens"}, 2, "--think works with --chat"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--json", "--print-tokens", "-n", "0"}, 2, "drop --print-tokens"},
		{[]string{"-m", path, "--prompt-tokens", "1", "-n", "0", "--threads", "-2"}, 2, "-n 0"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--threads", "-2", "--seed", "-5"}, 2, "--threads -2"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--seed", "-5", "--device", "tpu"}, 2, "--seed -5"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--device", "tpu", "--temp", "1e39"}, 2, "--device \"tpu\""},
		{[]string{"-m", path, "--prompt-tokens", "1", "--top-p", "1e-50", "--top-k", "-1"}, 2, "--top-p 1e-50 is outside float32's range"},
		{[]string{"-m", path, "--prompt-tokens", "1", "--temp", "-1", "--top-k", "-1"}, 2, "--temp -1"},
		{[]string{"-m", filepath.Join(t.TempDir(), "none.gguf"), "--prompt-tokens", "1", "--top-k", "-1"}, 2, "--top-k -1"},
		{[]string{"-m", filepath.Dir(path), "--prompt-tokens", "x"}, 1, "is a directory"},
		{[]string{"-m", big, "--prompt-tokens", "1,x"}, 1, "the tokenizer's 600 tokens do not fit"},
		{[]string{"-m", path, "--prompt-tokens", "1,x", "-n", "100000000"}, 2, `token 2, "x", is not a token id`},
		{[]string{"-m", path, "--prompt-tokens", "1", "--ctx", "2000000000", "-n", "100000000"}, 2, "--ctx: 2000000000 positions"},
		{[]string{"-m", path, "--prompt-tokens", "1", "-n", "100000000", "--ctx", "4"}, 2, "-n: 100000000 positions"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		code := run(append([]string{"run", "--device", "cpu"}, c.args...), io.Discard, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
	// A bad GPU variable comes after --device and before the sampling values.
	t.Setenv("MEMRA_PDL", "yes")
	var stderr bytes.Buffer
	if code := run([]string{"run", "-m", path, "--prompt-tokens", "1", "--top-p", "1e-50"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), `MEMRA_PDL="yes"`) {
		t.Errorf("bad MEMRA_PDL and --top-p 1e-50: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"run", "-m", path, "--prompt-tokens", "1", "--device", "tpu"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), `--device "tpu"`) {
		t.Errorf("bad MEMRA_PDL and --device tpu: exit %d, %s", code, stderr.String())
	}
}

// TestRunModelLoadFails: a GGUF that opens but is no model memra runs is
// an error naming the file (exit 1).
func TestRunModelLoadFails(t *testing.T) {
	bogus := copyGGUF(t, tinyModel(t), "bogus.gguf", func(_ *gguf.File, kvs []gguf.KV) []gguf.KV {
		for i, kv := range kvs {
			if kv.Key == "general.architecture" {
				kvs[i].Value = gguf.StringValue("bogus")
			}
		}
		return kvs
	})
	var stderr bytes.Buffer
	if code := run([]string{"run", "-m", bogus, "--prompt-tokens", "1", "--device", "cpu"}, io.Discard, &stderr); code != 1 ||
		!strings.HasPrefix(stderr.String(), "memra run: "+bogus+": ") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// tokPerSec matches the summary line's rates, which vary from run to run.
var tokPerSec = regexp.MustCompile(`[0-9]+\.[0-9]{2} tok/s`)

// TestRunStderrLines: stderr holds, in this order, the notes on the flags,
// the summary line (backend, greedy or the seed, why it stopped) and the
// notes on the generated ids; nothing else.
func TestRunStderrLines(t *testing.T) {
	path := tinyModel(t)
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--seed", "7", "--threads", "2"}, "prompt 2 tok, R | generated 3 tok, R | cpu, 2 threads, seed 7 | stop: -n 3\n"},
		{[]string{"--greedy", "--threads", "1"}, "prompt 2 tok, R | generated 3 tok, R | cpu, 1 thread, greedy | stop: -n 3\n"},
		{[]string{"--greedy", "--temp", "0.5", "--top-p", "0.5", "--threads", "1"}, "memra run: greedy decoding ignores --temp, --top-p\nprompt 2 tok, R | generated 3 tok, R | cpu, 1 thread, greedy | stop: -n 3\n"},
		// --temp 0 is how the run became greedy: not ignored.
		{[]string{"--temp", "0", "--min-p", "0.1", "--threads", "1"}, "memra run: greedy decoding ignores --min-p\nprompt 2 tok, R | generated 3 tok, R | cpu, 1 thread, greedy | stop: -n 3\n"},
		{[]string{"--seed", "1", "--top-p", "0", "--repeat-window", "8", "--threads", "1"},
			"memra run: --top-p 0 keeps every token, as 1 does (llama.cpp and transformers keep only the most likely; --greedy takes it)\n" +
				"memra run: --repeat-window does nothing without a --repeat-penalty (other than 0 or 1, which are off)\n" +
				"prompt 2 tok, R | generated 3 tok, R | cpu, 1 thread, seed 1 | stop: -n 3\n"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "3", "--print-tokens", "--device", "cpu"}, c.flags...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.flags, code, stderr.String())
		}
		if got := tokPerSec.ReplaceAllString(stderr.String(), "R"); got != c.want {
			t.Errorf("%v: stderr\n%q, want\n%q", c.flags, got, c.want)
		}
		if !regexp.MustCompile(`^[0-9]+ [0-9]+ [0-9]+\n$`).MatchString(stdout.String()) {
			t.Errorf("%v: stdout %q", c.flags, stdout.String())
		}
	}
	// The notes on ids without text follow the summary; with --json or
	// --print-tokens they do not point at --print-tokens.
	synth := filepath.Join(t.TempDir(), "tn.gguf")
	if err := convert.SynthFile(t.Context(), synth, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	unused := regexp.MustCompile(`^prompt 5 tok, R \| generated 16 tok, R \| cpu, 1 thread, greedy \| stop: -n 16\n` +
		`memra: [1-9][0-9]* of the 16 generated ids are the vocabulary's unused \(padding\) tokens, which have no text \(random weights, as memra synth writes, pick them; a trained model seldom does\)(.*)\n$`)
	for _, c := range []struct {
		flag, suffix string
	}{{"--json", ""}, {"--print-tokens", ""}, {"--greedy", "; --print-tokens shows them"}} {
		var stderr bytes.Buffer
		if code := run([]string{"run", "-m", synth, "-p", "hello", "-n", "16", "--greedy", "--device", "cpu", "--threads", "1", c.flag}, io.Discard, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.flag, code, stderr.String())
		}
		if m := unused.FindStringSubmatch(tokPerSec.ReplaceAllString(stderr.String(), "R")); m == nil || m[1] != c.suffix {
			t.Errorf("%s: stderr %q; want the summary, then the note ending %q", c.flag, stderr.String(), c.suffix)
		}
	}
}

// noText is --json's note on a file whose tokenizer does not load for
// want of tokenizer.ggml.model (tinyModel's).
func noText(path string) string {
	return fmt.Sprintf(`memra run: %s: no text: the file's tokenizer does not load (%s: gguf: key "tokenizer.ggml.model" not found), so the JSON has no "text"`, path, path)
}

// TestRunJSONError: a generation that fails prints, with --json, the object
// with stop "error" and the error, an empty (not null) token list and no
// generation rate; the summary line has no stop reason; exit 1.
func TestRunJSONError(t *testing.T) {
	nanPath := filepath.Join(t.TempDir(), "nan.gguf")
	s := modeltest.TinyQwen35()
	s.NaN = map[string]bool{"output_norm.weight": true}
	if err := modeltest.Write(nanPath, s); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-m", nanPath, "--prompt-tokens", "1,2", "--greedy", "--device", "cpu", "--threads", "1", "--json"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var r map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || strings.Count(stdout.String(), "\n") != 1 {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if !strings.Contains(stdout.String(), `"prompt_tokens":[1,2],"tokens":[],"stop":"error","error":"`) || r["gen_tok_per_s"] != nil ||
		r["text"] != nil || r["seed"] != nil || r["greedy"] != true || !strings.Contains(r["error"].(string), "every logit is NaN") {
		t.Errorf("stdout %s", stdout.String())
	}
	lines := strings.Split(tokPerSec.ReplaceAllString(stderr.String(), "R"), "\n")
	if len(lines) != 4 || lines[0] != noText(nanPath) || lines[1] != "prompt 2 tok, R | generated 0 tok | cpu, 1 thread, greedy" ||
		!strings.HasPrefix(lines[2], "memra run: ") || !strings.Contains(lines[2], "every logit is NaN") || lines[3] != "" {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestRunStdoutFails: output that cannot be written ends the run with the
// write's error (exit 1): streamed ids stop at once, before the summary;
// the --json object fails after it. The error says it was the output.
func TestRunStdoutFails(t *testing.T) {
	path := tinyModel(t)
	for _, c := range []struct {
		flag, want string
	}{
		{"--print-tokens", "memra run: write output: no space left on device\n"},
		{"--json", noText(path) + "\nprompt 2 tok, R | generated 4 tok, R | cpu, 1 thread, greedy | stop: -n 4\nmemra run: write output: no space left on device\n"},
	} {
		var stderr bytes.Buffer
		code := run([]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "4", "--greedy", "--device", "cpu", "--threads", "1", c.flag}, fullWriter{}, &stderr)
		if got := tokPerSec.ReplaceAllString(stderr.String(), "R"); code != 1 || got != c.want {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.flag, code, got, c.want)
		}
	}
}

// TestRunFlagBounds: the last values each bound allows pass the checks
// (--threads 1024, --seed -1 and 0), and --seed 0 is the seed 0, not "pick
// one"; a picked seed is below 2^53 and uses its 53 bits: of 64 picks,
// one is at least 2^52 but for a chance of 2^-64.
func TestRunFlagBounds(t *testing.T) {
	parse := func(more ...string) *runFlags {
		t.Helper()
		f, err := parseRunFlags(append([]string{"-m", "x.gguf", "--prompt-tokens", "1", "--device", "cpu"}, more...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", more, err)
		}
		return f
	}
	parse("--threads", "1024")
	for range 2 {
		if opts, err := parse("--seed", "0").samplingOptions(); err != nil || opts.Seed != 0 {
			t.Fatalf("--seed 0: seed %d, %v", opts.Seed, err)
		}
	}
	f := parse("--seed", "-1")
	var top uint64
	for range 64 {
		opts, err := f.samplingOptions()
		if err != nil || opts.Seed >= 1<<53 {
			t.Fatalf("picked seed %d (%v): want below 2^53", opts.Seed, err)
		}
		top = max(top, opts.Seed)
	}
	if top < 1<<52 {
		t.Errorf("64 picked seeds all below 2^52 (largest %d): want 53 random bits", top)
	}
}

// TestRunDefaults: without -n a run generates 64 tokens, without --threads
// it uses every core Go schedules on (GOMAXPROCS), and without --seed it
// picks a seed for each run (two runs picking the same one: a chance of
// 2^-53).
func TestRunDefaults(t *testing.T) {
	path := tinyModel(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "-m", path, "--prompt-tokens", "1,2", "--greedy", "--print-tokens", "--device", "cpu"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	workers := fmt.Sprintf("cpu, %d threads", runtime.GOMAXPROCS(0))
	if runtime.GOMAXPROCS(0) == 1 {
		workers = "cpu, 1 thread"
	}
	if n := len(strings.Fields(stdout.String())); n != 64 || !strings.Contains(stderr.String(), "| generated 64 tok, ") ||
		!strings.Contains(stderr.String(), "| "+workers+", greedy | stop: -n 64\n") {
		t.Errorf("%d ids; stderr %q; want 64 and %q", n, stderr.String(), workers)
	}
	var seeds []uint64
	for range 2 {
		var js bytes.Buffer
		if code := run([]string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "1", "--device", "cpu", "--threads", "1", "--json"}, &js, io.Discard); code != 0 {
			t.Fatalf("exit %d", code)
		}
		var r runResult
		if err := json.Unmarshal(js.Bytes(), &r); err != nil || r.Seed == nil {
			t.Fatalf("%s: %v", js.String(), err)
		}
		seeds = append(seeds, *r.Seed)
	}
	if seeds[0] == seeds[1] {
		t.Errorf("two runs without --seed both used seed %d", seeds[0])
	}
}

// TestRunInterruptedInPrompt: a signal while the CPU feeds a long prompt
// stops the feed between two of its tokens, with the signal's status and
// stderr saying how many of the prompt's tokens were fed; --json's object
// comes, stop "interrupted", no tokens. Before, the whole prompt was fed
// first (minutes for a long one on a large model) and only then the
// signal seen.
func TestRunInterruptedInPrompt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Process.Signal sends no signal but a kill on Windows")
	}
	path := filepath.Join(t.TempDir(), "long.gguf")
	s := modeltest.TinyQwen35()
	s.ContextLength = 1 << 16
	if err := modeltest.Write(path, s); err != nil {
		t.Fatal(err)
	}
	// 4,000 tokens take the tiny model ~17 s on one thread (its attention
	// over the growing cache); the signal comes a second in.
	const promptLen = 4000
	ids := make([]string, promptLen)
	for i := range ids {
		ids[i] = strconv.Itoa(1 + i%7)
	}
	cmd := exec.Command(os.Args[0], "run", "-m", path, "--prompt-tokens", strings.Join(ids, ","), "-n", "8", "--greedy",
		"--device", "cpu", "--threads", "1", "--json")
	cmd.Env = append(os.Environ(), asMemra+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr:\n%s", err, stderr.String())
	}
	var fed int
	const head = "memra run: interrupted (interrupt): stopped after "
	i := strings.Index(stderr.String(), head)
	if i < 0 {
		t.Fatalf("stderr lacks %q:\n%s", head, stderr.String())
	}
	if _, err := fmt.Sscanf(stderr.String()[i+len(head):], "%d of the prompt's 4000 tokens, before any was generated", &fed); err != nil || fed >= promptLen-1 {
		t.Errorf("stopped after %d of the prompt's tokens (%v), want fewer than its %d before the last:\n%s", fed, err, promptLen-1, stderr.String())
	}
	var r runResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("--json output %q: %v", stdout.String(), err)
	}
	if r.Stop != "interrupted" || len(r.Tokens) != 0 || !strings.Contains(r.Error, "stopped after") {
		t.Errorf("stop %q, tokens %v, error %q; want interrupted, none, the prompt's count", r.Stop, r.Tokens, r.Error)
	}
}

// TestRunInterrupted: ^C (SIGINT), SIGTERM or SIGHUP during a generation
// stops it after the token in hand with the shell's status for the signal:
// the ids streamed so far stay printed, the summary line counts them, and
// stderr says how far it got; with --json the object comes, stop
// "interrupted", holding the tokens so far. Before, the process died with
// no summary and, with --json, no output at all.
func TestRunInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Process.Signal sends no signal but a kill on Windows")
	}
	path := filepath.Join(t.TempDir(), "long.gguf")
	s := modeltest.TinyQwen35()
	s.ContextLength = 1 << 16 // -n below runs for many seconds; each case stops it within a token
	if err := modeltest.Write(path, s); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "-m", path, "--prompt-tokens", "1,2", "-n", "60000", "--greedy", "--device", "cpu", "--threads", "1"}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		json bool
	}{{syscall.SIGINT, 130, false}, {syscall.SIGTERM, 143, true}, {syscall.SIGHUP, 129, false}} {
		a := append(append([]string(nil), args...), "--print-tokens")
		if c.json {
			a = append(args, "--json")
		}
		cmd := exec.Command(os.Args[0], a...)
		cmd.Env = append(os.Environ(), asMemra+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if c.json {
			// Nothing comes on stdout before the end: the signal comes a
			// second in, when the model (a few KB) has long been loaded and
			// the generation has tens of seconds to go.
			time.Sleep(time.Second)
		} else if _, err := io.CopyN(&out, stdout, 1); err != nil { // the first id has come
			t.Fatal(err)
		}
		if err := cmd.Process.Signal(c.sig); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(stdout)
		out.Write(rest)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code {
			t.Fatalf("%v: exit %v, want %d; stderr:\n%s", c.sig, err, c.code, stderr.String())
		}
		var gen int
		if _, err := fmt.Sscanf(stderr.String()[strings.Index(stderr.String(), "generated "):], "generated %d tok", &gen); err != nil || gen < 1 || gen >= 60000 {
			t.Fatalf("%v: no summary line counting the tokens (%v):\n%s", c.sig, err, stderr.String())
		}
		if want := fmt.Sprintf("memra run: interrupted (%v): generation stopped after %d of -n 60000 tokens", c.sig, gen); !strings.Contains(stderr.String(), want) {
			t.Errorf("%v: stderr lacks %q:\n%s", c.sig, want, stderr.String())
		}
		var toks []int32
		if c.json {
			var r runResult
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("%v: --json output %q: %v", c.sig, out.String(), err)
			}
			if r.Stop != "interrupted" || !strings.Contains(r.Error, c.sig.String()) {
				t.Errorf("%v: stop %q, error %q; want interrupted, naming the signal", c.sig, r.Stop, r.Error)
			}
			toks = r.Tokens
		} else {
			for _, f := range strings.Fields(out.String()) {
				id, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%v: stdout %q: %v", c.sig, out.String(), err)
				}
				toks = append(toks, int32(id))
			}
		}
		if len(toks) != gen {
			t.Errorf("%v: %d ids printed, the summary says %d generated", c.sig, len(toks), gen)
		}
		if ref := greedyRef(t, path, []int32{1, 2}, min(gen, 32)); !slices.Equal(toks[:len(ref)], ref) {
			t.Errorf("%v: the ids before the signal %v are not the greedy decode's %v", c.sig, toks[:len(ref)], ref)
		}
	}
}
