package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/kernels"
	"github.com/memra-ai/memra/tools/internal/flagx"
)

const usageHead = `usage: bench [flags]                   benchmark decode on the GPU
       bench -compare OLD.json [NEW.json]  compare NEW (default: a fresh run) with OLD
       bench -peer LLAMA.json [NEW.json]   NEW (default: a fresh run) against llama-bench's report

Measures, per model: load time, eager and graph decode speed at each context
(filled synthetically), prompt priming time, device memory and graph
captures, against the bandwidth roofline from a device copy measured in the
same run. Writes bench-<time>.{json,md,svg} (as the run goes) and, once it
ends, latest.{json,md,svg} into -out: latest.* is the last whole run of
whole steps on bench's own kernels, so -omit, -fatbin, MEMRA_SHARED_LIMIT
below the device's, ^C, a failure before the first model or a run without a
row leave it as it was. Prints the Markdown table.

-compare prints new/old tok/s for the decode rows of both reports (model,
kv, context, path) with their geomeans, then each model's priming speedup
(old/new ms, where both primed the same -prompt length) and load times,
and, where both ran -profile, each kernel's time old and new (a step's at
a context both profiled, a prefill chunk's), the largest changes first.

-peer prints memra's graph tok/s against llama.cpp's on the same files:
LLAMA.json is llama-bench's report (-o json or -o jsonl) of generation runs,
e.g. llama-bench -m a.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,1024 -o json.
Rows pair by the file's base name and where decoding starts: memra's
context c with llama-bench's depth c, depth 0 with memra's smallest
context (64) when that is at most n_gen; f16 KV on both sides.
-compare and -peer name the GPUs each side ran on and say when they differ.

Environment: MEMRA_PDL=0 turns programmatic dependent launch off;
MEMRA_L2WINDOW=0 keeps the decode state out of a persisting part of the L2;
MEMRA_ATTN_MMA=0|1|cap picks the attention splits (CUDA cores, tensor cores
at head_dim 256, or those past the split cap); MEMRA_SHARED_LIMIT=BYTES
(101376 or more) caps the shared memory a kernel block may take, so that the
load picks the kernels a GPU with less would (101376: sm_86 and sm_89); an
SM still holds the blocks this GPU allows, so the times are not that GPU's.
The KV cache type is -kv's:
MEMRA_KV_FP8=1 is refused without -kv fp8.

Examples:
  bench -quick                          fast check: synth 0.8b+9b × bf16+q8_0, ctx 64,1024, 3 reps
  bench                                 the full default run
  bench -model /models/a.gguf,/models/b.gguf -ctx 64,4096 -reps 3
  bench -compare results/old.json results/latest.json
  bench -peer llama-a.json,llama-b.json results/latest.json   memra against llama.cpp, measured on one machine
  bench -model a.gguf -ctx 1024 -profile 16   where a step's time goes, kernel by kernel, and each kernel's bandwidth
                                        (and a prefill chunk's, over a prompt's first 16 chunks)
  bench -model a.gguf -ctx 1024 -fatbin /tmp/k/memra.fatbin -compare results/latest.json   another build of the kernels against the last run

Exit status: 0 success; 1 a model or the copy that measures bandwidth
failed, the results or the output could not be written, or -compare
OLD.json or -peer LLAMA.json shares no row with the run; 2 usage, setup
error (an -out that cannot be written included), no GPU, or NEW.json
sharing no row with -compare's OLD.json or -peer's LLAMA.json; stopped by
a signal (^C), 128 + the signal's number.

Flags:`

// config is the parsed command line.
type config struct {
	models     []string // GGUF paths (-model)
	presets    []string // synth presets (-preset)
	types      []string // synth weight types (-type)
	modelsDir  string   // where synth files are written and reused
	contexts   []int    // context lengths to decode at
	tokens     int      // tokens generated per measurement
	reps       int      // timed repetitions
	warmup     int      // untimed repetitions before them
	prompt     int      // prompt length of the priming measurement
	kv         []string // KV cache types: "f16", "fp8"
	copyMiB    int      // size of the copy-bandwidth buffer
	out        string   // results folder
	compare    string   // OLD.json for -compare
	compareTo  string   // NEW.json (positional, compare-only mode, for -compare and -peer)
	peer       []string // llama-bench reports (-peer)
	jsonOut    bool     // print JSON to stdout
	profile    int      // profiled graph steps per context (0: none)
	omit       []string // step parts left out (gpu.Options.Omit)
	tokenFeed  bool     // prime one step per token (gpu.Options.TokenFeed)
	eager      bool     // launch each prefill chunk from the host (gpu.Options.EagerChunks)
	fullLogits bool     // greedy and sampled steps read the whole logits matrix (gpu.Options.FullLogits)
	chunk      int      // tokens a prefill chunk takes (gpu.Options.PrefillChunk; 0: the default)
	fatbin     string   // kernel image loaded instead of the embedded one (gpu.Options.Fatbin)
	sampled    bool     // also time graph decode with the device draw (path "sampled")
}

// listFlag is a repeatable, comma-separated string flag.
type listFlag struct {
	vals []string
	set  bool
}

func (l *listFlag) String() string { return strings.Join(l.vals, ",") }

func (l *listFlag) Set(s string) error {
	if !l.set { // the first explicit use replaces the default
		l.vals, l.set = nil, true
	}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			l.vals = append(l.vals, p)
		}
	}
	return nil
}

var errHelp = errors.New("help")

// parseArgs parses av (without the program name). -h's help goes to w;
// errors are returned, for main to print once.
func parseArgs(av []string, w io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usageHead)
		fs.PrintDefaults()
	}
	var models listFlag
	presets := listFlag{vals: []string{"0.8b", "9b"}}
	types := listFlag{vals: []string{"bf16", "q8_0"}}
	kv := listFlag{vals: []string{"f16"}}
	var omit, peer listFlag
	fs.Var(&models, "model", "GGUF model `PATH` (repeatable or comma-separated); replaces the default presets unless -preset or -type is given too")
	fs.Var(&presets, "preset", "synth `PRESETS` to benchmark (comma-separated; have "+strings.Join(convert.Presets(), ", ")+")")
	fs.Var(&types, "type", "synth weight `TYPES` (comma-separated; have "+strings.Join(convert.FileTypeNames(), ", ")+")")
	fs.Var(&kv, "kv", "KV cache `TYPES` (comma-separated: f16, fp8); each loads the model once")
	modelsDir := fs.String("models-dir", filepath.Join(os.TempDir(), "memra-bench"), "`DIR` for synth models (reused when present)")
	ctx := fs.String("ctx", "64,1024,4096,16384,32768", "context lengths `LIST` to decode at (filled synthetically; those a model's context length cannot hold with the timed tokens are skipped, and said)")
	tokens := fs.Int("tokens", 128, "tokens generated per measurement")
	reps := fs.Int("reps", 5, "timed repetitions per measurement (median and spread over them)")
	warmup := fs.Int("warmup", 1, "untimed repetitions before the timed ones (graph captures happen here; with 0, in the first timed one, and the report says so)")
	prompt := fs.Int("prompt", 64, "prompt length `P` of the priming measurement")
	tokenFeed := fs.Bool("token-feed", false, "prime prompts one decode step per token (as memra did before chunked priming, perf.md step 99, and still does where a matrix has no batch kernel) instead of in chunks (-chunk), each weight read once a pass of 8 of a chunk's tokens; run with and without it to compare prime ms")
	fullLogits := fs.Bool("full-logits", false, "greedy and sampled steps read the whole logits matrix, as memra did before it screened 16-bit ones through an 8-bit copy (perf.md steps 132 and 133): the same tokens; run with and without it to compare the graph and sampled rows")
	eagerChunks := fs.Bool("eager-chunks", false, "launch each prefill chunk's kernels from the host, as memra did before it replayed them as graphs (perf.md step 125): the same bits; run with and without it to compare prime ms")
	chunk := fs.Int("chunk", 0, fmt.Sprintf("prime prompts in chunks of `N` tokens (2 to %d; 0: the default, %d), each batch product taking them %d at a time in one launch (perf.md step 127): the same bits whatever N; run with two values to compare prime ms", gpu.MaxPrefillChunk, gpu.DefaultPrefillChunk, kernels.MatvecBatchTokens))
	fp8 := fs.Bool("fp8", false, "FP8 (e4m3) KV cache: the same as -kv fp8")
	copyMiB := fs.Int("copy-mib", 2048, "`MiB` of the device-to-device copy that measures bandwidth")
	out := fs.String("out", "results", "results `DIR`")
	compare := fs.String("compare", "", "`OLD.json` to compare against: with a NEW.json argument compares files only (no GPU), else compares the fresh run")
	fs.Var(&peer, "peer", "llama-bench `REPORTS` (-o json or jsonl; comma-separated) of the same GGUF files: print memra's graph tok/s against llama.cpp's")
	jsonOut := fs.Bool("json", false, "print the JSON report to stdout (the Markdown table and any comparison then go to stderr); with -compare OLD.json NEW.json, the comparison as JSON")
	profile := fs.Int("profile", 0, "also time every kernel of `N` decode steps per context (the greedy graph's step, captured with an event behind every kernel and replayed), and print, per kernel and shape, its share of a step and the weight, KV and state bytes it moves against the copy bandwidth; the caches hold max(N, -tokens) tokens past the largest context. Where the model primes prompts in chunks, the same for a prompt's first N chunks (as many as the cache holds), per chunk")
	fs.Var(&omit, "omit", "leave the step `PARTS` out of every step (comma-separated: "+strings.Join(gpu.StepParts(), ", ")+
		"; gdn and attn name their three parts; on sm_90 gdn-delta and gdn-norm are one launch, as attn-prep and attn-split are over an f16 cache where a split block serves one q head; only both together leave such a launch out), to measure what they cost inside a graph against a run without -omit; the tokens are then meaningless")
	fatbin := fs.String("fatbin", "", "load the kernels from `FILE` instead of those built into bench: another build of kernels/*.cu, e.g. by another nvcc (cp -r kernels /tmp/k && go run ./kernels/internal/build -dir /tmp/k -nvcc NVCC writes /tmp/k/memra.fatbin); run bench without it, then with it and -compare OUT/latest.json, on the same machine (a -fatbin run leaves latest.* alone)")
	sampled := fs.Bool("sampled", true, "also time sampled graph decode, the token drawn on the device with the CLI's defaults (top-k 40, temperature 0.8, top-p 0.95, min-p 0.05): path \"sampled\"")
	quick := fs.Bool("quick", false, "fast check: -ctx 64,1024 -reps 3 (explicit -ctx/-reps win)")
	// The flag package would print a bad flag's error and every flag, and
	// main the error again: it is said once, with a pointer to -h.
	fs.SetOutput(io.Discard)
	args, perr := flagx.Interspersed(fs, av, fs.Parse)
	fs.SetOutput(w)
	if perr != nil {
		if errors.Is(perr, flag.ErrHelp) {
			fs.Usage()
			return config{}, errHelp
		}
		return config{}, fmt.Errorf("%w (bench -h lists the flags)", perr)
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if len(args) > 0 && (*compare != "" || len(peer.vals) > 0) {
		// Files only: nothing runs, so a run's flag would be ignored.
		var ignored []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "compare" && f.Name != "peer" && f.Name != "json" {
				ignored = append(ignored, "-"+f.Name)
			}
		})
		if len(ignored) > 0 {
			return config{}, fmt.Errorf("-compare OLD.json NEW.json and -peer LLAMA.json NEW.json compare files and run nothing, so %s would be ignored (each report keeps its run's settings, -fatbin included); they take -json alone", strings.Join(ignored, ", "))
		}
		if *compare != "" && len(peer.vals) > 0 && *jsonOut {
			return config{}, errors.New("-json prints one comparison: give -compare OLD.json or -peer LLAMA.json with NEW.json, not both")
		}
	}
	if explicit["peer"] && len(peer.vals) == 0 {
		return config{}, errors.New(`-peer "": want llama-bench's report (llama-bench ... -o json > llama.json)`)
	}
	// Nor an empty -model, -compare or -out (a script's unset variable): it
	// ran the default presets, a run compared with nothing, or one that
	// could not write its results.
	switch {
	case explicit["model"] && len(models.vals) == 0:
		return config{}, errors.New(`-model "": want a GGUF file (leave the flag out for the synth presets)`)
	case explicit["compare"] && *compare == "":
		return config{}, errors.New(`-compare "": want OLD.json, a bench report (bench-*.json or latest.json in -out)`)
	case *out == "":
		return config{}, errors.New(`-out "": want a folder for the results (leave the flag out for results)`)
	case *tokenFeed && *eagerChunks:
		return config{}, errors.New("-token-feed primes without chunks, so -eager-chunks would be ignored: give one of them")
	case *tokenFeed && *chunk != 0:
		return config{}, errors.New("-token-feed primes without chunks, so -chunk would be ignored: give one of them")
	case *chunk < 0 || *chunk == 1 || *chunk > gpu.MaxPrefillChunk:
		return config{}, fmt.Errorf("-chunk %d: want 2 to %d tokens, or 0 for the default (%d); -token-feed primes one token at a time", *chunk, gpu.MaxPrefillChunk, gpu.DefaultPrefillChunk)
	}

	c := config{
		modelsDir: *modelsDir, tokens: *tokens, reps: *reps, warmup: *warmup,
		prompt: *prompt, copyMiB: *copyMiB, out: *out, compare: *compare, jsonOut: *jsonOut,
		peer: peer.vals, models: models.vals, kv: kv.vals, profile: *profile, omit: omit.vals, tokenFeed: *tokenFeed, eager: *eagerChunks, fullLogits: *fullLogits, chunk: *chunk, sampled: *sampled, fatbin: *fatbin,
	}
	if *quick {
		if !explicit["ctx"] {
			*ctx = "64,1024"
		}
		if !explicit["reps"] {
			c.reps = 3
		}
	}
	// Explicit models replace the default presets; explicit presets add to them.
	if len(c.models) == 0 || explicit["preset"] || explicit["type"] {
		c.presets, c.types = presets.vals, types.vals
	}
	if explicit["fatbin"] && c.fatbin == "" {
		return config{}, errors.New(`-fatbin "": want a file (leave the flag out for the kernels built into bench)`)
	}
	if *fp8 {
		if explicit["kv"] && (len(kv.vals) != 1 || kv.vals[0] != "fp8") {
			return config{}, fmt.Errorf("-fp8 conflicts with -kv %s", kv.String())
		}
		c.kv = []string{"fp8"}
	}
	if len(c.peer) > 0 && len(args) == 0 && !slices.Contains(c.kv, "f16") {
		// Said now, not after the run: -peer pairs f16 rows only.
		return config{}, fmt.Errorf("-peer pairs memra's f16-KV rows with llama-bench's (its default cache), and -kv %s runs none: add f16 (-kv f16,fp8)", strings.Join(c.kv, ","))
	}
	var err error
	if c.contexts, err = parseInts(*ctx); err != nil {
		return config{}, fmt.Errorf("-ctx: %w", err)
	}
	if len(args) > 0 {
		if (c.compare == "" && len(c.peer) == 0) || len(args) > 1 {
			return config{}, fmt.Errorf("unexpected arguments %q (only -compare OLD.json and -peer LLAMA.json take one, NEW.json)", args)
		}
		c.compareTo = args[0]
	}
	return c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	for _, x := range []struct {
		name string
		v    int
		min  int
	}{{"tokens", c.tokens, 1}, {"reps", c.reps, 1}, {"warmup", c.warmup, 0}, {"prompt", c.prompt, 1}, {"copy-mib", c.copyMiB, 1}, {"profile", c.profile, 0}} {
		if x.v < x.min {
			errs = append(errs, fmt.Errorf("-%s %d must be at least %d", x.name, x.v, x.min))
		}
	}
	// Upper bounds too: the caches add these counts (cacheFor, prompt + 8)
	// and the loops warmup + reps, and a sum that wraps negative passes
	// every check after it.
	for _, x := range []struct {
		name string
		v    int
		max  int
	}{{"tokens", c.tokens, maxContext}, {"prompt", c.prompt, maxContext}, {"profile", c.profile, maxContext},
		{"reps", c.reps, maxReps}, {"warmup", c.warmup, maxReps}} {
		if x.v > x.max {
			errs = append(errs, fmt.Errorf("-%s %d is more than %d", x.name, x.v, x.max))
		}
	}
	if c.copyMiB > maxCopyMiB {
		errs = append(errs, fmt.Errorf("-copy-mib %d is more than %d (64 GiB: source and destination must both fit on the device)", c.copyMiB, maxCopyMiB))
	}
	for _, p := range c.presets {
		if _, err := convert.PresetSpec(p); err != nil {
			errs = append(errs, fmt.Errorf("-preset: %w", err))
		}
	}
	if err := gpu.CheckOmit(c.omit); err != nil {
		errs = append(errs, fmt.Errorf("-omit: %w", err))
	}
	for _, t := range c.types {
		if _, err := convert.ParseFileType(t); err != nil {
			errs = append(errs, fmt.Errorf("-type: %w", err))
		}
	}
	if len(c.kv) == 0 {
		errs = append(errs, errors.New("-kv: no KV type given (want f16, fp8 or both)"))
	}
	for _, k := range c.kv {
		if k != "f16" && k != "fp8" {
			errs = append(errs, fmt.Errorf("-kv: unknown KV type %q (want f16 or fp8)", k))
		}
	}
	if c.compareTo == "" && len(c.models) == 0 && (len(c.presets) == 0 || len(c.types) == 0) {
		errs = append(errs, errors.New("nothing to benchmark: give -model or -preset and -type"))
	}
	if len(errs) == 0 {
		errs = append(errs, c.checkUnique())
	}
	return errors.Join(errs...)
}

// checkUnique refuses two models with the same label or a KV type given
// twice: a report's rows are keyed by (model label, KV, context, path), so a
// second run of the same key would sit beside the first in the report and
// -compare could match only one of them.
func (c *config) checkUnique() error {
	var errs []error
	first := map[string]string{}
	for _, j := range c.jobs() {
		name := j.path
		if j.preset != "" {
			name = "-preset " + j.preset + " -type " + j.ftype.String()
		}
		if prev, ok := first[j.label]; ok {
			errs = append(errs, fmt.Errorf("two models would both be labelled %q (%s and %s): rows are keyed by the file's base name; give each once, or rename one", j.label, prev, name))
			continue
		}
		first[j.label] = name
	}
	seen := map[string]bool{}
	for _, k := range c.kv {
		if seen[k] {
			errs = append(errs, fmt.Errorf("-kv: %s given twice", k))
		}
		seen[k] = true
	}
	return errors.Join(errs...)
}

// maxContext bounds -ctx, and -tokens, -prompt and -profile: 2^20
// positions, 4× the presets' (Qwen3.5's) 262,144-token context length; a
// larger value would only fail later, at the model's limit, or overflow.
const maxContext = 1 << 20

// maxReps bounds -reps and -warmup: far more repetitions than any run
// takes, and their sum stays an int.
const maxReps = 1 << 20

// maxCopyMiB bounds -copy-mib: 64 GiB, under half the H200's memory, so that
// source and destination fit (the default 2 GiB already measures the copy
// ceiling; docs/perf.md).
const maxCopyMiB = 64 << 10

// parseInts parses a comma-separated list of positive integers, returned
// sorted without duplicates. A k suffix multiplies by 1024 ("4k" = 4096).
func parseInts(s string) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		orig, mul := p, 1
		if q, ok := strings.CutSuffix(strings.ToLower(p), "k"); ok {
			p, mul = q, 1024
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", orig) // as typed: "0k", not "0"
		}
		if v > maxContext/mul {
			return nil, fmt.Errorf("%s is more than %d positions (%dk), more than any model here holds", orig, maxContext, maxContext/1024)
		}
		v *= mul
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	sort.Ints(out)
	return out, nil
}

// job is one model to benchmark: a GGUF path, or a synth preset to write
// there first.
type job struct {
	label  string // row key, e.g. "synth-9b-bf16" or the file's base name
	path   string
	preset string // "" for a user file
	ftype  convert.FileType
}

// fileLabel is a model file's row label: its base name without .gguf, with
// '|' (the Markdown tables' and row keys' separator) and control characters
// (which would reach a terminal through the tables) as '_'.
func fileLabel(path string) string {
	return strings.Map(func(r rune) rune {
		if r == '|' || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, strings.TrimSuffix(filepath.Base(path), ".gguf"))
}

// jobs lists the models in run order: user files first, then presets
// (smallest first, as given) × types.
func (c *config) jobs() []job {
	var js []job
	for _, p := range c.models {
		js = append(js, job{label: fileLabel(p), path: p})
	}
	for _, p := range c.presets {
		for _, t := range c.types {
			ft, _ := convert.ParseFileType(t) // validated
			label := fmt.Sprintf("synth-%s-%s", p, ft)
			js = append(js, job{label: label, preset: p, ftype: ft,
				path: filepath.Join(c.modelsDir, fmt.Sprintf("memra-%s-seed1.gguf", label))})
		}
	}
	return js
}
