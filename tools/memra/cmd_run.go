package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/tools/internal/sigctx"
)

func runCmd() command {
	return command{
		name:    "run",
		summary: "generate text from a prompt, streaming it as it is produced",
		usage:   "-m MODEL.gguf (-p TEXT | --prompt-tokens IDS) [-n N] [--chat] [sampling flags]",
		run:     runRun,
	}
}

const runAbout = `Generates text from a prompt. The first generated token is chosen from the
logits after the last prompt token. Text goes to stdout as it is generated
(unless --json); a summary line (prompt and generation tokens per second,
and why it stopped: the model's end-of-generation token or -n) goes to
stderr.
Sampling: the repetition penalty, when set, applies first, greedy or not,
to the tokens among the last --repeat-window of the prompt's and the
generated ones; then --greedy (or --temp 0) takes the argmax, or else top-k,
temperature, top-p and min-p filter in that order and a token is drawn.
That is transformers' order: top-p and min-p see the tempered
probabilities, where llama.cpp applies the temperature after them, so there
the same values (these defaults are llama.cpp's) keep more tokens below a
temperature of 1. A --seed picks the same tokens from the same logits on
the CPU and on the GPU (the two backends' logits differ in the last bits).
On the GPU, greedy runs and top-k sampling (1 to 64), with or without the
repetition penalty (a window of up to 4096), pick each token on the device,
which keeps the steps queued back to back. --chat renders the file's
tokenizer.chat_template (in a child process, within 10 s and 1 GB), or
Qwen's ChatML turns when the file has none.

Output: with --json, stdout is one JSON object on one line when the run
ends (the summary line stays on stderr): model, backend, greedy, seed
(sampled runs; memra picks seeds below 2^53, exact as a JSON number),
prompt_tokens, tokens (generated, the end-of-generation token included),
text (absent without a tokenizer), stop ("eog" with stop_token, "n",
"interrupted" with error: ^C, SIGTERM or SIGHUP, exit status 130, 143 or
129, the tokens so far kept (none where it came while the prompt was fed:
error says how many of its tokens were), or "error" with error: a
failure during generation, exit status 1),
prompt_tok_per_s, and gen_tok_per_s (absent below two generated tokens). A
failure before generation (the file, the backend, the arguments) prints no
object: the exit status is not 0 and stderr says why.

Environment (the GPU's; a value other than those listed is refused, except
with --device cpu): MEMRA_KV_FP8=1 stores the KV cache as FP8 (e4m3), half
f16's memory; MEMRA_FULL_LOGITS=1 has greedy and top-k runs read the whole bf16
or f16 logits matrix instead of an 8-bit copy built at load (the same tokens,
without the copy's memory: 0.27 GB for a 0.8B, 1.08 GB for a 9B); MEMRA_PDL=0 turns programmatic dependent launch off;
MEMRA_L2WINDOW=0 keeps the decode state out of a persisting part of the L2;
MEMRA_ATTN_MMA=0|1|cap picks the attention splits (CUDA cores, tensor cores
at head_dim 256, or those past the split cap); MEMRA_SHARED_LIMIT=BYTES
(101376 or more) caps the shared memory a kernel block may take, so that the
load picks the kernels a GPU with less would (101376: sm_86 and sm_89).
`

const runExamples = `  memra run -m qwen3.5-0.8b.gguf -p "The capital of France is" -n 32
  memra run -m qwen3.5-0.8b.gguf --chat -p "Write a haiku about Go." --temp 0.7 --seed 1
  memra run -m model.gguf --prompt-tokens 785,6722,315 -n 16 --greedy --print-tokens
`

type runFlags struct {
	model, prompt, promptTokens, device string
	n, ctx, threads, topK, repeatWindow int
	chat, think, printTokens, greedy    bool
	json                                bool
	temp, topP, minP, repeatPenalty     float64
	seed                                int64
	set                                 map[string]bool // the flags given, empty or not
}

func runRun(args []string, stdout, stderr io.Writer) error {
	f, err := parseRunFlags(args, stdout)
	if err != nil {
		return err
	}
	opts, err := f.samplingOptions()
	if err != nil {
		return err
	}
	f.noteIdleFlags(opts, stderr)
	r, err := openRunModel(f.model)
	if err != nil {
		return err
	}
	defer r.file.Close()
	prompt, err := f.promptIDs(r, stderr)
	if err != nil {
		return err
	}
	opts.Stop = r.stopIDs()
	ctx, err := f.contextSize(r.m, len(prompt))
	if err != nil {
		return err
	}
	be, err := openBackend(f.device, r.m, ctx, f.threads, opts, stderr)
	if err != nil {
		return err
	}
	defer be.close()
	return f.generate(r, be, prompt, opts, stdout, stderr)
}

// parseRunFlags parses run's arguments and refuses, as usage errors, what
// is wrong with them before the file is read.
func parseRunFlags(args []string, stdout io.Writer) (*runFlags, error) {
	f := &runFlags{set: map[string]bool{}}
	fs := newFlagSet("run", runCmd().usage, runAbout, runExamples, stdout)
	fs.StringVar(&f.model, "m", "", "model `file` (.gguf), required")
	fs.StringVar(&f.prompt, "p", "", "prompt `text`")
	fs.StringVar(&f.promptTokens, "prompt-tokens", "", "prompt as token `ids` instead of text, separated by commas or spaces (e.g. 100,107,114, or what memra tokenize prints)")
	fs.IntVar(&f.n, "n", 64, "tokens to generate")
	fs.BoolVar(&f.chat, "chat", false, "wrap the prompt as a user turn with the model's chat template")
	fs.BoolVar(&f.think, "think", false, "with --chat: let the model think (Qwen: no empty <think></think> pre-fill)")
	fs.BoolVar(&f.printTokens, "print-tokens", false, "print only the generated token ids, space-separated on one line")
	fs.BoolVar(&f.json, "json", false, "print one JSON object when the run ends instead of streaming text: the ids, the text, why it stopped, the speeds (its keys: Output, above)")
	fs.StringVar(&f.device, "device", "auto", "backend: cpu, cuda or auto")
	fs.IntVar(&f.ctx, "ctx", 0, "context capacity in tokens (0: what the prompt and -n need, prompt + n − 1)")
	fs.IntVar(&f.threads, "threads", 0, "CPU worker threads (0: all cores)")
	fs.BoolVar(&f.greedy, "greedy", false, "always take the most likely token")
	fs.Float64Var(&f.temp, "temp", sample.DefaultTemperature, "sampling temperature (0: greedy)")
	fs.IntVar(&f.topK, "top-k", sample.DefaultTopK, "keep the k most likely tokens (0: all)")
	fs.Float64Var(&f.topP, "top-p", sample.DefaultTopP, "keep the most likely tokens up to this total probability (0 or 1: all)")
	fs.Float64Var(&f.minP, "min-p", sample.DefaultMinP, "drop tokens below this fraction of the top probability (0: none)")
	fs.Float64Var(&f.repeatPenalty, "repeat-penalty", 1.0, "penalty for tokens among the last --repeat-window: > 1 discourages them, < 1 favours them (0 or 1: off; else 0.01 to 100)")
	fs.IntVar(&f.repeatWindow, "repeat-window", sample.DefaultRepeatWindow, "tokens the repetition penalty looks back over (0 means 64)")
	fs.Int64Var(&f.seed, "seed", -1, "random seed (-1: pick one and report it)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if fs.NArg() > 0 {
		return nil, f.strayArgument(fs, args)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// strayArgument is the usage error for the arguments fs left after the
// flags in args, with the fix for the three usual causes: a switch given
// its value after a space ("--greedy false", which the flag package reads
// as the switch and an argument), the model given as llama.cpp's tools
// take it, or a prompt of several words unquoted.
func (f *runFlags) strayArgument(fs *flag.FlagSet, args []string) error {
	rest := fs.Args()
	sw := switchBefore(fs, args[:len(args)-len(rest)])
	hint := ""
	switch a := rest[0]; {
	case sw != "" && isBool(a):
		hint = fmt.Sprintf(" (a switch takes its value after \"=\": %s=%s)", sw, a)
	case f.model == "" && strings.HasSuffix(strings.ToLower(a), ".gguf"):
		hint = fmt.Sprintf(" (the model is given with -m: -m %s)", a)
	case f.set["p"] && !strings.HasPrefix(a, "-"):
		// Every word up to the next flag: the parse stopped at the first.
		words := []string{f.prompt}
		for _, w := range rest {
			if strings.HasPrefix(w, "-") {
				break
			}
			words = append(words, w)
		}
		hint = fmt.Sprintf(" (a prompt of several words is one argument: quote it, -p %q)", strings.Join(words, " "))
	}
	return fmt.Errorf("%w: unexpected argument %q%s", errUsage, rest[0], hint)
}

// switchBefore is the last of the parsed arguments before when it is a
// boolean flag written without "=" (--greedy), else "".
func switchBefore(fs *flag.FlagSet, before []string) string {
	if len(before) == 0 {
		return ""
	}
	a := before[len(before)-1]
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	if name == a || name == "" || strings.Contains(name, "=") {
		return ""
	}
	if fl := fs.Lookup(name); fl != nil {
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return a
		}
	}
	return ""
}

// isBool reports whether a is a value the flag package takes for a switch.
func isBool(a string) bool {
	_, err := strconv.ParseBool(a)
	return err == nil
}

// check refuses flags that are missing, do not go together or are out of
// range, and bad GPU variables, all as usage errors.
func (f *runFlags) check() error {
	switch {
	case f.model == "":
		return fmt.Errorf("%w: -m MODEL.gguf is required", errUsage)
	case f.set["p"] && f.set["prompt-tokens"], !f.set["p"] && !f.set["prompt-tokens"]:
		return fmt.Errorf("%w: give exactly one of -p TEXT or --prompt-tokens IDS", errUsage)
	case f.prompt == "" && f.promptTokens == "":
		return fmt.Errorf("%w: the prompt is empty", errUsage)
	case f.ctx < 0:
		return fmt.Errorf("%w: --ctx %d: must be 0 (prompt + n − 1) or positive", errUsage, f.ctx)
	case f.chat && f.promptTokens != "":
		return fmt.Errorf("%w: --chat needs a text prompt (-p), not --prompt-tokens", errUsage)
	case f.think && !f.chat:
		return fmt.Errorf("%w: --think works with --chat (it sets the chat template's enable_thinking)", errUsage)
	case f.json && f.printTokens:
		return fmt.Errorf("%w: --json already holds the generated ids (its \"tokens\"); drop --print-tokens", errUsage)
	case f.n <= 0:
		return fmt.Errorf("%w: -n %d: must be positive", errUsage, f.n)
	case f.threads < 0 || f.threads > cpu.MaxThreads: // said here, before the model loads
		return fmt.Errorf("%w: --threads %d: want 0 (all cores) to %d", errUsage, f.threads, cpu.MaxThreads)
	case f.seed < -1:
		return fmt.Errorf("%w: --seed %d: want -1 (pick one) or a seed of 0 or more", errUsage, f.seed)
	}
	switch f.device {
	case "cpu", "auto", "cuda":
	default:
		return fmt.Errorf("%w: --device %q: want cpu, cuda or auto", errUsage, f.device)
	}
	if f.device != "cpu" { // before the backend: under auto it would read as "no GPU" and fall back
		if _, err := gpu.KVFP8FromEnv(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if _, err := gpu.FullLogitsFromEnv(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if _, err := cuda.PDLFromEnv(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if _, err := cuda.L2WindowFromEnv(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if err := gpu.CheckEnv(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	// The sampler computes in float32: a value it cannot hold would turn
	// into 0 (1e-50: "off" or "all") or +Inf (1e39) without a word.
	for _, x := range []struct {
		name string
		v    float64
	}{{"--temp", f.temp}, {"--top-p", f.topP}, {"--min-p", f.minP}, {"--repeat-penalty", f.repeatPenalty}} {
		if y := float32(x.v); x.v != 0 && y == 0 || !math.IsInf(x.v, 0) && math.IsInf(float64(y), 0) {
			return fmt.Errorf("%w: %s %g is outside float32's range, in which the sampler computes", errUsage, x.name, x.v)
		}
	}
	return nil
}

// samplingOptions is the sampler's options from the flags, with a seed
// picked when none is given; values out of range are usage errors in the
// flags' names.
func (f *runFlags) samplingOptions() (sample.Options, error) {
	opts := sample.Options{
		Temperature: float32(f.temp), Greedy: f.greedy, TopK: f.topK, TopP: float32(f.topP), MinP: float32(f.minP),
		RepeatPenalty: float32(f.repeatPenalty), RepeatWindow: f.repeatWindow,
	}
	if f.seed < 0 {
		// Reported in the summary so the run can be repeated; below 2^53,
		// so that it survives JSON readers that hold numbers as doubles
		// (--json's seed).
		opts.Seed = rand.Uint64() >> 11
	} else {
		opts.Seed = uint64(f.seed)
	}
	if err := opts.Validate(); err != nil {
		var oe *sample.OptionError
		if errors.As(err, &oe) {
			flag := map[string]string{"temperature": "--temp", "top-k": "--top-k", "top-p": "--top-p", "min-p": "--min-p",
				"repeat penalty": "--repeat-penalty", "repeat window": "--repeat-window"}[oe.Option]
			if flag != "" {
				oe.Option = flag
			}
		}
		return opts, fmt.Errorf("%w: %v", errUsage, err)
	}
	return opts, nil
}

// noteIdleFlags says on stderr which flags given do nothing in this run
// (those greedy decoding ignores, a window without a penalty), or not what
// they do in llama.cpp (--top-p 0), rather than pass them over.
func (f *runFlags) noteIdleFlags(opts sample.Options, stderr io.Writer) {
	if opts.IsGreedy() {
		var ignored []string
		for _, n := range []string{"temp", "top-k", "top-p", "min-p", "seed"} {
			if f.set[n] && (n != "temp" || f.temp != 0) {
				ignored = append(ignored, "--"+n)
			}
		}
		if len(ignored) > 0 {
			fmt.Fprintf(stderr, "memra run: greedy decoding ignores %s\n", strings.Join(ignored, ", "))
		}
	} else if f.set["top-p"] && f.topP == 0 {
		// The opposite of what the same flag does in llama.cpp and
		// transformers, where it leaves the most likely token alone.
		fmt.Fprintln(stderr, "memra run: --top-p 0 keeps every token, as 1 does (llama.cpp and transformers keep only the most likely; --greedy takes it)")
	}
	if f.set["repeat-window"] && !sample.PenaltyOn(float32(f.repeatPenalty)) {
		fmt.Fprintf(stderr, "memra run: --repeat-window does nothing without a --repeat-penalty (other than 0 or 1, which are off)\n")
	}
}

// runModel is the file a run generates with: its model, and its tokenizer
// or why that does not load (tok nil), which --prompt-tokens runs without.
// The model's weights lie in the file's mapping: file closes last.
type runModel struct {
	path   string
	file   *gguf.File
	m      *model.Model
	tok    *tokenizer.Tokenizer
	tokErr error
}

// openRunModel opens the file at path and loads its model and tokenizer.
func openRunModel(path string) (*runModel, error) {
	gf, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := model.Load(gf)
	if err != nil {
		gf.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tok, tokErr := tokenizer.FromGGUF(gf)
	if tokErr == nil && tok.Vocab() > m.NVocab {
		gf.Close()
		return nil, fmt.Errorf("%s: the tokenizer's %d tokens do not fit the model's vocabulary of %d (token_embd.weight): the tokenizer belongs to another model",
			path, tok.Vocab(), m.NVocab)
	}
	return &runModel{path: path, file: gf, m: m, tok: tok, tokErr: tokErr}, nil
}

// stopIDs is the end-of-generation ids: the tokenizer's, or without one
// those the file's metadata names.
func (r *runModel) stopIDs() []int32 {
	if r.tok != nil {
		return r.tok.EOGs()
	}
	return tokenizer.MetadataEOGs(r.file, r.m.NVocab)
}

// promptIDs is the prompt as r's token ids: --prompt-tokens' own, or -p's
// text encoded (as a chat turn with --chat).
func (f *runFlags) promptIDs(r *runModel, stderr io.Writer) ([]int32, error) {
	if f.promptTokens == "" {
		return f.encodePrompt(r)
	}
	prompt, err := parseIDs(f.promptTokens, r.m.NVocab)
	if err != nil {
		return nil, fmt.Errorf("%w: --prompt-tokens: %v", errUsage, err)
	}
	switch {
	case r.tokErr == nil, f.printTokens:
	case f.json:
		fmt.Fprintf(stderr, "memra run: %s: no text: the file's tokenizer does not load (%v), so the JSON has no \"text\"\n", f.model, r.tokErr)
	default:
		fmt.Fprintf(stderr, "memra run: %s: no text: the file's tokenizer does not load (%v), so the output is token ids\n", f.model, r.tokErr)
	}
	return prompt, nil
}

// encodePrompt encodes -p's text with r's tokenizer, with --chat rendered
// as a user turn by the file's chat template or the built-in ChatML.
func (f *runFlags) encodePrompt(r *runModel) ([]int32, error) {
	tok := r.tok
	if r.tokErr != nil {
		return nil, fmt.Errorf("text prompt needs the model's tokenizer: %w (use --prompt-tokens)", r.tokErr)
	}
	text, parseSpecial := f.prompt, false
	if f.chat {
		var err error
		if tok.HasChatTemplate() { // the file's own program: rendered in a child process (chat.go)
			text, err = renderChat(f.model, f.prompt, f.think, chatTimeout)
		} else {
			text, err = tok.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: f.prompt}}, true, f.think)
		}
		if err != nil {
			return nil, err
		}
		parseSpecial = true // the template's <|im_start|> etc. are control tokens
	}
	// The file's template places any start-of-text token itself, as
	// Hugging Face's apply_chat_template has it (no second one); the
	// built-in ChatML writes none, so there the vocabulary's rule holds.
	// The model's context bounds the encoding's work too: a huge -p
	// stops merging past it rather than encode in full and fail after.
	limit := r.m.MaxPositions()
	eo := tokenizer.EncodeOptions{ParseSpecial: parseSpecial, MaxTokens: limit}
	if f.chat && tok.HasChatTemplate() {
		eo.AddBOS = tokenizer.BOSNever
	}
	prompt, err := tok.Encode(text, eo)
	switch {
	case errors.Is(err, tokenizer.ErrTooLong):
		unit := "tokens"
		if limit == 1 {
			unit = "token"
		}
		return nil, fmt.Errorf("%w: the prompt is more than %d %s: %v", errUsage, limit, unit, r.m.CheckContext(limit+1))
	case err != nil:
		return nil, err
	case len(prompt) == 0 && f.chat:
		return nil, fmt.Errorf("%s: its chat template rendered no text for this conversation (run without --chat to send -p as it is)", f.model)
	case len(prompt) == 0:
		return nil, fmt.Errorf("%w: the prompt encodes to no tokens", errUsage)
	}
	return prompt, nil
}

// contextSize checks --ctx, -n and the prompt with it against m's context
// and returns the cache's capacity: --ctx, or what the run needs.
func (f *runFlags) contextSize(m *model.Model, promptLen int) (int, error) {
	// Each count alone first, so that their sum cannot overflow.
	for _, c := range []struct {
		n    int
		name string
	}{{f.ctx, "--ctx"}, {f.n, "-n"}, {promptLen + f.n - 1, "the prompt and -n"}} {
		if err := m.CheckContext(c.n); err != nil {
			return 0, fmt.Errorf("%w: %s: %v", errUsage, c.name, err)
		}
	}
	// The last token generated is never fed back, so the cache needs one
	// position fewer than prompt + n: a run that exactly fills the model's
	// context length is allowed.
	need := promptLen + f.n - 1
	ctx := f.ctx
	if ctx == 0 {
		ctx = need
	}
	if need > ctx {
		return 0, fmt.Errorf("%w: --ctx %d holds fewer than the %d tokens this needs (%d prompt + -n %d − 1): raise --ctx or lower -n", errUsage, ctx, need, promptLen, f.n)
	}
	return ctx, nil
}

// generate generates on be after prompt and prints what the flags ask
// for: the text or ids as they come, or the JSON object at the end; then
// the summary line and notes on stderr. Its error is the generation's, or
// the output's.
func (f *runFlags) generate(r *runModel, be *backend, prompt []int32, opts sample.Options, stdout, stderr io.Writer) error {
	o := newRunOutput(f, r.tok, stdout)
	// ^C, SIGTERM or SIGHUP stop the generation after the token in hand
	// (the prompt's on the CPU, between its tokens), so that the text, the
	// summary and --json's object hold what came (exit 130, 143, 129),
	// rather than the process dying with them unwritten.
	w := sigctx.New()
	defer w.Stop()
	st, genErr := be.generate(w, prompt, f.n, opts, func(id int32) error {
		if err := o.emit(id); err != nil {
			return err
		}
		if w.Err() != nil {
			return errSignalled
		}
		return nil
	})
	switch {
	case errors.Is(genErr, errSignalled):
		genErr = w.Interrupted(fmt.Sprintf("generation stopped after %d of -n %d tokens", st.GenTokens, f.n))
	case w.Signal() != nil && errors.Is(genErr, context.Canceled):
		genErr = w.Interrupted(fmt.Sprintf("stopped after %d of the prompt's %d tokens, before any was generated", st.PromptTokens, len(prompt)))
	}
	if err := o.finish(); err != nil {
		return err
	}
	mode := fmt.Sprintf("seed %d", opts.Seed)
	if opts.IsGreedy() {
		mode = "greedy"
	}
	genLine := fmt.Sprintf("generated %d tok, %.2f tok/s", st.GenTokens, st.GenTokPerSec())
	if st.GenTokens < 2 { // the first token comes from the prompt's last step: no decode step to time
		genLine = fmt.Sprintf("generated %d tok", st.GenTokens)
	}
	fmt.Fprintf(stderr, "prompt %d tok, %.2f tok/s | %s | %s, %s%s\n",
		st.PromptTokens, st.PromptTokPerSec(), genLine, be.name, mode, stopReason(genErr, r.tok, opts.Stop, o.last, st.GenTokens, f.n))
	if f.json {
		if err := o.writeJSON(stdout, f.model, be.name, opts, prompt, st, genErr); err != nil {
			return err
		}
	}
	o.noteIDsWithoutText(stderr, r.m.NVocab, st.GenTokens)
	return genErr
}

// runOutput prints a run's generated ids as they come: their text, or the
// ids themselves (--print-tokens, or no tokenizer), or with --json keeps
// both for the object printed at the end.
type runOutput struct {
	tok            *tokenizer.Tokenizer // nil without one
	json, idsShown bool                 // idsShown: printed or in the JSON, so the notes need not point at --print-tokens
	out            *bufio.Writer        // to stdout, or with --json to text
	text           strings.Builder
	stream         *tokenizer.Stream // nil when the ids are printed
	first          bool              // no id printed yet
	last           int32             // the last token generated: why the generation stopped
	gen            []int32           // the generated ids, for --json
	// Generated ids without text, counted for a note after the summary
	// rather than passed over in silence: ids past the tokenizer's (a model
	// vocabulary padded past it) and the tokenizer's unused (padding) ids.
	past, unused int
}

func newRunOutput(f *runFlags, tok *tokenizer.Tokenizer, stdout io.Writer) *runOutput {
	o := &runOutput{tok: tok, json: f.json, idsShown: f.printTokens || f.json, first: true, last: -1}
	if f.json {
		o.out = bufio.NewWriter(&o.text)
	} else {
		o.out = bufio.NewWriter(stdout)
	}
	if tok != nil && !f.printTokens {
		o.stream = tok.NewStream()
	}
	return o
}

// emit takes the next generated id.
func (o *runOutput) emit(id int32) error {
	o.last = id
	switch {
	case o.tok == nil:
	case int(id) >= o.tok.Vocab():
		o.past++
	case o.tok.TokenType(id) == tokenizer.TokenUnused:
		o.unused++
	}
	switch {
	case o.json:
		o.gen = append(o.gen, id)
		if o.stream != nil && !o.tok.IsEOG(id) {
			o.out.WriteString(o.stream.Next(id))
		}
		return nil
	case o.stream != nil:
		if !o.tok.IsEOG(id) { // the end-of-generation token ends the text; its text is not part of it
			o.out.WriteString(o.stream.Next(id))
		}
	default:
		if !o.first {
			o.out.WriteByte(' ')
		}
		o.out.WriteString(strconv.Itoa(int(id)))
	}
	o.first = false
	return writeErr(o.out.Flush())
}

// writeErr says that err, if any, was writing the output.
func writeErr(err error) error {
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// finish writes the text the stream still holds and, but for --json, ends
// the line.
func (o *runOutput) finish() error {
	if o.stream != nil {
		o.out.WriteString(o.stream.Flush())
	}
	if !o.json {
		o.out.WriteByte('\n')
	}
	return writeErr(o.out.Flush())
}

// writeJSON prints --json's object, one line.
func (o *runOutput) writeJSON(stdout io.Writer, model, backend string, opts sample.Options, prompt []int32, st sample.Stats, genErr error) error {
	r := runResult{Model: model, Backend: backend, Greedy: opts.IsGreedy(), PromptTokens: prompt, Tokens: o.gen,
		Stop: "n", PromptTokPerSec: st.PromptTokPerSec()}
	if r.Tokens == nil {
		r.Tokens = []int32{}
	}
	if !r.Greedy {
		r.Seed = &opts.Seed
	}
	if o.stream != nil {
		t := o.text.String()
		r.Text = &t
	}
	var ie *sigctx.Interrupted
	switch {
	case errors.As(genErr, &ie):
		r.Stop, r.Error = "interrupted", genErr.Error()
	case genErr != nil:
		r.Stop, r.Error = "error", genErr.Error()
	case st.GenTokens > 0 && slices.Contains(opts.Stop, o.last):
		r.Stop, r.StopToken = "eog", &o.last
	}
	if st.GenTokens >= 2 {
		g := st.GenTokPerSec()
		r.GenTokPerSec = &g
	}
	// One line (Encode's): a run per line (JSON Lines) when runs are
	// appended; <, > and & as they are, for the chat tokens' text.
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return writeErr(enc.Encode(r))
}

// noteIDsWithoutText says on stderr how many of the gen generated ids had
// no text, if any, in a model vocabulary of vocab ids.
func (o *runOutput) noteIDsWithoutText(stderr io.Writer, vocab, gen int) {
	show := "; --print-tokens shows them"
	if o.idsShown {
		show = ""
	}
	if o.past > 0 {
		fmt.Fprintf(stderr, "memra: %d generated %s past the tokenizer's %d tokens (the model's vocabulary is %d) and %s no text%s\n",
			o.past, plural(o.past, "id is", "ids are"), o.tok.Vocab(), vocab, plural(o.past, "has", "have"), show)
	}
	if o.unused > 0 {
		fmt.Fprintf(stderr, "memra: %d of the %d generated ids %s the vocabulary's unused (padding) %s, which %s no text (random weights, as memra synth writes, pick them; a trained model seldom does)%s\n",
			o.unused, gen, plural(o.unused, "is", "are"), plural(o.unused, "token", "tokens"), plural(o.unused, "has", "have"), show)
	}
}

// plural is one when n is 1, else many: the notes count ids.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// errSignalled stops a generation that a signal interrupted (generate
// turns it into a *sigctx.Interrupted).
var errSignalled = errors.New("signalled")

// runResult is memra run --json's output, one object when the run ends.
type runResult struct {
	Model        string  `json:"model"`
	Backend      string  `json:"backend"` // "cpu, 8 threads" or "cuda NVIDIA H200"
	Greedy       bool    `json:"greedy"`
	Seed         *uint64 `json:"seed,omitempty"` // sampled runs: repeats the run
	PromptTokens []int32 `json:"prompt_tokens"`
	Tokens       []int32 `json:"tokens"`         // generated, the end-of-generation token included
	Text         *string `json:"text,omitempty"` // their text (without the end-of-generation token's); absent without a tokenizer
	// Stop is why generation ended: "eog" (StopToken, one of the model's
	// end-of-generation tokens), "n" (-n tokens), "interrupted" (a signal;
	// Error says which) or "error" (Error).
	Stop            string   `json:"stop"`
	StopToken       *int32   `json:"stop_token,omitempty"`
	Error           string   `json:"error,omitempty"`
	PromptTokPerSec float64  `json:"prompt_tok_per_s"`
	GenTokPerSec    *float64 `json:"gen_tok_per_s,omitempty"` // decode steps after the first token; absent below 2 tokens
}

// stopReason says, for the summary line, why a generation of n tokens
// ended after gen: at an end-of-generation token (named), or at -n. Empty
// when it failed (the error says why).
func stopReason(err error, tok *tokenizer.Tokenizer, stop []int32, last int32, gen, n int) string {
	switch {
	case err != nil:
		return ""
	case gen > 0 && slices.Contains(stop, last) && tok != nil:
		return fmt.Sprintf(" | stop: end-of-generation token %d %q", last, tok.TokenText(last))
	case gen > 0 && slices.Contains(stop, last):
		return fmt.Sprintf(" | stop: end-of-generation token %d (the file's eos_token_id)", last)
	}
	return fmt.Sprintf(" | stop: -n %d", n)
}

// parseIDs parses token ids separated by commas or white space ("1,2, 3",
// or tokenize's "1 2 3") into ids below vocab; position i+1 in its errors
// is the id's place in the list.
func parseIDs(s string, vocab int) ([]int32, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) == 0 {
		return nil, errors.New("no token ids")
	}
	ids := make([]int32, len(fields))
	for i, f := range fields {
		x, err := strconv.ParseInt(f, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) || err == nil && (x < 0 || x >= int64(vocab)):
			return nil, fmt.Errorf("token %d, %s, is outside the vocabulary [0, %d)", i+1, f, vocab)
		case err != nil:
			return nil, fmt.Errorf("token %d, %q, is not a token id (decimal ids separated by commas or spaces)", i+1, f)
		}
		ids[i] = int32(x)
	}
	return ids, nil
}
