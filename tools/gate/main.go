// Command gate is the CUDA-graph gate: the capture/replay decode path
// (GenerateGraph) must produce a bit-identical greedy token stream to the
// eager DecodeStep over N steps, across attention buckets (prime P, then
// generate N crossing the n_splits = ceil(t_kv/64) boundaries: four with
// the defaults). Any token mismatch is a FAIL (exit status 1), and so are
// a graph path that fails where eager ran and one that did not capture
// exactly one graph per bucket its steps crossed (steps run without their
// graph match eager by construction); a run that crosses fewer than two
// buckets says so, as it does not exercise a re-capture.
//
// GenerateGraph primes the prompt eagerly (its tokens before the last fed
// without logits, the last through a device-counter step), then replays one
// captured CUDA graph per step. A graph is captured once
// per t_kv bucket (key (fa_vec, n_splits)); the captured attention reads the
// actual t_kv from a device counter and takes n_splits from the bucket, so
// replay reproduces eager's split geometry bit for bit. Only a 4-byte token
// is read back per step.
//
// Usage:
//
//	gate [MODEL.gguf|default] [P] [N] [bench]
//
// P is the prompt length (64), N the tokens generated (256); "bench" adds
// the speed line. MEMRA_KV_FP8=1 runs with the FP8 KV cache. With no model
// (or "default") the gate synthesises the built-in tiny qwen35 model. On a
// machine without an NVIDIA GPU it says so and runs the CPU part: the CPU
// backend's eager decode of the same prompt.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/tools/internal/sigctx"
	"github.com/memra-ai/memra/tools/internal/sticky"
)

// cacheSlack is the positions the gate's caches keep past P + N (room for
// the step graph decode runs ahead, and more).
const cacheSlack = 8

// benchTokens is how many tokens bench decodes past the prompt, in caches
// of P + benchTokens + cacheSlack positions at most.
const benchTokens = 256

const usage = `usage: gate [MODEL.gguf|default] [P] [N] [bench]

  MODEL  a qwen35 or qwen3 GGUF (default: the built-in tiny qwen35, synthesised)
  P      prompt length (default 64)
  N      tokens to generate (default 256)
  bench  also time eager vs graph decode (prime outside the timer)

Environment: MEMRA_KV_FP8=1 stores the KV cache as FP8 (e4m3); MEMRA_PDL=0 turns
programmatic dependent launch off; MEMRA_L2WINDOW=0 keeps the decode state out
of a persisting part of the L2; MEMRA_ATTN_MMA=0|1|cap picks the attention
splits (CUDA cores, tensor cores at head_dim 256, or those past the split cap);
MEMRA_SHARED_LIMIT=BYTES (101376 or more) caps the shared memory a kernel
block may take, so that the load picks the kernels a GPU with less would
(101376: sm_86 and sm_89).
Exit status: 0 PASS (or CPU-only run without a GPU), 1 FAIL, 2 usage or setup error.
Example: gate /models/qwen35-9b-bf16.gguf 64 2000 bench`

// about heads -h's help: what the gate checks, which the usage alone (in
// every usage error too) does not say.
const about = `gate checks that CUDA-graph decode (a graph captured per attention bucket,
then replayed) generates the same greedy tokens as eager decode, bit for bit:
it primes a P-token prompt and generates N tokens both ways. A differing
token, a graph path that fails, or captures other than one per bucket
crossed is a FAIL.
`

func main() {
	// The gate's lines are printed as it goes: a stdout that fails (a full
	// disk, /dev/full) must not leave a PASS with its verdict lost exiting 0.
	out := &sticky.Writer{W: os.Stdout}
	code, err := run(os.Args[1:], out)
	code, err = exitStatus(out, code, err)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
	}
	os.Exit(code)
}

// exitStatus folds a failed write of the gate's output into run's status
// (sticky.Writer.Status): a PASS or a CPU part whose lines were lost exits
// 2; a FAIL keeps its 1 and an earlier error stands.
func exitStatus(out *sticky.Writer, code int, err error) (int, error) {
	return out.Status(code, err, 2, "writing the gate's output")
}

type args struct {
	model string
	p, n  int
	bench bool
}

func parseArgs(av []string) (args, error) {
	a := args{model: "default", p: 64, n: 256}
	for _, s := range av {
		if s == "-h" || s == "--help" || s == "help" {
			return a, errHelp
		}
	}
	// The gate takes no flags; "gate -model x.gguf" would otherwise open a
	// file named "-model" and report it missing. Negative numbers are left
	// to the checks of P and N below.
	for _, s := range av {
		if _, err := strconv.Atoi(s); err != nil && len(s) > 1 && s[0] == '-' {
			return a, fmt.Errorf("%q: the gate takes positional arguments, not flags (a file whose name starts with - is ./%s)\n%s", s, s, usage)
		}
	}
	if len(av) > 0 {
		a.model = av[0]
	}
	// "bench" anywhere but fourth is the word out of place, not a model, P or N.
	if i := slices.Index(av, "bench"); i >= 0 && i < 3 && (i > 0 || len(av) == 1) {
		return a, fmt.Errorf("\"bench\" comes fourth, after MODEL P N (gate default 64 256 bench; a file named bench is ./bench)\n%s", usage)
	}
	for i, dst := range []*int{&a.p, &a.n} {
		if len(av) > i+1 {
			v, err := strconv.Atoi(av[i+1])
			// Past MaxContext too: else P + N + cacheSlack can wrap negative
			// and pass the context check.
			if (errors.Is(err, strconv.ErrRange) && av[i+1][0] != '-') || (err == nil && v > model.MaxContext) {
				return a, fmt.Errorf("%s=%s is past any context (%d tokens at most: model.MaxContext)\n%s", []string{"P", "N"}[i], av[i+1], model.MaxContext, usage)
			}
			if err != nil || v < 1 {
				return a, fmt.Errorf("%s must be a positive integer, got %q\n%s", []string{"P", "N"}[i], av[i+1], usage)
			}
			*dst = v
		}
	}
	if len(av) > 3 {
		if av[3] != "bench" {
			return a, fmt.Errorf("fourth argument must be \"bench\", got %q\n%s", av[3], usage)
		}
		a.bench = true
	}
	if len(av) > 4 {
		return a, fmt.Errorf("too many arguments\n%s", usage)
	}
	return a, nil
}

var errHelp = errors.New("help")

func run(av []string, stdout io.Writer) (int, error) {
	a, err := parseArgs(av)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, about+"\n")
		fmt.Fprintln(stdout, usage)
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	path := a.model
	if path == "default" {
		if path, err = defaultModel(); err != nil {
			var ie *sigctx.Interrupted
			if errors.As(err, &ie) { // 130 for ^C, as the shell gives
				return ie.Code, err
			}
			return 2, err
		}
	}
	f, err := gguf.Open(path)
	if err != nil {
		return 2, err
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		return 2, fmt.Errorf("%s: %w", path, err)
	}
	// The caches' capacity, below: checked whole, so that the error names
	// the positions asked for, not N alone.
	if err := m.CheckContext(a.p + a.n + cacheSlack); err != nil {
		return 2, fmt.Errorf("P=%d N=%d: the gate's caches hold P + N + %d = %d positions (P + N may be at most context length − %d): %w",
			a.p, a.n, cacheSlack, a.p+a.n+cacheSlack, cacheSlack, err)
	}
	if a.bench { // else it fails only after the gate, with exit 2 and no verdict
		if err := m.CheckContext(a.p + benchTokens + cacheSlack); err != nil {
			return 2, fmt.Errorf("P=%d bench: bench decodes %d tokens past the prompt in caches of P + %d positions (P may be at most context length − %d): %w",
				a.p, benchTokens, benchTokens+cacheSlack, benchTokens+cacheSlack, err)
		}
	}
	prompt := make([]int32, a.p)
	for i := range prompt {
		prompt[i] = int32((100 + i*7%900) % m.NVocab)
	}
	fmt.Fprintf(os.Stderr, "[gate] model %s: %s, %d layers (%d attention), vocab %d, P=%d N=%d\n",
		path, m.Arch, m.NLayer, m.NumAttention(), m.NVocab, a.p, a.n)

	fp8, err := gpu.KVFP8FromEnv() // checked without a GPU too: a typo fails everywhere alike
	if err != nil {
		return 2, err
	}
	if _, err := cuda.PDLFromEnv(); err != nil {
		return 2, err
	}
	if _, err := cuda.L2WindowFromEnv(); err != nil {
		return 2, err
	}
	if err := gpu.CheckEnv(); err != nil {
		return 2, err
	}
	e, err := cuda.New(0)
	if err != nil && !cuda.NoGPU(err) {
		// A driver that is there but unusable must not pass as "no GPU": on a
		// GPU machine that would turn the gate into a CPU run and exit 0.
		return 2, fmt.Errorf("the NVIDIA driver is installed but unusable, so the gate cannot run (the CPU part alone runs only where there is no driver or no GPU): %w", err)
	}
	if err != nil {
		fmt.Fprintf(stdout, "gate: no GPU (%v)\n", err)
		fmt.Fprintln(stdout, "gate: running the CPU part only; the graph == eager gate needs an NVIDIA GPU and driver")
		if a.bench {
			fmt.Fprintln(stdout, "gate: bench skipped: it times the GPU's eager and graph decode")
		}
		if fp8 {
			fmt.Fprintln(stdout, "gate: MEMRA_KV_FP8=1 ignored: the FP8 KV cache is the GPU's")
		}
		return cpuPart(stdout, m, prompt, a.n)
	}
	defer e.Close()
	info := e.Info()
	fmt.Fprintf(os.Stderr, "[gate] device %s (sm_%d%d, %d SMs), KV %s, programmatic dependent launch %s\n", info.Name, info.Major, info.Minor, info.SMs,
		map[bool]string{false: "f16", true: "fp8 e4m3"}[fp8], map[bool]string{false: "off", true: "on"}[e.PDL()])
	t0 := time.Now()
	g, err := gpu.Load(e, m, gpu.Options{KVFP8: fp8}, nil)
	if err != nil {
		return 2, err
	}
	defer g.Close()
	fmt.Fprintf(os.Stderr, "[gate] weights uploaded: %.2f GB in %.2fs\n", float64(g.WeightBytes())/1e9, time.Since(t0).Seconds())
	for _, f := range g.Fallbacks() {
		fmt.Fprintf(os.Stderr, "[gate] %s\n", f)
	}
	return gate(stdout, g, prompt, a)
}

func gate(stdout io.Writer, g *gpu.Model, prompt []int32, a args) (int, error) {
	n, p := a.n, a.p
	// ---- EAGER reference: prime + generate N greedy tokens via DecodeStep ----
	ce, err := g.NewCache(p + n + cacheSlack)
	if err != nil {
		return 2, err
	}
	defer ce.Close()
	fmt.Fprintln(os.Stderr, "[gate] eager prime start")
	var ll []float32
	for _, t := range prompt {
		if ll, err = g.DecodeStep(ce, t); err != nil {
			return 2, err
		}
	}
	fmt.Fprintln(os.Stderr, "[gate] eager prime done")
	// Stream convention: the first generated token (argmax of the last
	// prime step) is part of the stream; GenerateGraph emits it as out[0].
	eager := []int32{argmaxT(ll)}
	var buckets []gpu.Bucket
	for len(eager) < n {
		b := g.BucketKey(ce.Len() + 1)
		if !slices.Contains(buckets, b) {
			buckets = append(buckets, b)
		}
		if ll, err = g.DecodeStep(ce, eager[len(eager)-1]); err != nil {
			return 2, err
		}
		eager = append(eager, argmaxT(ll))
	}

	// ---- GRAPH path: prime + generate N via capture/replay ----
	fmt.Fprintln(os.Stderr, "[gate] eager gen done; graph path start")
	gs := g.NewGraphDecodeState()
	defer gs.Close()
	graph, err := g.GenerateGraph(gs, prompt, n)
	if err == nil {
		fmt.Fprintln(os.Stderr, "[gate] graph path done")
	}
	v := judge(stdout, outcome{
		n: n, eager: eager, graph: graph, graphErr: err,
		crossed: buckets, captured: gs.Buckets(), captures: gs.Captures,
	})
	var benchErr error
	if a.bench && v.graphErr == nil {
		benchErr = bench(stdout, g, prompt)
	}
	return v.finish(stdout, benchErr)
}

// finish prints the verdict and returns the exit status with bench's error:
// the verdict's status, or 2 (setup error) when bench failed after a PASS.
// A bench error never hides the verdict, nor turns a FAIL into exit 2.
func (r result) finish(w io.Writer, benchErr error) (int, error) {
	code := r.verdict(w)
	if benchErr == nil {
		return code, nil
	}
	if code == 0 {
		code = 2
	}
	return code, fmt.Errorf("bench: %w", benchErr)
}

// outcome is what the gate judges: both streams of n tokens, the graph
// path's error, the buckets the eager steps after the first token crossed
// (in order), and what the graph state, fresh for this one GenerateGraph,
// captured.
type outcome struct {
	n            int
	eager, graph []int32
	graphErr     error
	crossed      []gpu.Bucket
	captured     []gpu.Bucket // GraphDecodeState.Buckets
	captures     int          // GraphDecodeState.Captures
}

// result is judge's finding, which verdict prints.
type result struct {
	outcome
	mismatches int // tokens that differ, plus one for a length difference
	first      int // the first step that differs, -1 if none
	// captureErr says how the graph state's captures fail the rule of one
	// per bucket crossed ("" if they keep it).
	captureErr string
}

// judge compares the streams token by token and the captures with the
// buckets, printing the seed's lines (MISMATCH, LENGTH MISMATCH, the shift
// probe, buckets crossed, captures) to w.
//
// Replay i (i = 1 … n−1) runs at the length eager step i ran at, so a
// fresh state captures exactly one graph per bucket the eager steps
// crossed. Fewer means steps ran without their graph (a path that fell
// back to eager matches eager by construction), more a re-capture within a
// bucket; either makes identical tokens prove nothing of capture/replay.
func judge(w io.Writer, o outcome) result {
	r := result{outcome: o, first: -1}
	if o.graphErr != nil {
		fmt.Fprintf(w, "graph path error: %v\n", o.graphErr)
		return r
	}
	eager, graph := o.eager, o.graph
	for i := range min(len(eager), len(graph)) {
		if eager[i] != graph[i] {
			r.mismatches++
			if r.first < 0 {
				r.first = i
			}
			if r.mismatches <= 5 {
				fmt.Fprintf(w, "MISMATCH step %d: eager=%d graph=%d\n", i, eager[i], graph[i])
			}
		}
	}
	if len(graph) != len(eager) {
		fmt.Fprintf(w, "LENGTH MISMATCH: eager=%d graph=%d\n", len(eager), len(graph))
		r.mismatches++
		if r.first < 0 {
			r.first = min(len(eager), len(graph))
		}
	}
	// Off-by-one probe: a shifted emission convention shows up as a match
	// at ±1.
	if r.mismatches > 0 && len(eager) > 2 && len(graph) > 2 {
		fwd, bwd := 0, 0
		for i := 0; i+1 < len(eager) && i < len(graph); i++ {
			if eager[i+1] == graph[i] {
				fwd++
			}
		}
		for i := 0; i < len(eager) && i+1 < len(graph); i++ {
			if eager[i] == graph[i+1] {
				bwd++
			}
		}
		fmt.Fprintf(w, "shift probe: eager[1..]==graph[..] %d/%d  eager[..]==graph[1..] %d/%d\n", fwd, len(eager)-1, bwd, len(graph)-1)
	}
	fmt.Fprintf(w, "buckets crossed (fa_vec, n_splits): %s\n", formatBuckets(o.crossed))
	switch len(o.crossed) {
	case 0: // N = 1: the one token is the prime's
		fmt.Fprintln(w, "gate: note: with N = 1 no graph is captured or replayed (the one token is the prime's): give N past the next multiple of 64 above P")
	case 1:
		fmt.Fprintln(w, "gate: note: 1 bucket crossed, so no re-capture was exercised: give N past the next multiple of 64 above P (below the split cap)")
	}
	// A stream of one token repeated would match whatever the steps read:
	// equal streams then prove little about the graph path.
	if len(eager) > 1 && !slices.ContainsFunc(eager, func(t int32) bool { return t != eager[0] }) {
		fmt.Fprintf(w, "gate: note: eager's %d tokens are all %d, so equal streams prove little: try another prompt (P) or model\n", len(eager), eager[0])
	}
	fmt.Fprintf(w, "graph (re)captures: %d\n", o.captures)
	if o.captures != len(o.crossed) || !sameBuckets(o.captured, o.crossed) {
		r.captureErr = fmt.Sprintf("the graph path captured %d graph(s) for buckets %s, want one for each bucket crossed", o.captures, formatBuckets(o.captured))
		fmt.Fprintf(w, "CAPTURE MISMATCH: %s\n", r.captureErr)
	}
	return r
}

// verdict prints the PASS or FAIL line and returns the exit status, 0 or
// 1.
func (r result) verdict(w io.Writer) int {
	switch {
	case r.graphErr != nil:
		fmt.Fprintf(w, "Phase-3 gate FAIL: the graph path failed: %v\n", r.graphErr)
	case r.mismatches > 0:
		fmt.Fprintf(w, "Phase-3 gate FAIL: %d/%d mismatches (first @ step %d: eager=%s graph=%s)\n",
			r.mismatches, r.n, r.first, tokenAt(r.eager, r.first), tokenAt(r.graph, r.first))
	case r.captureErr != "":
		fmt.Fprintf(w, "Phase-3 gate FAIL: %d steps identical, but %s\n", r.n, r.captureErr)
	default:
		fmt.Fprintf(w, "Phase-3 gate PASS: %d steps generate_graph == decode_step (BIT-IDENTICAL), buckets=%d captures=%d\n",
			r.n, len(r.crossed), r.captures)
		return 0
	}
	return 1
}

// tokenAt is toks[i], or "none" past its end.
func tokenAt(toks []int32, i int) string {
	if i < len(toks) {
		return strconv.Itoa(int(toks[i]))
	}
	return "none"
}

// sameBuckets reports whether a and b hold the same buckets, in any order.
func sameBuckets(a, b []gpu.Bucket) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// bench times eager DecodeStep + host argmax against graph replay over
// benchTokens tokens after a prime of the prompt (outside the timer). The
// graph window includes its captures (about one per 64 tokens), not
// subtracted.
func bench(stdout io.Writer, g *gpu.Model, prompt []int32) error {
	const bn = benchTokens
	e := g.Engine()
	p := len(prompt)
	cb, err := g.NewCache(p + bn + cacheSlack)
	if err != nil {
		return err
	}
	defer cb.Close()
	var ll []float32
	for _, t := range prompt {
		if ll, err = g.DecodeStep(cb, t); err != nil {
			return err
		}
	}
	in := argmaxT(ll)
	if err := e.Synchronize(); err != nil {
		return err
	}
	t0 := time.Now()
	for range bn {
		if ll, err = g.DecodeStep(cb, in); err != nil {
			return err
		}
		in = argmaxT(ll)
	}
	if err := e.Synchronize(); err != nil {
		return err
	}
	dtE := time.Since(t0).Seconds()

	// Prime alone, measured exactly: GenerateGraph(prompt, 0) primes and
	// generates nothing.
	gp := g.NewGraphDecodeState()
	defer gp.Close()
	// Allocate the state's cache outside the timer, as the eager arm did.
	if _, err := g.GenerateGraph(gp, prompt, bn); err != nil {
		return err
	}
	tp := time.Now()
	if _, err := g.GenerateGraph(gp, prompt, 0); err != nil {
		return err
	}
	dtPrime := time.Since(tp).Seconds()

	gb := g.NewGraphDecodeState()
	defer gb.Close()
	// Allocate outside the timer the cache for all bn tokens (GenerateGraph
	// of the prompt alone would size it for the prompt, and the timed call
	// would grow it). That prime captures no graph: the timed call captures
	// one per bucket, inside the window (recaptures below).
	if err := gb.Reserve(len(prompt) + bn); err != nil {
		return err
	}
	if _, err := g.GenerateGraph(gb, prompt, 0); err != nil {
		return err
	}
	t1 := time.Now()
	if _, err := g.GenerateGraph(gb, prompt, bn); err != nil {
		return err
	}
	dtTotal := time.Since(t1).Seconds()
	dtG := max(dtTotal-dtPrime, 1e-9)
	fmt.Fprintf(stdout, "decode tok/s  eager=%.1f  graph=%.1f  (tg%d @ctx%d, ms/tok eager=%.2f graph=%.2f; graph_total=%.1fms prime=%.1fms recaptures=%d, nodes/graph=%d)\n",
		bn/dtE, bn/dtG, bn, p, dtE*1000/bn, dtG*1000/bn, dtTotal*1000, dtPrime*1000, gb.Captures, gb.Nodes)
	return nil
}

// cpuPart runs what exists without a GPU: the CPU backend's eager greedy
// decode of the same prompt.
func cpuPart(stdout io.Writer, m *model.Model, prompt []int32, n int) (int, error) {
	cb, err := cpu.New(m, cpu.Options{Ctx: len(prompt) + n + cacheSlack})
	if err != nil {
		return 2, err
	}
	defer cb.Close()
	t0 := time.Now()
	var ll []float32
	for _, t := range prompt {
		if ll, err = cb.DecodeStep(t); err != nil {
			return 2, err
		}
	}
	tPrime := time.Since(t0)
	toks := []int32{argmaxT(ll)}
	t1 := time.Now()
	for len(toks) < n {
		if ll, err = cb.DecodeStep(toks[len(toks)-1]); err != nil {
			return 2, err
		}
		toks = append(toks, argmaxT(ll))
	}
	tGen := time.Since(t1)
	distinct := map[int32]bool{}
	for _, t := range toks {
		distinct[t] = true
	}
	// The first token comes from the prime's last step; the rate is the
	// decode steps' after it (none when N = 1).
	rate := ""
	if steps := len(toks) - 1; steps > 0 {
		rate = fmt.Sprintf(", %d decode steps at %.1f tok/s", steps, float64(steps)/tGen.Seconds())
	}
	fmt.Fprintf(stdout, "cpu eager: prime %d tokens in %.2fs, generated %d tokens (%d distinct)%s\n",
		len(prompt), tPrime.Seconds(), len(toks), len(distinct), rate)
	fmt.Fprintf(stdout, "first tokens: %v\n", toks[:min(16, len(toks))])
	fmt.Fprintln(stdout, "Phase-3 gate SKIPPED: no GPU (CPU part done)")
	return 0, nil
}

// defaultModelFile names the cached built-in model; bump the version when
// the file synth writes changes (TestDefaultModelBytes pins its hash), so
// a stale file is not reused. v2: synth writes tokenizer.ggml.merges
// (ee80ef6), without which the cached v1 file's tokenizer does not load.
const defaultModelFile = "default-tiny-bf16-v2.gguf"

// defaultModel synthesises the built-in tiny qwen35 (bf16, deterministic)
// into the user cache directory once and returns its path.
func defaultModel() (string, error) {
	dir, where := defaultModelDir()
	// ^C during the write removes the temporary file rather than leave it.
	w := sigctx.New()
	defer w.Stop()
	path, err := cachedModel(w, dir)
	var ie *sigctx.Interrupted
	if errors.As(err, &ie) {
		return "", err
	}
	if err != nil {
		// The user did not choose this folder: say where it came from and
		// the two ways round it.
		return "", fmt.Errorf("default model (in %s): %w\n"+
			"set %s to a writable directory, or give a model file (gate MODEL.gguf; MODEL=x.gguf go tool mage gate)", where, err, cacheEnv(runtime.GOOS))
	}
	return path, nil
}

// cacheEnv names the variable that os.UserCacheDir reads on goos, for the
// hint when the default model cannot be written there: XDG_CACHE_HOME means
// nothing on Windows (LocalAppData) or macOS (HOME/Library/Caches).
func cacheEnv(goos string) string {
	switch goos {
	case "windows":
		return "LocalAppData"
	case "darwin", "ios":
		return "HOME (the cache is HOME/Library/Caches)"
	}
	return "XDG_CACHE_HOME"
}

// defaultModelDir returns the cached default model's folder and where it
// comes from: memra in the user cache directory, or, without one ($HOME
// unset, a relative XDG_CACHE_HOME), tempCacheName in the temporary
// directory.
func defaultModelDir() (dir, where string) {
	cache, err := os.UserCacheDir()
	if err == nil {
		return filepath.Join(cache, "memra"), "the user cache directory"
	}
	return filepath.Join(os.TempDir(), tempCacheName(os.Getuid())),
		fmt.Sprintf("the temporary directory, as there is no user cache directory: %v", err)
}

// tempCacheName is the cache folder's name in the temporary directory for
// user uid: memra-cache-UID, one per user because that directory is shared
// (and a plain "memra" there is as likely a binary someone built as a
// folder). Windows has no uid (-1) and gives each user a temporary
// directory of their own: memra-cache there.
func tempCacheName(uid int) string {
	if uid < 0 {
		return "memra-cache"
	}
	return fmt.Sprintf("memra-cache-%d", uid)
}

// cachedModel returns the path of the default model in dir, writing it
// first when it is missing or does not load; a signal that cancels w
// stops the write with a *sigctx.Interrupted.
func cachedModel(w *sigctx.Watch, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, defaultModelFile)
	if _, err := os.Stat(path); err == nil {
		err := loads(path)
		if err == nil {
			return path, nil
		}
		// A cached file cut short or damaged would fail every later run.
		fmt.Fprintf(os.Stderr, "[gate] the cached default model does not load (%v); writing it again\n", err)
	}
	fmt.Fprintf(os.Stderr, "[gate] synthesising the built-in tiny qwen35 model into %s\n", path)
	if err := convert.SynthFile(w, path, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		if ie := w.Interrupted(path + " not written"); ie != nil {
			return "", ie
		}
		return "", err
	}
	return path, nil
}

// loads reports why the GGUF at path does not load as a model, if it does not.
func loads(path string) error {
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = model.Load(f)
	return err
}

func formatBuckets(bs []gpu.Bucket) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// argmaxT is sample.Argmax as a token id: the device argmax's rule (largest
// value, lowest index on ties, NaN never wins), so eager and graph compare
// like for like.
func argmaxT(x []float32) int32 { return int32(sample.Argmax(x)) }
