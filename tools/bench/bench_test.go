package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
)

func mustParse(t *testing.T, av ...string) config {
	t.Helper()
	c, err := parseArgs(av, io.Discard)
	if err != nil {
		t.Fatalf("parseArgs(%q): %v", av, err)
	}
	return c
}

func TestParseDefaults(t *testing.T) {
	c := mustParse(t)
	want := config{
		presets: []string{"0.8b", "9b"}, types: []string{"bf16", "q8_0"}, kv: []string{"f16"},
		contexts: []int{64, 1024, 4096, 16384, 32768}, tokens: 128, reps: 5, warmup: 1, prompt: 64,
		copyMiB: 2048, out: "results", modelsDir: filepath.Join(os.TempDir(), "memra-bench"), sampled: true,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if mustParse(t, "-sampled=false").sampled {
		t.Error("-sampled=false left the sampled rows on")
	}
	js := c.jobs()
	labels := []string{}
	for _, j := range js {
		labels = append(labels, j.label)
	}
	if got := strings.Join(labels, " "); got != "synth-0.8b-bf16 synth-0.8b-q8_0 synth-9b-bf16 synth-9b-q8_0" {
		t.Fatalf("job order: %s", got)
	}
	if js[2].path != filepath.Join(want.modelsDir, "memra-synth-9b-bf16-seed1.gguf") || js[2].preset != "9b" {
		t.Fatalf("job 2: %+v", js[2])
	}
}

func TestParseFlags(t *testing.T) {
	c := mustParse(t, "-quick")
	if !reflect.DeepEqual(c.contexts, []int{64, 1024}) || c.reps != 3 {
		t.Fatalf("-quick: ctx %v reps %d", c.contexts, c.reps)
	}
	c = mustParse(t, "-quick", "-reps", "7", "-ctx", "4k,64,64,100")
	if !reflect.DeepEqual(c.contexts, []int{64, 100, 4096}) || c.reps != 7 {
		t.Fatalf("-quick with explicit: ctx %v reps %d", c.contexts, c.reps)
	}
	c = mustParse(t, "-model", "/m/a.gguf,/m/b.gguf", "--model", "c.gguf", "-fp8", "-json", "-out", "r2")
	if !reflect.DeepEqual(c.models, []string{"/m/a.gguf", "/m/b.gguf", "c.gguf"}) || c.presets != nil ||
		!reflect.DeepEqual(c.kv, []string{"fp8"}) || !c.jsonOut || c.out != "r2" {
		t.Fatalf("models: %+v", c)
	}
	if js := c.jobs(); len(js) != 3 || js[0].label != "a" || js[2].path != "c.gguf" || js[1].preset != "" {
		t.Fatalf("model jobs: %+v", js)
	}
	c = mustParse(t, "-model", "x.gguf", "-preset", "9b", "-type", "q8_0", "-kv", "f16,fp8")
	if len(c.jobs()) != 2 || c.jobs()[1].label != "synth-9b-q8_0" || len(c.kv) != 2 {
		t.Fatalf("model + preset: %+v", c.jobs())
	}
	c = mustParse(t, "-compare", "old.json", "new.json")
	if c.compare != "old.json" || c.compareTo != "new.json" {
		t.Fatalf("compare: %+v", c)
	}
	// A file name's '|' and control characters would break the Markdown
	// tables and the row keys, and reach the terminal.
	hostile := mustParse(t, "-model", "/m/a|b\x1b[31m.gguf")
	if js := hostile.jobs(); js[0].label != "a_b_[31m" {
		t.Errorf("label of a hostile name: %q", js[0].label)
	}
	// Flags after NEW.json count too (the flag package alone stops at it).
	c = mustParse(t, "-compare", "old.json", "new.json", "-json")
	if c.compareTo != "new.json" || !c.jsonOut {
		t.Fatalf("compare with -json after the files: %+v", c)
	}
	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, errHelp) {
		t.Fatalf("-h: %v", err)
	}
	// Help asked for goes to stdout, as memra's and gate's do, so that
	// bench -h | less shows it; it went to stderr.
	var stdout, stderr bytes.Buffer
	if code, err := run([]string{"-h"}, &stdout, &stderr); code != 0 || err != nil || stderr.Len() != 0 ||
		!strings.Contains(stdout.String(), "usage: bench") || !strings.Contains(stdout.String(), "-compare") || !strings.Contains(stdout.String(), "MEMRA_ATTN_MMA=0|1|cap") {
		t.Errorf("bench -h: exit %d, %v, stdout %q, stderr %q", code, err, stdout.String(), stderr.String())
	}
	// The exit statuses it lists are run's: a failed copy (all) is 1, as a
	// failed model; -peer's pairing nothing is 1 against a run and 2
	// between files, as -compare's; a signal's is the shell's 128 + its
	// number.
	for _, want := range []string{"1 a model or the copy that measures bandwidth failed", "-compare OLD.json or -peer LLAMA.json shares no row with the run",
		"NEW.json sharing no row with -compare's OLD.json or -peer's LLAMA.json", "128 + the signal's number"} {
		if !strings.Contains(strings.Join(strings.Fields(stdout.String()), " "), want) {
			t.Errorf("bench -h does not say %q", want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		av   []string
		want string
	}{
		{[]string{"-ctx", "64,x"}, `"x" is not a positive integer`},
		{[]string{"-ctx", "0"}, "not a positive integer"},
		{[]string{"-ctx", ","}, "empty list"},
		{[]string{"-tokens", "0"}, "-tokens 0 must be at least 1"},
		{[]string{"-reps", "0"}, "-reps 0"},
		{[]string{"-warmup", "-1"}, "-warmup -1"},
		{[]string{"-preset", "70b"}, `unknown preset "70b"`},
		{[]string{"-type", "q2_k"}, `unknown type "q2_k"`},
		{[]string{"-kv", "int8"}, `unknown KV type "int8"`},
		{[]string{"-fp8", "-kv", "f16"}, "-fp8 conflicts"},
		{[]string{"stray"}, "unexpected arguments"},
		{[]string{"-compare", "a.json", "b.json", "c.json"}, "unexpected arguments"},
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-profile", "-2"}, "-profile -2 must be at least 0"},
		{[]string{"-omit", "gdn,mlp"}, `unknown step part "mlp"`},
		// Rows are keyed by the model's label: two files of one base name,
		// or a preset and type given twice, would collide.
		{[]string{"-model", "/a/x.gguf,/b/x.gguf"}, `both be labelled "x" (/a/x.gguf and /b/x.gguf)`},
		{[]string{"-preset", "0.8b,0.8b", "-type", "q8_0"}, `"synth-0.8b-q8_0"`},
		{[]string{"-preset", "0.8b", "-type", "q8_0,Q8_0"}, `"synth-0.8b-q8_0"`},
		{[]string{"-kv", "f16,fp8,f16"}, "-kv: f16 given twice"},
		{[]string{"-kv", ""}, "-kv: no KV type given"},
		{[]string{"-fatbin", ""}, `-fatbin "": want a file`},
		{[]string{"-token-feed", "-eager-chunks"}, "-eager-chunks would be ignored"},
		{[]string{"-token-feed", "-chunk", "16"}, "-chunk would be ignored"},
		{[]string{"-chunk", "65"}, "-chunk 65: want 2 to 64 tokens"},
		{[]string{"-chunk", "-1"}, "-chunk -1: want 2 to 64"},
		{[]string{"-chunk", "1"}, "-token-feed primes one token at a time"},
		// An empty -model, -compare or -out (a script's unset variable) ran
		// the default presets, a run without its comparison, or one whose
		// results could not be written: said at once, as -fatbin "" is.
		{[]string{"-model", ""}, `-model "": want a GGUF file`},
		{[]string{"-model", ","}, `want a GGUF file`},
		{[]string{"-compare", ""}, `-compare "": want OLD.json`},
		{[]string{"-compare", "", "new.json"}, `-compare "": want OLD.json`},
		{[]string{"-out", ""}, `-out "": want a folder`},
		// The value as typed, not with its k cut off.
		{[]string{"-ctx", "0k"}, `"0k" is not a positive integer`},
		{[]string{"-ctx", "64,4kk"}, `"4kk" is not a positive integer`},
		{[]string{"-fatbin", "k.fatbin", "-compare", "a.json", "b.json"}, "so -fatbin would be ignored"},
		{[]string{"-compare", "a.json", "b.json", "-model", "x.gguf", "-reps", "0", "-json"}, "so -model, -reps would be ignored"},
		{[]string{"-ctx", "9999999999999999k"}, "more than 1048576 positions"},
		{[]string{"-ctx", "1025k"}, `1025k is more than 1048576 positions`},
		{[]string{"-copy-mib", "17592186044416"}, "-copy-mib 17592186044416 is more than 65536"},
		// Counts of positions are bounded like -ctx, so that the caches'
		// sums (cacheFor, prompt + 8) cannot wrap negative past the
		// context checks: -prompt's would reach make([]int32, prompt).
		{[]string{"-prompt", "9223372036854775800"}, "-prompt 9223372036854775800 is more than 1048576"},
		{[]string{"-tokens", "9223372036854775800"}, "-tokens 9223372036854775800 is more than 1048576"},
		{[]string{"-profile", "9223372036854775800"}, "-profile 9223372036854775800 is more than 1048576"},
		// warmup + reps would wrap to no repetition at all: an empty report.
		{[]string{"-warmup", "9223372036854775807"}, "-warmup 9223372036854775807 is more than 1048576"},
		{[]string{"-reps", "9223372036854775807"}, "-reps 9223372036854775807 is more than 1048576"},
	} {
		var w bytes.Buffer
		_, err := parseArgs(tc.av, &w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want an error containing %q", tc.av, err, tc.want)
		}
		if w.Len() > 0 { // main prints the error, once
			t.Errorf("parseArgs(%q) wrote %q", tc.av, w.String())
		}
	}
}

// qwen35 9b preset shape (convert presets: 32 layers, full attention every
// 4th, 4 KV heads of 256, 16 K heads and 32 V heads of 128, conv kernel 4).
func config9b() *model.Config {
	c := &model.Config{Arch: model.ArchQwen35, NLayer: 32, NHeadKV: 4, HeadDimK: 256, HeadDimV: 256,
		SSMConvKernel: 4, SSMStateSize: 128, SSMGroupCount: 16, SSMNumVHeads: 32, SSMInnerSize: 4096}
	for i := range 32 {
		k := model.LayerRecurrent
		if i%4 == 3 {
			k = model.LayerAttention
		}
		c.Kinds = append(c.Kinds, k)
	}
	return c
}

func TestRooflineArithmetic(t *testing.T) {
	tr := trafficOf(config9b(), false)
	// Hand-computed: 8 attn layers × 4 heads × 1000 keys × 256 × 2 bytes × (K, V).
	if got := tr.kvBytes(1000); got != 32_768_000 {
		t.Errorf("kv f16 at 1000 keys = %v, want 32768000", got)
	}
	// FP8: 256 one-byte values + a 4-byte scale per row.
	if got := trafficOf(config9b(), true).kvBytes(1000); got != 16_640_000 {
		t.Errorf("kv fp8 at 1000 keys = %v, want 16640000", got)
	}
	// 24 GDN layers × 2 (read+write) × (32·128·128·4 + 8192 channels · 3 taps · 4).
	if got := tr.stateBytes(); got != 105_381_888 {
		t.Errorf("state bytes = %v, want 105381888", got)
	}
	// Steps at positions 64…191 attend to 65…192 keys.
	if got := meanTKV(64, 128); got != 128.5 {
		t.Errorf("meanTKV(64, 128) = %v, want 128.5", got)
	}
	if got := rooflineMs(4.19e9, 4.19e12); math.Abs(got-1) > 1e-12 { // float rounding only
		t.Errorf("rooflineMs = %v, want 1", got)
	}
	if got := rooflineMs(1e9, 0); got != 0 {
		t.Errorf("rooflineMs without bandwidth = %v, want 0", got)
	}
	r := Row{Tokens: 128, RooflineMs: 1.5}
	r.finish([]float64{256, 128 * 2.2, 128 * 1.9}) // 2.0, 2.2, 1.9 ms/token
	if math.Abs(r.MsTok.Median-2) > 1e-12 || math.Abs(r.RooflinePct-75) > 1e-9 ||
		math.Abs(r.TokS.Median-500) > 1e-9 || math.Abs(r.TokS.Max-1000/1.9) > 1e-9 {
		t.Errorf("finish: ms %+v tok/s %+v pct %v", r.MsTok, r.TokS, r.RooflinePct)
	}
}

// TestTokSIsReciprocal: a row's tok/s figures are 1000 / its ms/token
// figures, with an even number of repeats too (2.0 and 4.0 ms: median 3.0
// ms, so 333.3 tok/s, where the median of 500 and 250 tok/s is 375) and
// with one repeat or one token.
func TestTokSIsReciprocal(t *testing.T) {
	for _, tc := range []struct {
		tokens int
		total  []float64
	}{{64, []float64{128, 256}}, {64, []float64{128, 256, 160, 200}}, {1, []float64{3}}, {5, []float64{10, 11, 9, 30, 12}}} {
		r := Row{Tokens: tc.tokens, RooflineMs: 1}
		r.finish(tc.total)
		ms, ts := r.MsTok, r.TokS
		// One division each: float rounding only.
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*b }
		if !near(ts.Median, 1000/ms.Median) || !near(ts.Min, 1000/ms.Max) || !near(ts.Max, 1000/ms.Min) ||
			!near(ts.Q1, 1000/ms.Q3) || !near(ts.Q3, 1000/ms.Q1) {
			t.Errorf("%d tokens, %v ms: tok/s %+v is not 1000 / ms/token %+v", tc.tokens, tc.total, ts, ms)
		}
		if len(r.Samples) != len(tc.total) || !near(r.RooflinePct, 100/ms.Median) {
			t.Errorf("%v ms: samples %v, roofline %% %v", tc.total, r.Samples, r.RooflinePct)
		}
	}
	if got := perSecond(Stat{}); got != (Stat{}) {
		t.Errorf("perSecond of no time = %+v, want zeros (JSON has no Inf)", got)
	}
}

// TestWarmupNote: a report says captures are left out of the timed
// repeats only when a warm-up repeat took them.
func TestWarmupNote(t *testing.T) {
	for _, tc := range []struct {
		warmup      int
		want, wrong string
	}{{1, noteCaptures, noteNoWarmup}, {0, noteNoWarmup, noteCaptures}} {
		ns := runNotes(tc.warmup)
		if !slices.Contains(ns, tc.want) || slices.Contains(ns, tc.wrong) {
			t.Errorf("-warmup %d: notes %q", tc.warmup, ns)
		}
		for _, n := range ns {
			if n != noteCaptures && strings.Contains(n, "excluded from the timed") {
				t.Errorf("-warmup %d: note %q claims captures are excluded", tc.warmup, n)
			}
		}
	}
}

func TestSummarize(t *testing.T) {
	in := []float64{5, 1, 4, 2, 3}
	s := summarize(in)
	if s != (Stat{Median: 3, Min: 1, Max: 5, Q1: 2, Q3: 4}) {
		t.Errorf("odd: %+v", s)
	}
	if in[0] != 5 {
		t.Error("summarize reordered its input")
	}
	if s := summarize([]float64{4, 1, 3, 2}); s.Median != 2.5 || s.Q1 != 1.75 || s.Q3 != 3.25 {
		t.Errorf("even: %+v", s)
	}
	if got := (Stat{Median: 4, Min: 3, Max: 5}).spreadPct(); got != 50 {
		t.Errorf("spread = %v, want 50", got)
	}
}

func row(model, kv string, ctx int, path string, toks, roofMs float64) Row {
	r := Row{Model: model, KV: kv, Context: ctx, Path: path, Tokens: 128, MeanTKV: meanTKV(ctx, 128),
		WeightBytes: 1.6e10, KVBytes: float64(ctx) * 1e3, StateBytes: 1.05e8, RooflineMs: roofMs}
	r.finish([]float64{128 * 1000 / toks, 128 * 1000 / (toks * 1.01), 128 * 1000 / (toks * 0.98)})
	return r
}

func sampleReport() *Report {
	rep := &Report{Version: reportVersion, Started: "2025-01-02T03:04:05Z", Finished: "2025-01-02T03:09:05Z",
		Device:   DeviceReport{Name: "NVIDIA H200", CC: "9.0", SMs: 132, TotalMem: 150_000_000_000},
		Copy:     CopyReport{Bytes: 2 << 30, Reps: 10, Ms: Stat{Median: 1.02, Min: 1.01, Max: 1.05, Q1: 1.015, Q3: 1.03}, BWRW: 4.2e12, Samples: []float64{1.02, 1.01}},
		Settings: Settings{Contexts: []int{64, 1024, 4096}, Tokens: 128, Reps: 3, Warmup: 1, Prompt: 64, KV: "f16"},
		Notes:    []string{noteSynthetic, noteRoofline},
	}
	for i, name := range []string{"synth-9b-bf16", "weird <&> \"name\""} {
		m := ModelReport{Model: name, Path: "/tmp/" + name, KV: "f16", LoadS: 9.5, Captures: 7, Nodes: 300,
			Memory: Memory{WeightsDevice: 18e9, WeightsStep: 16e9, Capacity: 4232, KV: 1e9, State: 5e7, Scratch: 1e6, Caches: 2, DeviceUsed: 21e9},
			Prime:  &Prime{Tokens: 64, Ms: Stat{Median: 300, Min: 290, Max: 310, Q1: 295, Q3: 305}, Samps: []float64{300, 290, 310}}}
		base := 200.0 / float64(i+1)
		for _, ctx := range []int{64, 1024, 4096} {
			slow := 1 - float64(ctx)/20000
			m.Rows = append(m.Rows, row(name, "f16", ctx, "graph", base*slow, 4.0*float64(i+1)),
				row(name, "f16", ctx, "eager", 0.8*base*slow, 4.0*float64(i+1)))
		}
		if i == 0 {
			m.Skipped = []int{32768, 65536}
		}
		rep.Models = append(rep.Models, m)
	}
	rep.Models = append(rep.Models, ModelReport{Model: "broken", KV: "f16", Error: "gpu: tensor x is Q4_K", Rows: []Row{}})
	return rep
}

// TestOmitKeepsLatest: a run of partial steps (-omit), of other kernels
// (-fatbin) or held to less shared memory (MEMRA_SHARED_LIMIT), one still
// running, or one stopped by ^C writes its stamped
// files but leaves latest.*, the report -compare reads, alone.
func TestOmitKeepsLatest(t *testing.T) {
	dir := t.TempDir()
	whole := sampleReport()
	if err := whole.writeFiles(dir, "1"); err != nil {
		t.Fatal(err)
	}
	part := sampleReport()
	part.Settings.Omit = []string{"gdn"}
	if err := part.writeFiles(dir, "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench-2.json")); err != nil {
		t.Errorf("the -omit run's own report: %v", err)
	}
	got, err := readReport(filepath.Join(dir, "latest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Settings.Omit) != 0 {
		t.Errorf("latest.json holds the -omit run (omit %v)", got.Settings.Omit)
	}
	// Nor does a run on another build of the kernels (-fatbin) replace it.
	other := sampleReport()
	other.Settings.Fatbin = "k13.fatbin (sha256 ab12)"
	if err := other.writeFiles(dir, "3"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench-3.json")); err != nil {
		t.Errorf("the -fatbin run's own report: %v", err)
	}
	if got, err = readReport(filepath.Join(dir, "latest.json")); err != nil {
		t.Fatal(err)
	} else if got.Settings.Fatbin != "" {
		t.Errorf("latest.json holds the -fatbin run (%s)", got.Settings.Fatbin)
	}
	// Nor a run whose kernels were held to less shared memory than the
	// device's (MEMRA_SHARED_LIMIT): some ran other forms.
	capped := sampleReport()
	capped.Settings.SharedLimit = 101376
	if err := capped.writeFiles(dir, "4"); err != nil {
		t.Fatal(err)
	}
	if got, err = readReport(filepath.Join(dir, "latest.json")); err != nil {
		t.Fatal(err)
	} else if got.Settings.SharedLimit != 0 {
		t.Errorf("latest.json holds the MEMRA_SHARED_LIMIT run (%d)", got.Settings.SharedLimit)
	}
	// Nor does a run still going (its flushes), one stopped by ^C, one
	// that failed before its models or one without a row.
	going := sampleReport()
	going.Finished, going.Started = "", "2025-01-02T04:00:00Z"
	stopped := sampleReport()
	stopped.Interrupted, stopped.Started = "interrupted (interrupt): synth x: nothing written", "2025-01-02T05:00:00Z"
	failed := sampleReport()
	failed.Error, failed.Started = "copy bandwidth: cuMemcpyDtoD: CUDA_ERROR_ILLEGAL_ADDRESS", "2025-01-02T06:00:00Z"
	empty := sampleReport()
	empty.Started = "2025-01-02T07:00:00Z"
	for i := range empty.Models {
		empty.Models[i].Rows = []Row{}
	}
	for i, r := range []*Report{going, stopped, failed, empty} {
		if err := r.writeFiles(dir, strconv.Itoa(4+i)); err != nil {
			t.Fatal(err)
		}
		if got, err = readReport(filepath.Join(dir, "latest.json")); err != nil {
			t.Fatal(err)
		} else if got.Started != whole.Started {
			t.Errorf("latest.json holds the run started %s, want the whole one (%s)", got.Started, whole.Started)
		}
	}
	// The stopped run's own Markdown says so (it has a Finished time too).
	if md, err := os.ReadFile(filepath.Join(dir, "bench-5.md")); err != nil || !strings.Contains(string(md), ", stopped "+stopped.Finished+": "+stopped.Interrupted) {
		t.Errorf("bench-5.md does not say the run was stopped (%v):\n%s", err, md)
	}
}

func TestReportRoundTrip(t *testing.T) {
	rep := sampleReport()
	dir := t.TempDir()
	if err := rep.writeFiles(dir, "20250102-030405"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"bench-20250102-030405", "latest"} {
		for _, ext := range []string{".json", ".md", ".svg"} {
			if fi, err := os.Stat(filepath.Join(dir, n+ext)); err != nil || fi.Size() == 0 {
				t.Errorf("%s%s: %v", n, ext, err)
			}
		}
	}
	got, err := readReport(filepath.Join(dir, "latest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rep) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, rep)
	}
	md, err := os.ReadFile(filepath.Join(dir, "latest.md"))
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "markdown", string(md), []string{"4.200 TB/s", "| synth-9b-bf16 | f16 | 1k | graph |", "gpu: tensor x is Q4_K", "bytes read + written",
		"**synth-9b-bf16 (f16):** contexts 32768, 65536 not measured: past the model's context length"})
	// A decode table line per row (6 per working model) plus header and rule.
	if n := strings.Count(string(md), "| f16 | "); n < 12 {
		t.Errorf("markdown has %d f16 rows, want at least 12", n)
	}

	bad := filepath.Join(dir, "v0.json")
	if err := os.WriteFile(bad, []byte(`{"version": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readReport(bad); err == nil || !strings.Contains(err.Error(), "version 0") {
		t.Errorf("old version: %v", err)
	}

	// A key twice (two reports' models pasted into one) is refused, not
	// matched by whichever row came last.
	dup := filepath.Join(dir, "dup.json")
	two := &Report{Version: reportVersion, Models: []ModelReport{
		{Model: "m", KV: "f16", Rows: []Row{{Model: "m", KV: "f16", Context: 64, Path: "graph"}, {Model: "m", KV: "f16", Context: 64, Path: "eager"}}},
		{Model: "m", KV: "f16", Rows: []Row{{Model: "m", KV: "f16", Context: 64, Path: "graph"}}},
	}}
	b, err := two.json()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dup, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readReport(dup); err == nil || !strings.Contains(err.Error(), "rows 1 and 3 are both m|f16|64|graph") {
		t.Errorf("duplicate rows: %v", err)
	}
}

func TestCompare(t *testing.T) {
	old := &Report{Version: reportVersion, Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 100}, RooflinePct: 50},
		{Model: "m", KV: "f16", Context: 64, Path: "eager", TokS: Stat{Median: 50}},
		{Model: "m", KV: "f16", Context: 4096, Path: "graph", TokS: Stat{Median: 90}},
	}}}}
	cur := &Report{Version: reportVersion, Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 120}, RooflinePct: 60},
		{Model: "m", KV: "f16", Context: 64, Path: "eager", TokS: Stat{Median: 40}},
		{Model: "m", KV: "fp8", Context: 64, Path: "graph", TokS: Stat{Median: 150}},
	}}}}
	c := compareReports(old, cur)
	if len(c.Rows) != 2 || math.Abs(c.Rows[0].Ratio-1.2) > 1e-12 || math.Abs(c.Rows[1].Ratio-0.8) > 1e-12 {
		t.Fatalf("ratios: %+v", c.Rows)
	}
	if !reflect.DeepEqual(c.OnlyOld, []string{"m|f16|4096|graph"}) || !reflect.DeepEqual(c.OnlyNew, []string{"m|fp8|64|graph"}) {
		t.Fatalf("unmatched: old %v new %v", c.OnlyOld, c.OnlyNew)
	}
	if g, n := c.geomean(""); n != 2 || math.Abs(g-math.Sqrt(0.96)) > 1e-12 {
		t.Errorf("geomean all = %v over %d, want sqrt(0.96) over 2", g, n)
	}
	var b bytes.Buffer
	c.print(&b, "old.json", "new.json")
	wantContains(t, "compare output", b.String(), []string{"**1.200**", "**0.800**", "geomean new/old (graph, 1 rows): 1.200", "only in old (1 row): m|f16: ctx 4096 × graph"})

	// A row whose old speed is 0 (a failed measurement) has no ratio: a dash,
	// not **NaN**, and it stays out of the geomean.
	zero := *old
	zero.Models = []ModelReport{{Model: "m", KV: "f16", Rows: []Row{{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 0}}}}}
	b.Reset()
	zc := compareReports(&zero, cur)
	zc.print(&b, "old.json", "new.json")
	if !strings.Contains(b.String(), "| 0.0 | 120.0 | — |") || strings.Contains(b.String(), "NaN") {
		t.Errorf("zero old speed:\n%s", b.String())
	}
	if _, n := zc.geomean(""); n != 0 {
		t.Errorf("geomean counted %d rows without a ratio", n)
	}

	// A partial-step report is named as such.
	part := *cur
	part.Settings.Omit = []string{"ffn"}
	b.Reset()
	compareReports(old, &part).print(&b, "old.json", "new.json")
	if !strings.Contains(b.String(), "new omitted ffn from every step") {
		t.Errorf("compare of an -omit report does not say so:\n%s", b.String())
	}
	// So is one whose kernels came from another build (-fatbin).
	other := *cur
	other.Settings.Fatbin = "nv13.fatbin (sha256 ab12)"
	b.Reset()
	compareReports(old, &other).print(&b, "old.json", "new.json")
	if !strings.Contains(b.String(), "new ran the kernels of nv13.fatbin (sha256 ab12) (-fatbin)") || strings.Contains(b.String(), "old ran") {
		t.Errorf("compare of a -fatbin report does not say so:\n%s", b.String())
	}
	if fj, js := compareJSON(t, compareReports(old, &other)); fj.FatbinNew != other.Settings.Fatbin || fj.FatbinOld != "" {
		t.Errorf("compare -json of a -fatbin report: %s", js)
	}
	// And one whose kernels were held to less shared memory.
	capped := *cur
	capped.Settings.SharedLimit = 101376
	b.Reset()
	compareReports(&capped, cur).print(&b, "old.json", "new.json")
	if !strings.Contains(b.String(), "old held its kernels to 101376 bytes of shared memory a block (MEMRA_SHARED_LIMIT)") ||
		strings.Contains(b.String(), "new held") {
		t.Errorf("compare of a MEMRA_SHARED_LIMIT report does not say so:\n%s", b.String())
	}
	if fj, js := compareJSON(t, compareReports(&capped, cur)); fj.SharedLimitOld != 101376 || fj.SharedLimitNew != 0 {
		t.Errorf("compare -json of a MEMRA_SHARED_LIMIT report: %s", js)
	}
	// And one whose prompts were primed another way than replayed chunks.
	eager := *cur
	eager.Settings.Priming = "eager-chunks"
	b.Reset()
	compareReports(&eager, cur).print(&b, "old.json", "new.json")
	if !strings.Contains(b.String(), "old primed its prompts with -eager-chunks") || strings.Contains(b.String(), "new primed") {
		t.Errorf("compare of an -eager-chunks report does not say so:\n%s", b.String())
	}
	if fj, js := compareJSON(t, compareReports(&eager, cur)); fj.PrimingOld != "eager-chunks" || fj.PrimingNew != "" {
		t.Errorf("compare -json of an -eager-chunks report: %s", js)
	}

	// Compare-only mode through run: no GPU needed.
	dir := t.TempDir()
	for name, r := range map[string]*Report{"old.json": old, "new.json": cur} {
		if err := r.writeFiles(dir, "x"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "bench-x.json"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	code, err := run([]string{"-compare", filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")}, &out, io.Discard)
	if err != nil || code != 0 || !strings.Contains(out.String(), "**1.200**") {
		t.Fatalf("run -compare: code %d err %v\n%s", code, err, out.String())
	}
	// With -json, the same comparison as JSON.
	out.Reset()
	code, err = run([]string{"-json", "-compare", filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")}, &out, io.Discard)
	var cj comparisonJSON
	if err != nil || code != 0 {
		t.Fatalf("run -json -compare: code %d err %v", code, err)
	}
	if err := json.Unmarshal(out.Bytes(), &cj); err != nil {
		t.Fatalf("run -json -compare: %v\n%s", err, out.String())
	}
	if len(cj.Rows) != 2 || cj.Rows[0].Model != "m" || cj.Rows[0].Context != 64 || cj.Rows[0].Path != "graph" ||
		cj.Rows[0].Ratio == nil || math.Abs(*cj.Rows[0].Ratio-1.2) > 1e-12 || math.Abs(cj.Geomean["all"]-math.Sqrt(0.96)) > 1e-12 ||
		!reflect.DeepEqual(cj.OnlyOld, []string{"m|f16|4096|graph"}) {
		t.Errorf("run -json -compare: %+v", cj)
	}
	// Reports with no row in common: an error, not an empty table.
	empty := &Report{Version: reportVersion, Models: []ModelReport{}}
	if err := empty.writeFiles(dir, "e"); err != nil {
		t.Fatal(err)
	}
	if code, err := run([]string{"-compare", filepath.Join(dir, "old.json"), filepath.Join(dir, "bench-e.json")}, &out, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), "no rows in common") {
		t.Errorf("compare with an empty report: code %d err %v", code, err)
	}
	// After a run, the same: said on stderr, no table, and false (exit 1).
	var table, msg bytes.Buffer
	if compareRun(empty, cur, "e.json", &table, &msg) || table.Len() != 0 || !strings.Contains(msg.String(), "-compare e.json: no rows in common with this run") {
		t.Errorf("compareRun with no row in common: table %q, stderr %q", table.String(), msg.String())
	}
	if !compareRun(old, cur, "old.json", &table, &msg) || !strings.Contains(table.String(), "**1.200**") {
		t.Errorf("compareRun: table %q", table.String())
	}
	if code, err := run([]string{"-compare", filepath.Join(dir, "missing.json"), filepath.Join(dir, "new.json")}, &out, io.Discard); code != 2 || err == nil {
		t.Errorf("missing file: code %d err %v", code, err)
	}
	// A -model path that is not there, or not a file, is named before the
	// GPU is looked for (without one, it was "needs an NVIDIA GPU" alone).
	for _, p := range []string{filepath.Join(dir, "nope.gguf"), dir} {
		if code, err := run([]string{"-model", p}, &out, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("-model %s: code %d err %v", p, code, err)
		}
	}
	// An -out that cannot take the results is named before the GPU is
	// looked for: with one, the run measured every model and only then
	// failed to write them.
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{notDir, filepath.Join(notDir, "sub")} {
		if code, err := run([]string{"-quick", "-out", p}, &out, io.Discard); code != 2 || err == nil ||
			!strings.Contains(err.Error(), "-out "+p) || strings.Contains(err.Error(), "GPU") {
			t.Errorf("-out %s: code %d err %v", p, code, err)
		}
	}
	// One that is not there yet is made by the run: nothing is left
	// behind by the check (no GPU here, or the fake MEMRA_PDL below, stops
	// the run after it).
	fresh := filepath.Join(dir, "new", "results")
	t.Setenv("MEMRA_PDL", "off")
	if code, err := run([]string{"-quick", "-out", fresh}, &out, io.Discard); code != 2 || err == nil || strings.Contains(err.Error(), "-out") {
		t.Errorf("-out %s (to make): code %d err %v", fresh, code, err)
	}
	t.Setenv("MEMRA_PDL", "")
	if ents, _ := os.ReadDir(dir); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".bench") || e.Name() == "new" }) {
		t.Errorf("the -out check left %v in %s", ents, dir)
	}
	// So is a -fatbin that is missing or empty.
	emptyImage := filepath.Join(dir, "empty.fatbin")
	if err := os.WriteFile(emptyImage, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "nope.fatbin"), emptyImage} {
		if code, err := run([]string{"-fatbin", p}, &out, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "GPU") {
			t.Errorf("-fatbin %s: code %d err %v", p, code, err)
		}
	}
	// A bad MEMRA_PDL is named, with or without a GPU, not read as "no GPU".
	// MEMRA_KV_FP8 is checked first: unset here, or a shell that exported
	// MEMRA_KV_FP8=1 for the gate fails these checks on its message.
	t.Setenv("MEMRA_KV_FP8", "")
	t.Setenv("MEMRA_PDL", "off")
	if code, err := run([]string{"-quick"}, &out, io.Discard); code != 2 || err == nil || !strings.HasPrefix(err.Error(), `MEMRA_PDL="off"`) {
		t.Errorf("MEMRA_PDL=off: code %d err %v", code, err)
	}
	t.Setenv("MEMRA_PDL", "")
	t.Setenv("MEMRA_ATTN_MMA", "yes")
	if code, err := run([]string{"-quick"}, &out, io.Discard); code != 2 || err == nil || !strings.HasPrefix(err.Error(), `MEMRA_ATTN_MMA="yes"`) {
		t.Errorf("MEMRA_ATTN_MMA=yes: code %d err %v", code, err)
	}
	t.Setenv("MEMRA_ATTN_MMA", "")
	// bench's KV type is -kv's: MEMRA_KV_FP8=1 without -kv fp8 ran f16
	// without a word, and a bad value passed.
	for _, c := range []struct{ env, want string }{{"1", "give -kv fp8"}, {"yes", `MEMRA_KV_FP8="yes"`}} {
		t.Setenv("MEMRA_KV_FP8", c.env)
		if code, err := run([]string{"-quick"}, &out, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MEMRA_KV_FP8=%s: code %d err %v", c.env, code, err)
		}
	}
	// With -kv fp8 it agrees and passes: the next check (MEMRA_PDL) speaks.
	t.Setenv("MEMRA_KV_FP8", "1")
	t.Setenv("MEMRA_PDL", "off")
	if code, err := run([]string{"-quick", "-kv", "f16,fp8"}, &out, io.Discard); code != 2 || err == nil || !strings.HasPrefix(err.Error(), `MEMRA_PDL="off"`) {
		t.Errorf("MEMRA_KV_FP8=1 -kv f16,fp8: code %d err %v", code, err)
	}
}

// svgStats parses an SVG, failing on malformed XML, and returns the
// polylines' classes with their point counts.
func svgStats(t *testing.T, data []byte) map[string][]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	lines := map[string][]int{}
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			if el.Name.Local != "polyline" {
				continue
			}
			var class, points string
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "class":
					class = a.Value
				case "points":
					points = a.Value
				}
			}
			lines[class] = append(lines[class], len(strings.Fields(points)))
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced SVG elements: depth %d", depth)
	}
	return lines
}

func TestChart(t *testing.T) {
	var b bytes.Buffer
	if err := writeChart(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	lines := svgStats(t, b.Bytes())
	// Two models with rows (the broken one has none) × {graph, eager,
	// roofline}, three contexts each.
	for _, class := range []string{"series graph", "series eager", "series roofline"} {
		if got := lines[class]; !reflect.DeepEqual(got, []int{3, 3}) {
			t.Errorf("%s: point counts %v, want [3 3]", class, got)
		}
	}
	if len(lines) != 3 {
		t.Errorf("polyline classes %v, want 3", lines)
	}
	if !strings.Contains(b.String(), "weird &lt;&amp;&gt;") || !strings.Contains(b.String(), `stroke-dasharray="8 5"`) {
		t.Error("chart lacks the escaped label or the dashed roofline")
	}

	b.Reset()
	if err := writeChart(&b, &Report{}); err != nil {
		t.Fatal(err)
	}
	if lines := svgStats(t, b.Bytes()); len(lines) != 0 || !strings.Contains(b.String(), "no data") {
		t.Errorf("empty chart: %v", lines)
	}
}

func TestLogAxis(t *testing.T) {
	a := logAxis{lo: 10, hi: 1000, p0: 500, p1: 100}
	for _, tc := range []struct{ v, want float64 }{{10, 500}, {1000, 100}, {100, 300}} {
		if got := a.pos(tc.v); math.Abs(got-tc.want) > 1e-9 { // float log10 rounding
			t.Errorf("pos(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if got := ticks125(3, 600); !reflect.DeepEqual(got, []float64{5, 10, 20, 50, 100, 200, 500}) {
		t.Errorf("ticks125(3, 600) = %v", got)
	}
	if got := tickLabel(32768) + " " + tickLabel(64) + " " + tickLabel(2000); got != "32k 64 2k" {
		t.Errorf("tick labels %q", got)
	}
}

// TestProfileShares checks the -profile aggregation: per-step launches,
// microseconds and bytes per kernel and shape over two steps, shares of the
// total, largest first, the bytes' rate against the copy bandwidth, and the
// Markdown table that prints them. The expected figures are worked out by
// hand from the launches below (5 TB/s copy bandwidth).
func TestProfileShares(t *testing.T) {
	us := func(n float64) time.Duration { return time.Duration(n * float64(time.Microsecond)) }
	gu := gpu.Launch{Kernel: "matvec_bf16", Shape: "7168×1024", Weights: 16e6}
	down := gpu.Launch{Kernel: "matvec_bf16", Shape: "1024×3584", Weights: 8e6, Time: us(10)}
	delta := gpu.Launch{Kernel: "gdn_delta", Shape: "16 heads", Cache: 2e6}
	emb := gpu.Launch{Kernel: "embed_bf16", Shape: "1 row of 1000×1024", Weights: 3000}
	at := func(l gpu.Launch, n float64) gpu.Launch { l.Time = us(n); return l }
	all := []gpu.Launch{
		at(emb, 2), at(gu, 30), at(delta, 4), down,
		at(emb, 4), at(gu, 34), at(delta, 6), down,
	}
	p := newProfile(1024, 2, all, 5e12)
	want := []KernelShare{
		{Kernel: "matvec_bf16", Shape: "7168×1024", Launches: 1, Us: 32, Pct: 64, MB: 16, TBs: 0.5, CopyPct: 10},
		{Kernel: "matvec_bf16", Shape: "1024×3584", Launches: 1, Us: 10, Pct: 20, MB: 8, TBs: 0.8, CopyPct: 16},
		{Kernel: "gdn_delta", Shape: "16 heads", Launches: 1, Us: 5, Pct: 10, MB: 2, TBs: 0.4, CopyPct: 8},
		{Kernel: "embed_bf16", Shape: "1 row of 1000×1024", Launches: 1, Us: 3, Pct: 6, MB: 0.003, TBs: 0.001, CopyPct: 0.02},
	}
	if p.Context != 1024 || p.Steps != 2 || math.Abs(p.TotalUs-50) > 1e-9 || len(p.Kernels) != len(want) {
		t.Fatalf("profile %+v, want context 1024, 2 steps, 50 µs, %d kernels", p, len(want))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) } // float sums of exact inputs
	for i, k := range p.Kernels {
		w := want[i]
		if k.Kernel != w.Kernel || k.Shape != w.Shape || !near(k.Launches, w.Launches) || !near(k.Us, w.Us) || !near(k.Pct, w.Pct) ||
			!near(k.MB, w.MB) || !near(k.TBs, w.TBs) || !near(k.CopyPct, w.CopyPct) {
			t.Errorf("kernel %d: %+v, want %+v", i, k, w)
		}
	}
	p.Path = "graph"
	rep := &Report{Models: []ModelReport{{Model: "m", KV: "f16", Profile: []Profile{p}}}}
	var b bytes.Buffer
	rep.profileTables(&b)
	wantContains(t, "profile table", b.String(), []string{
		"## Kernel time per graph step: m f16 @ctx 1k (2 steps, 50.0 µs of kernels per step)",
		"| matvec_bf16 | 7168×1024 | 1 | 32.0 | 64.0 | 16.00 | 0.50 | 10 |",
		"| gdn_delta | 16 heads | 1 | 5.0 | 10.0 | 2.00 | 0.40 | 8 |",
		"| embed_bf16 | 1 row of 1000×1024 | 1 | 3.0 | 6.0 | 0.00 | 0.00 | 0 |",
	})
	// Without a copy bandwidth, or without bytes, no rate is claimed.
	none := newProfile(64, 1, []gpu.Launch{{Kernel: "attn_combine", Time: us(2)}}, 0)
	if k := none.Kernels[0]; k.MB != 0 || k.TBs != 0 || k.CopyPct != 0 {
		t.Errorf("a launch without bytes: %+v", k)
	}
	b.Reset()
	(&Report{Models: []ModelReport{{Model: "m", KV: "f16", Profile: []Profile{none}}}}).profileTables(&b)
	if !strings.Contains(b.String(), "| attn_combine |  | 1 | 2.0 | 100.0 | 0.00 | — | — |") {
		t.Errorf("profile table of a launch without bytes:\n%s", b.String())
	}
	// A prefill profile: its own table, per chunk, after the model's step
	// tables, and its tokens in the JSON.
	pre := newProfile(0, 2, []gpu.Launch{
		{Kernel: "matvec_batch_q8_0", Shape: "4096×12288", Weights: 53e6, Time: us(40)},
		{Kernel: "matvec_batch_q8_0", Shape: "4096×12288", Weights: 53e6, Time: us(60)},
	}, 5e12)
	pre.Tokens = 8
	b.Reset()
	(&Report{Models: []ModelReport{{Model: "m", KV: "f16", Profile: []Profile{p}, PrefillProfile: &pre}}}).profileTables(&b)
	out := b.String()
	wantContains(t, "prefill profile table", out, []string{
		"## Kernel time per prefill chunk: m f16 (a prompt's first 2 chunks of 8 tokens, 50.0 µs of kernels per chunk)",
		"| kernel | shape | launches/chunk | µs/chunk | % | MB/chunk | TB/s | % of copy |",
		"| matvec_bf16 | 7168×1024 | 1 | 32.0 | 64.0 | 16.00 | 0.50 | 10 |",
		"| matvec_batch_q8_0 | 4096×12288 | 1 | 50.0 | 100.0 | 53.00 | 1.06 | 21 |",
	})
	if strings.Index(out, "prefill chunk") < strings.Index(out, "per step:") {
		t.Errorf("the prefill table comes before the step table:\n%s", out)
	}
	js, err := json.Marshal(ModelReport{PrefillProfile: &pre})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"prefill_profile":{"context":0,"steps":2,"tokens":8,`) {
		t.Errorf("JSON of a prefill profile: %s", js)
	}
}

// TestFitContexts: contexts whose cache (context + timed tokens + 8) is
// past the model's context length are skipped; none fitting is an error
// naming the flag and the key.
func TestFitContexts(t *testing.T) {
	m := &model.Config{Arch: "qwen35", ContextLength: 4096}
	c := config{contexts: []int{64, 1024, 4024, 4025, 8192}, tokens: 64, prompt: 64}
	fit, skipped, err := c.fitContexts(m)
	if err != nil || !slices.Equal(fit, []int{64, 1024, 4024}) || !slices.Equal(skipped, []int{4025, 8192}) {
		t.Errorf("fit %v, skipped %v, %v; want [64 1024 4024], [4025 8192]", fit, skipped, err)
	}
	c.contexts = []int{8192}
	if _, _, err := c.fitContexts(m); err == nil || !strings.Contains(err.Error(), "-ctx 8192 needs a cache of 8264 positions") || !strings.Contains(err.Error(), "qwen35.context_length") {
		t.Errorf("error %v; want one naming -ctx 8192, its cache and qwen35.context_length", err)
	}
	// A priming prompt past the context length is named as the cause, not
	// the first context (whose cache it made too large).
	c.contexts, c.prompt = []int{64, 1024}, 5000
	if _, _, err := c.fitContexts(m); err == nil || !strings.Contains(err.Error(), "-prompt 5000 needs a cache of 5008 positions") {
		t.Errorf("-prompt 5000: error %v; want one naming -prompt and its cache", err)
	}
}

// TestContextPastModelRefusedBeforeUpload: a model none of whose contexts
// fit (the tiny fixture's context length is 4096) fails before any GPU work
// (the bencher has no engine here, so reaching the upload would panic).
func TestContextPastModelRefusedBeforeUpload(t *testing.T) {
	path := filepath.Join("..", "..", "engine", "testdata", "fixtures", "qwen35-tiny-f32.gguf")
	b := &bencher{c: config{contexts: []int{8192, 16384}, tokens: 64, prompt: 64}, log: io.Discard}
	err := b.model(job{label: "tiny", path: path}, "f16", &ModelReport{})
	if err == nil || !strings.Contains(err.Error(), "-ctx 8192") || !strings.Contains(err.Error(), "qwen35.context_length") {
		t.Fatalf("error %v; want one naming -ctx 8192 and qwen35.context_length", err)
	}
}

// TestSampledNotesMatchDefaults: the -sampled help and the report's note
// spell out memra run's defaults (sample.Default*), which benchSampling
// takes; a change of the defaults must reach the text too.
func TestSampledNotesMatchDefaults(t *testing.T) {
	var buf bytes.Buffer
	parseArgs([]string{"-h"}, &buf) // only the help text matters here
	help := buf.String()
	want := fmt.Sprintf("top-k %d, temperature %v, top-p %v, min-p %v", sample.DefaultTopK, sample.DefaultTemperature, sample.DefaultTopP, sample.DefaultMinP)
	if !strings.Contains(help, want) {
		t.Errorf("-h does not say %q", want)
	}
	if w := fmt.Sprintf("top %d (temperature %v, top-p %v, min-p %v: memra run's defaults)", sample.DefaultTopK, sample.DefaultTemperature, sample.DefaultTopP, sample.DefaultMinP); !strings.Contains(notePaths, w) {
		t.Errorf("notePaths does not say %q", w)
	}
}

// TestCompareOtherWork: rows of one key that count different bytes per
// token (another model file under the same label, another -tokens) are
// marked, named with what differs and left out of the geomeans, on
// run271's real report against a copy whose 9b-bf16 is another model.
func TestCompareOtherWork(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "results", "h200-run271.json")
	old, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	same := compareReports(old, cur)
	if g, n := same.geomean("graph"); n != 50 || g != 1 {
		t.Fatalf("run271 against itself: geomean %v over %d graph rows, want 1 over 50", g, n)
	}
	for i := range cur.Models {
		if cur.Models[i].Model != "9b-bf16" {
			continue
		}
		for j := range cur.Models[i].Rows {
			cur.Models[i].Rows[j].WeightBytes /= 2
			cur.Models[i].Rows[j].TokS.Median *= 2
		}
	}
	c := compareReports(old, cur)
	if len(c.Rows) != 150 {
		t.Fatalf("%d rows matched, want 150", len(c.Rows))
	}
	if g, n := c.geomean("graph"); n != 45 || g != 1 {
		t.Errorf("geomean %v over %d graph rows, want 1 over the 45 of the same work", g, n)
	}
	var b bytes.Buffer
	c.print(&b, "old.json", "new.json")
	wantContains(t, "compare output", b.String(), []string{"| 9b-bf16 | f16 | 64 | graph | 242.5 | 484.9 | **2.000** ≠ |",
		"9b-bf16|f16|32768|eager (weights 15875.5 → 7937.8 MB)", "geomean new/old (graph, 45 rows): 1.000"})
	if strings.Count(b.String(), " ≠ |") != 15 {
		t.Errorf("%d rows marked ≠, want 15", strings.Count(b.String(), " ≠ |"))
	}
	cj, _ := compareJSON(t, c)
	marked := 0
	for _, r := range cj.Rows {
		if (r.OtherWork != "") != (r.Model == "9b-bf16") {
			t.Errorf("row %s %d %s: other_work %q", r.Model, r.Context, r.Path, r.OtherWork)
		}
		if r.OtherWork != "" {
			marked++
		}
	}
	if marked != 15 || cj.Geomean["all"] != 1 {
		t.Errorf("JSON: %d rows of other work, geomean all %v; want 15 and 1", marked, cj.Geomean["all"])
	}
}

// chartTick is a tick label's value and its pixel on its axis.
type chartTick struct {
	v, px float64
}

// parseTickLabel inverts tickLabel for the labels a chart of contexts
// and tok/s shows ("64", "1k" of a context is 1024, of tok/s 1000).
func parseTickLabel(t *testing.T, s string, kilo float64) float64 {
	t.Helper()
	mul := 1.0
	if v, ok := strings.CutSuffix(s, "k"); ok {
		s, mul = v, kilo
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("tick label %q: %v", s, err)
	}
	return v * mul
}

// TestChartRun271 draws run271's real report and reads the SVG back as
// XML: every coordinate is finite, the axes are labelled, and each
// roofline line's vertices sit at 1000 / roofline ms of its model at each
// context, read through the axes' own tick labels.
func TestChartRun271(t *testing.T) {
	rep, err := readReport(filepath.Join("..", "..", "docs", "results", "h200-run271.json"))
	if err != nil {
		t.Fatal(err)
	}
	// One failed measurement must not put a NaN into the drawing.
	rep.Models[0].Rows[0].TokS, rep.Models[0].Rows[0].MsTok = Stat{}, Stat{}
	var b bytes.Buffer
	if err := writeChart(&b, rep); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	var xt, yt []chartTick
	var lines [][][2]float64 // the roofline polylines' vertices, in order
	var texts []string
	var inText *xml.StartElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
				if strings.Contains(a.Value, "NaN") || strings.Contains(a.Value, "Inf") {
					t.Errorf("<%s %s=%q>", el.Name.Local, a.Name.Local, a.Value)
				}
			}
			switch el.Name.Local {
			case "text":
				e := el.Copy()
				inText = &e
			case "polyline":
				if attr["class"] != "series roofline" {
					continue
				}
				var pts [][2]float64
				for _, p := range strings.Fields(attr["points"]) {
					var x, y float64
					if _, err := fmt.Sscanf(p, "%g,%g", &x, &y); err != nil {
						t.Fatalf("point %q: %v", p, err)
					}
					pts = append(pts, [2]float64{x, y})
				}
				lines = append(lines, pts)
			}
		case xml.CharData:
			if inText == nil {
				continue
			}
			s := string(el)
			texts = append(texts, s)
			attr := map[string]string{}
			for _, a := range inText.Attr {
				attr[a.Name.Local] = a.Value
			}
			x, _ := strconv.ParseFloat(attr["x"], 64)
			y, _ := strconv.ParseFloat(attr["y"], 64)
			switch {
			case attr["text-anchor"] == "end": // a tok/s tick, 4 px below its line
				yt = append(yt, chartTick{parseTickLabel(t, s, 1000), y - 4})
			case attr["text-anchor"] == "middle" && !strings.Contains(s, " "): // a context tick
				xt = append(xt, chartTick{parseTickLabel(t, s, 1024), x})
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				inText = nil
			}
		}
	}
	for _, want := range []string{"context (tokens, log scale)", "tokens/s (log scale)", "roofline at copy bandwidth 4.15 TB/s (read+write)"} {
		if !slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("chart lacks the text %q", want)
		}
	}
	if len(xt) != 5 || len(yt) < 2 {
		t.Fatalf("ticks: x %v, y %v; want the 5 contexts and at least 2 tok/s", xt, yt)
	}
	// The axes are log10: value = 10^(a + b·px), fitted on the two
	// outermost ticks.
	inv := func(ts []chartTick, px float64) float64 {
		lo, hi := ts[0], ts[len(ts)-1]
		f := (px - lo.px) / (hi.px - lo.px)
		return math.Pow(10, math.Log10(lo.v)+f*(math.Log10(hi.v)-math.Log10(lo.v)))
	}
	// The i-th roofline line is the i-th model's (chartSeries keeps their
	// order).
	if len(lines) != len(rep.Models) {
		t.Fatalf("%d roofline lines, want one per model (%d)", len(lines), len(rep.Models))
	}
	for i, m := range rep.Models {
		pts := lines[i]
		if len(pts) != len(rep.Settings.Contexts) {
			t.Errorf("%s: %d roofline vertices, want %d", m.Model, len(pts), len(rep.Settings.Contexts))
			continue
		}
		for j, p := range pts {
			ctx, toks := inv(xt, p[0]), inv(yt, p[1])
			var want float64
			for _, r := range m.Rows {
				if r.Context == rep.Settings.Contexts[j] {
					want = 1000 / r.RooflineMs
				}
			}
			// Coordinates are written to 0.1 px; at ~280 px a decade that is
			// 0.1% of a value: 0.3% allows the two ticks' rounding too.
			if math.Abs(ctx/float64(rep.Settings.Contexts[j])-1) > 3e-3 || math.Abs(toks/want-1) > 3e-3 {
				t.Errorf("%s roofline vertex %d at (%v, %v) reads as context %.1f, %.1f tok/s; want %d, %.1f",
					m.Model, j, p[0], p[1], ctx, toks, rep.Settings.Contexts[j], want)
			}
		}
	}
}

// TestChartLegendFits: every legend entry lies inside the SVG's height,
// with 12 models (36 entries; 620 px held 31) as with run271's 10.
func TestChartLegendFits(t *testing.T) {
	rep, err := readReport(filepath.Join("..", "..", "docs", "results", "h200-run271.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, 12} {
		r := *rep
		r.Models = nil
		for i := range n {
			m := rep.Models[i%len(rep.Models)]
			m.Model = fmt.Sprintf("m%d", i)
			r.Models = append(r.Models, m)
		}
		var b bytes.Buffer
		if err := writeChart(&b, &r); err != nil {
			t.Fatal(err)
		}
		var svg struct {
			Height float64 `xml:"height,attr"`
			Texts  []struct {
				Y    float64 `xml:"y,attr"`
				Text string  `xml:",chardata"`
			} `xml:"text"`
		}
		if err := xml.Unmarshal(b.Bytes(), &svg); err != nil {
			t.Fatal(err)
		}
		legend := 0
		for _, tx := range svg.Texts {
			if strings.HasPrefix(tx.Text, "m") && strings.Contains(tx.Text, " f16 ") {
				legend++
				if tx.Y > svg.Height {
					t.Errorf("%d models: legend %q at y %v, below the %v px SVG", n, tx.Text, tx.Y, svg.Height)
				}
			}
		}
		if legend != 3*n {
			t.Errorf("%d models: %d legend entries, want %d", n, legend, 3*n)
		}
		if n == 10 && svg.Height != 620 {
			t.Errorf("10 models: height %v, want 620 (the legend fits)", svg.Height)
		}
	}
}

// TestChartColorsDistinct: every model × kv of run271's chart (perf.md's
// ten) has its own color; with eight, the first and ninth models' lines
// were drawn alike.
func TestChartColorsDistinct(t *testing.T) {
	rep, err := readReport(filepath.Join("..", "..", "docs", "results", "h200-run271.json"))
	if err != nil {
		t.Fatal(err)
	}
	byColor := map[string]string{}
	for _, s := range chartSeries(rep) {
		key := strings.TrimSuffix(s.label, " "+s.kind)
		if other, ok := byColor[s.color]; ok && other != key {
			t.Errorf("%s and %s share color %s", other, key, s.color)
		}
		byColor[s.color] = key
	}
	if len(byColor) != len(rep.Models) {
		t.Errorf("%d colors for %d models", len(byColor), len(rep.Models))
	}
}
