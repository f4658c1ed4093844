package main

import (
	"bufio"
	"crypto/sha256"
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
	"testing"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/tools/internal/sticky"
)

// asGate, set in a child's environment, makes the test binary run as the
// gate itself.
const asGate = "MEMRA_TEST_AS_GATE"

func TestMain(m *testing.M) {
	if os.Getenv(asGate) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestBrokenDriverIsSetupError: a libcuda.so.1 that loads but is not a
// usable driver (here the C library under that name: it has no
// cuGetProcAddress_v2, as a pre-CUDA-12 driver has not) must fail the gate
// with exit status 2, not pass as "no GPU" with the CPU part and exit 0.
func TestBrokenDriverIsSetupError(t *testing.T) {
	if runtime.GOOS != "linux" {
		// Elsewhere no driver loads (Windows: engine/cuda/dl_windows.go);
		// wine lets a Windows test read Linux's /proc/self/maps.
		t.Skipf("the backend loads Linux's libcuda.so.1; this is %s", runtime.GOOS)
	}
	libc := mappedLibrary(t, "libc.so.6")
	dir := t.TempDir()
	if err := os.Symlink(libc, filepath.Join(dir, "libcuda.so.1")); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := convert.SynthFile(t.Context(), model, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], model, "8", "8")
	cmd.Env = append(os.Environ(), asGate+"=1", "LD_LIBRARY_PATH="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("gate with a broken driver: %v, want exit status 2\n%s", err, out)
	}
	for _, want := range []string{"driver is installed but unusable", "cuGetProcAddress_v2"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "SKIPPED") {
		t.Errorf("the gate ran its CPU part:\n%s", out)
	}
}

// mappedLibrary is the path of a shared library this process has mapped,
// from /proc/self/maps; the test skips where there is none (a static
// binary, or no /proc).
func mappedLibrary(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if p := fields[len(fields)-1]; filepath.Base(p) == name {
			return p
		}
	}
	t.Skipf("%s is not mapped in this process", name)
	return ""
}

func TestParseArgs(t *testing.T) {
	good := []struct {
		av   []string
		want args
	}{
		{nil, args{model: "default", p: 64, n: 256}},
		{[]string{"m.gguf"}, args{model: "m.gguf", p: 64, n: 256}},
		{[]string{"m.gguf", "300", "64", "bench"}, args{model: "m.gguf", p: 300, n: 64, bench: true}},
		{[]string{"m.gguf", "1", "1"}, args{model: "m.gguf", p: 1, n: 1}},
	}
	for _, c := range good {
		if got, err := parseArgs(c.av); err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.av, got, err, c.want)
		}
	}
	bad := []struct {
		av   []string
		want string
	}{
		{[]string{"-model", "m.gguf"}, `"-model": the gate takes positional arguments`},
		{[]string{"m.gguf", "--json"}, `"--json": the gate takes positional arguments`},
		{[]string{"m.gguf", "-5"}, `P must be a positive integer, got "-5"`},
		{[]string{"m.gguf", "x"}, `P must be a positive integer, got "x"`},
		{[]string{"m.gguf", "64", "0"}, `N must be a positive integer, got "0"`},
		{[]string{"m.gguf", "99999999999999999999"}, `P=99999999999999999999 is past any context (16777216 tokens at most`},
		// Values that parse but pass model.MaxContext: P + N + cacheSlack
		// wrapped negative and passed the context check (a panic making a
		// prompt of P tokens; N ran the CPU part until its cache was full).
		{[]string{"m.gguf", "16777217"}, `P=16777217 is past any context (16777216 tokens at most`},
		{[]string{"m.gguf", "9223372036854775807", "8"}, `P=9223372036854775807 is past any context`},
		{[]string{"m.gguf", "64", "9223372036854775800"}, `N=9223372036854775800 is past any context`},
		{[]string{"m.gguf", "64", "8", "fast"}, `fourth argument must be "bench"`},
		{[]string{"m.gguf", "64", "8", "bench", "x"}, "too many arguments"},
		{[]string{"bench"}, `"bench" comes fourth`},
		{[]string{"m.gguf", "bench"}, `"bench" comes fourth`},
		{[]string{"m.gguf", "64", "bench"}, `"bench" comes fourth`},
	}
	for _, c := range bad {
		_, err := parseArgs(c.av)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "usage: gate") {
			t.Errorf("%q: %v; want an error with %q and the usage", c.av, err, c.want)
		}
	}
	if _, err := parseArgs([]string{"m.gguf", "--help"}); !errors.Is(err, errHelp) {
		t.Errorf("--help: %v, want errHelp", err)
	}
}

// TestHelp: gate -h says what the gate checks, then the usage, on stdout
// with exit status 0; it gave the usage alone.
func TestHelp(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Env = append(os.Environ(), asGate+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Fatalf("gate -h: %v, stderr %q", err, stderr.String())
	}
	for _, w := range []string{"generates the same greedy tokens as eager decode", "usage: gate [MODEL.gguf|default]", "Exit status:", "MEMRA_KV_FP8=1"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("gate -h lacks %q:\n%s", w, stdout.String())
		}
	}
}

// setCache points os.UserCacheDir at dir on every system (dir/Library/Caches
// on macOS), or, with dir empty, leaves it none, so that no test touches
// the user's own cached model: on Windows, where LocalAppData names the
// cache, setting XDG_CACHE_HOME alone had the tests truncate and rewrite
// it.
func setCache(t *testing.T, dir string) {
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("LocalAppData", dir)
}

// TestDefaultModelRewritesDamaged: a cached default model cut short is
// written again rather than failing every later gate run.
func TestDefaultModelRewritesDamaged(t *testing.T) {
	setCache(t, t.TempDir())
	path, err := defaultModel()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/3); err != nil {
		t.Fatal(err)
	}
	if err := loads(path); err == nil {
		t.Fatal("the truncated file still loads: the test damages nothing")
	}
	if path2, err := defaultModel(); err != nil || path2 != path {
		t.Fatalf("defaultModel after damage: %q, %v", path2, err)
	}
	if err := loads(path); err != nil {
		t.Errorf("rewritten default model does not load: %v", err)
	}
}

// TestDefaultModelBytes: the default model synth writes today is the one
// the cached file's name stands for. A change to synth (a key, the weights'
// generator, the writer) fails here: bump defaultModelFile's version with
// the new hash, or machines that cached the old file keep running it. v1
// outlived such a change (its files lack tokenizer.ggml.merges).
func TestDefaultModelBytes(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		// synth rounds its products so that none fuses into an FMA (the
		// compiler's arm64 listing has none since), but the hash was taken
		// and checked on amd64 alone.
		t.Skipf("the hash is amd64's; this is %s", runtime.GOARCH)
	}
	const want = "eff2a6709011a891d577f86bbfce6216aa5f8601eb69425baf0fb1713b99d424" // of default-tiny-bf16-v2.gguf
	setCache(t, t.TempDir())
	path, err := defaultModel()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want || filepath.Base(path) != "default-tiny-bf16-v2.gguf" {
		t.Errorf("%s has sha256 %s, want %s: synth's output changed; bump defaultModelFile's version and set the new hash here", filepath.Base(path), got, want)
	}
}

// TestDefaultModelNoCacheDir: without a user cache directory ($HOME
// unset) the default model goes to a folder of this user's in the
// temporary directory, not to TMPDIR/memra, which is as likely a memra
// binary someone built there (the gate failed "mkdir /tmp/memra: not a
// directory", saying neither why /tmp nor what to do).
func TestDefaultModelNoCacheDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp) // Windows's os.TempDir
	setCache(t, "")
	if err := os.WriteFile(filepath.Join(tmp, "memra"), []byte("a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := defaultModel()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tmp, fmt.Sprintf("memra-cache-%d", os.Getuid()), defaultModelFile)
	if runtime.GOOS == "windows" {
		want = filepath.Join(tmp, "memra-cache", defaultModelFile) // no uid: Getuid is -1
	}
	if path != want {
		t.Errorf("default model at %s, want %s", path, want)
	}
	if err := loads(path); err != nil {
		t.Error(err)
	}
}

// TestDefaultModelUnwritable: a cache folder the model cannot be written
// to fails with exit status 2, saying where the folder came from and how
// to go round it.
func TestDefaultModelUnwritable(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	setCache(t, notDir)
	code, err := run(nil, io.Discard)
	if code != 2 || err == nil {
		t.Fatalf("exit %d, %v; want exit 2 and an error", code, err)
	}
	for _, want := range []string{"default model (in the user cache directory)", "set " + cacheEnv(runtime.GOOS) + " to a writable directory", "MODEL=x.gguf"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestContextLimit: P and N past what the model's context length leaves
// the gate's caches (P + N + cacheSlack positions) are refused before any
// work, with the limit on P + N spelled out.
func TestContextLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := convert.SynthFile(t.Context(), path, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	code, err := run([]string{path, "64", "4032"}, io.Discard) // tiny's context length is 4096
	if code != 2 || err == nil || !strings.Contains(err.Error(), "P + N may be at most context length − 8") {
		t.Errorf("P+N = 4096: exit %d, %v", code, err)
	}
	// N alone past the context: the error counts the positions asked for
	// (P + N + 8 = 5072), not N.
	if code, err := run([]string{path, "64", "5000"}, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), "= 5072 positions") || !strings.Contains(err.Error(), "5072 positions are past") {
		t.Errorf("N = 5000: exit %d, %v; want the 5072 positions named", code, err)
	}
	// P + N past the largest int: refused, not wrapped round to a size
	// that passes the context check.
	if code, err := run([]string{path, "64", "9223372036854775800"}, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), "N=9223372036854775800 is past any context") {
		t.Errorf("N = 2^63 - 8: exit %d, %v; want exit 2 naming the limit", code, err)
	}
	// A bad MEMRA_KV_FP8 is refused with or without a GPU (before, the CPU
	// part ignored it and exited 0).
	t.Setenv("MEMRA_KV_FP8", "banana")
	if code, err := run([]string{path, "8", "8"}, io.Discard); code != 2 || err == nil || !strings.Contains(err.Error(), `MEMRA_KV_FP8="banana"`) {
		t.Errorf("MEMRA_KV_FP8=banana: exit %d, %v", code, err)
	}
	t.Setenv("MEMRA_KV_FP8", "")
	t.Setenv("MEMRA_PDL", "off")
	if code, err := run([]string{path, "8", "8"}, io.Discard); code != 2 || err == nil || !strings.HasPrefix(err.Error(), `MEMRA_PDL="off"`) {
		t.Errorf("MEMRA_PDL=off: exit %d, %v", code, err)
	}
	t.Setenv("MEMRA_PDL", "")
	t.Setenv("MEMRA_L2WINDOW", "off")
	if code, err := run([]string{path, "8", "8"}, io.Discard); code != 2 || err == nil || !strings.HasPrefix(err.Error(), `MEMRA_L2WINDOW="off"`) {
		t.Errorf("MEMRA_L2WINDOW=off: exit %d, %v", code, err)
	}
	t.Setenv("MEMRA_L2WINDOW", "")
	t.Setenv("MEMRA_ATTN_MMA", "yes")
	if code, err := run([]string{path, "8", "8"}, io.Discard); code != 2 || err == nil || !strings.HasPrefix(err.Error(), `MEMRA_ATTN_MMA="yes"`) {
		t.Errorf("MEMRA_ATTN_MMA=yes: exit %d, %v", code, err)
	}
}

// TestJudgeCaptures: identical streams pass only with one capture per
// bucket the eager steps crossed. A graph path that ran its steps eagerly
// (no capture) matches eager by construction, and one that re-captured
// within a bucket or captured other buckets than the steps crossed did not
// replay what the gate is about; each is a FAIL (exit 1), though no token
// differs.
func TestJudgeCaptures(t *testing.T) {
	toks := []int32{7, 3, 9, 3, 1}
	two := []gpu.Bucket{{FAVec: true, NSplits: 2}, {FAVec: true, NSplits: 3}}
	for _, c := range []struct {
		what     string
		crossed  []gpu.Bucket
		captured []gpu.Bucket
		captures int
		want     string
	}{
		{"one per bucket", two, []gpu.Bucket{two[1], two[0]}, 2,
			"Phase-3 gate PASS: 5 steps generate_graph == decode_step (BIT-IDENTICAL), buckets=2 captures=2\n"},
		{"N=1: no step, no capture", nil, nil, 0,
			"Phase-3 gate PASS: 1 steps generate_graph == decode_step (BIT-IDENTICAL), buckets=0 captures=0\n"},
		{"fell back to eager", two, nil, 0,
			"Phase-3 gate FAIL: 5 steps identical, but the graph path captured 0 graph(s) for buckets [], want one for each bucket crossed\n"},
		{"a graph of one bucket only", two, two[:1], 1,
			"Phase-3 gate FAIL: 5 steps identical, but the graph path captured 1 graph(s) for buckets [(true, 2)], want one for each bucket crossed\n"},
		{"re-captured within a bucket", two, two, 3,
			"Phase-3 gate FAIL: 5 steps identical, but the graph path captured 3 graph(s) for buckets [(true, 2), (true, 3)], want one for each bucket crossed\n"},
		{"other buckets", two, []gpu.Bucket{two[0], {FAVec: true, NSplits: 4}}, 2,
			"Phase-3 gate FAIL: 5 steps identical, but the graph path captured 2 graph(s) for buckets [(true, 2), (true, 4)], want one for each bucket crossed\n"},
	} {
		toks := toks
		if c.crossed == nil {
			toks = toks[:1]
		}
		var out strings.Builder
		r := judge(&out, outcome{n: len(toks), eager: toks, graph: slices.Clone(toks), crossed: c.crossed, captured: c.captured, captures: c.captures})
		code := r.verdict(&out)
		wantCode := 1
		if strings.Contains(c.want, "PASS") {
			wantCode = 0
		}
		if code != wantCode || !strings.HasSuffix(out.String(), c.want) {
			t.Errorf("%s: exit %d, output\n%s\nwant exit %d and last line %q", c.what, code, out.String(), wantCode, c.want)
		}
		if c.crossed == nil && strings.Contains(out.String(), "prove little") {
			t.Errorf("%s: a stream of one token is noted as repeated:\n%s", c.what, out.String())
		}
		if c.crossed == nil && !strings.Contains(out.String(), "with N = 1 no graph is captured or replayed") {
			t.Errorf("%s: no note that nothing was replayed:\n%s", c.what, out.String())
		}
		if got := strings.Contains(out.String(), "CAPTURE MISMATCH"); got != (wantCode == 1) {
			t.Errorf("%s: CAPTURE MISMATCH line %v, want %v:\n%s", c.what, got, wantCode == 1, out.String())
		}
	}
}

// TestJudgeTokens: the seed's lines for differing streams: the first five
// mismatches by step, the shift probe, and the FAIL line with the count
// over N and the first mismatch's step and tokens (exit 1).
func TestJudgeTokens(t *testing.T) {
	eager := []int32{5, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	graph := []int32{5, 2, 3, 4, 5, 6, 7, 8, 9, 0} // eager shifted by one after the first
	b := []gpu.Bucket{{FAVec: true, NSplits: 1}}
	var out strings.Builder
	r := judge(&out, outcome{n: 10, eager: eager, graph: graph, crossed: b, captured: b, captures: 1})
	code := r.verdict(&out)
	var want strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&want, "MISMATCH step %d: eager=%d graph=%d\n", i, eager[i], graph[i])
	}
	want.WriteString("shift probe: eager[1..]==graph[..] 8/9  eager[..]==graph[1..] 0/9\n" +
		"buckets crossed (fa_vec, n_splits): [(true, 1)]\n" +
		"gate: note: 1 bucket crossed, so no re-capture was exercised: give N past the next multiple of 64 above P (below the split cap)\n" +
		"graph (re)captures: 1\n" +
		"Phase-3 gate FAIL: 9/10 mismatches (first @ step 1: eager=1 graph=2)\n")
	if code != 1 || out.String() != want.String() {
		t.Errorf("exit %d, output\n%s\nwant exit 1 and\n%s", code, out.String(), want.String())
	}
}

// TestJudgeGraphError: a graph path that fails where eager ran is a FAIL
// (exit 1) naming the error, not a setup error (exit 2): the failing path
// is the one under test.
func TestJudgeGraphError(t *testing.T) {
	var out strings.Builder
	r := judge(&out, outcome{n: 4, eager: []int32{1, 2, 3, 4}, graphErr: errors.New("gpu: capture bucket (true, 1): boom")})
	want := "graph path error: gpu: capture bucket (true, 1): boom\n" +
		"Phase-3 gate FAIL: the graph path failed: gpu: capture bucket (true, 1): boom\n"
	if code := r.verdict(&out); code != 1 || out.String() != want {
		t.Errorf("exit %d, output\n%s\nwant exit 1 and\n%s", code, out.String(), want)
	}
}

// TestJudgeLengthOnly: a graph stream cut short with every token it has
// equal to eager's fails with the step where it ends, not with the "first
// @ step 0: eager=0 graph=0" of no mismatch at all (the seed's default).
func TestJudgeLengthOnly(t *testing.T) {
	var out strings.Builder
	r := judge(&out, outcome{n: 4, eager: []int32{9, 8, 7, 6}, graph: []int32{9, 8}})
	code := r.verdict(&out)
	want := "Phase-3 gate FAIL: 1/4 mismatches (first @ step 2: eager=7 graph=none)\n"
	if code != 1 || !strings.Contains(out.String(), "LENGTH MISMATCH: eager=4 graph=2\n") || !strings.HasSuffix(out.String(), want) {
		t.Errorf("exit %d, output\n%s\nwant exit 1, the LENGTH MISMATCH line and %q", code, out.String(), want)
	}
}

// TestJudgeShortGraph: a graph stream shorter than eager's and shifted by
// one: each differing step (at most five), the length, the shift probe over
// the steps both streams have, and the FAIL line counting the missing tail
// as one mismatch.
func TestJudgeShortGraph(t *testing.T) {
	b := []gpu.Bucket{{FAVec: true, NSplits: 1}, {FAVec: true, NSplits: 2}}
	var out strings.Builder
	r := judge(&out, outcome{n: 5, eager: []int32{1, 2, 3, 4, 5}, graph: []int32{2, 3, 4}, crossed: b, captured: b, captures: 2})
	code := r.verdict(&out)
	want := "MISMATCH step 0: eager=1 graph=2\n" +
		"MISMATCH step 1: eager=2 graph=3\n" +
		"MISMATCH step 2: eager=3 graph=4\n" +
		"LENGTH MISMATCH: eager=5 graph=3\n" +
		"shift probe: eager[1..]==graph[..] 3/4  eager[..]==graph[1..] 0/2\n" +
		"buckets crossed (fa_vec, n_splits): [(true, 1), (true, 2)]\n" +
		"graph (re)captures: 2\n" +
		"Phase-3 gate FAIL: 4/5 mismatches (first @ step 0: eager=1 graph=2)\n"
	if code != 1 || out.String() != want {
		t.Errorf("exit %d, output\n%s\nwant exit 1 and\n%s", code, out.String(), want)
	}
}

// TestJudgeDegenerateStream: equal streams of one repeated token still
// PASS, with a note that they prove little; a stream with two tokens gets
// no note.
func TestJudgeDegenerateStream(t *testing.T) {
	b := []gpu.Bucket{{FAVec: true, NSplits: 1}, {FAVec: true, NSplits: 2}}
	for _, c := range []struct {
		toks []int32
		note bool
	}{{[]int32{7, 7, 7, 7}, true}, {[]int32{7, 7, 8, 7}, false}} {
		var out strings.Builder
		r := judge(&out, outcome{n: len(c.toks), eager: c.toks, graph: c.toks, crossed: b, captured: b, captures: 2})
		code := r.verdict(&out)
		got := strings.Contains(out.String(), "tokens are all 7, so equal streams prove little")
		if code != 0 || got != c.note {
			t.Errorf("%v: exit %d, note %v, want exit 0 and note %v; output:\n%s", c.toks, code, got, c.note, out.String())
		}
	}
}

// TestBenchContextLimit: with bench, a P whose bench caches (P +
// benchTokens + cacheSlack positions) pass the model's context length is
// refused before any work, though P + N fits the gate's own caches; on a
// GPU, bench's NewCache refused it only after the gate had run, exiting 2
// without the PASS or FAIL line.
func TestBenchContextLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := convert.SynthFile(t.Context(), path, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	// tiny's context length is 4096: 3900 + 8 + 8 fits, 3900 + 256 + 8 does not.
	code, err := run([]string{path, "3900", "8", "bench"}, io.Discard)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "P may be at most context length − 264") {
		t.Errorf("P=3900 bench: exit %d, %v; want exit 2 naming bench's limit on P", code, err)
	}
}

// TestBenchErrorKeepsVerdict: bench runs after the judgement; its failure
// (a device error, memory for its three caches) still prints the verdict,
// leaves a FAIL its exit 1 and makes a PASS exit 2, the error said. It
// returned 2 before the verdict was printed, so a FAIL read as a setup
// error.
func TestBenchErrorKeepsVerdict(t *testing.T) {
	b := []gpu.Bucket{{FAVec: true, NSplits: 1}, {FAVec: true, NSplits: 2}}
	benchErr := errors.New("gpu: cache for 328 tokens: out of memory")
	for _, c := range []struct {
		graph   []int32
		code    int
		verdict string
	}{
		{[]int32{1, 2, 3, 4}, 2, "Phase-3 gate PASS: 4 steps"},
		{[]int32{1, 2, 9, 4}, 1, "Phase-3 gate FAIL: 1/4 mismatches (first @ step 2: eager=3 graph=9)"},
	} {
		var out strings.Builder
		r := judge(&out, outcome{n: 4, eager: []int32{1, 2, 3, 4}, graph: c.graph, crossed: b, captured: b, captures: 2})
		code, err := r.finish(&out, benchErr)
		if code != c.code || !errors.Is(err, benchErr) || !strings.Contains(out.String(), c.verdict) {
			t.Errorf("graph %v: exit %d, %v, output\n%s\nwant exit %d, the bench error and %q", c.graph, code, err, out.String(), c.code, c.verdict)
		}
	}
	var out strings.Builder
	r := judge(&out, outcome{n: 4, eager: []int32{1, 2, 3, 4}, graph: []int32{1, 2, 3, 4}, crossed: b, captured: b, captures: 2})
	if code, err := r.finish(&out, nil); code != 0 || err != nil {
		t.Errorf("PASS without a bench error: exit %d, %v", code, err)
	}
}

// TestTempCacheName: a user with a uid gets a folder of their own in the
// shared temporary directory; Windows's -1 is no uid (its temporary
// directory is the user's), where the name was memra-cache--1.
func TestTempCacheName(t *testing.T) {
	for uid, want := range map[int]string{-1: "memra-cache", 0: "memra-cache-0", 1000: "memra-cache-1000"} {
		if got := tempCacheName(uid); got != want {
			t.Errorf("tempCacheName(%d) = %q, want %q", uid, got, want)
		}
	}
}

// TestCPUPart: without a GPU the gate runs the CPU part and says what it
// skipped (the gate itself, bench, the FP8 cache): the model line on
// stderr, then the decode's counts on stdout (N − 1 decode steps, the first
// 16 tokens) and SKIPPED, exit 0; at N = 1 no decode step is timed.
func TestCPUPart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the child is run without a driver by LD_LIBRARY_PATH; this is %s", runtime.GOOS)
	}
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("an NVIDIA GPU is here: the gate would run, not its CPU part")
	}
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := convert.SynthFile(t.Context(), model, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    string
		want *regexp.Regexp
	}{
		{"17", regexp.MustCompile(`(?s)^gate: no GPU \(.+\)\n` +
			"gate: running the CPU part only; the graph == eager gate needs an NVIDIA GPU and driver\n" +
			"gate: bench skipped: it times the GPU's eager and graph decode\n" +
			"gate: MEMRA_KV_FP8=1 ignored: the FP8 KV cache is the GPU's\n" +
			`cpu eager: prime 8 tokens in [0-9]+\.[0-9]{2}s, generated 17 tokens \(([0-9]+) distinct\), 16 decode steps at [0-9]+\.[0-9] tok/s\n` +
			`first tokens: \[([0-9]+( [0-9]+){15})\]\n` +
			"Phase-3 gate SKIPPED: no GPU \\(CPU part done\\)\n$")},
		{"1", regexp.MustCompile(`(?s)^gate: no GPU .*generated 1 tokens \((1) distinct\)\nfirst tokens: \[([0-9]+)\]\nPhase-3 gate SKIPPED`)},
	} {
		cmd := exec.Command(os.Args[0], model, "8", c.n, "bench")
		cmd.Env = append(os.Environ(), asGate+"=1", "MEMRA_KV_FP8=1", "LD_LIBRARY_PATH="+t.TempDir())
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("N=%s: %v\n%s%s", c.n, err, stdout.String(), stderr.String())
		}
		m := c.want.FindStringSubmatch(stdout.String())
		if m == nil {
			t.Errorf("N=%s: stdout\n%s", c.n, stdout.String())
			continue
		}
		// The distinct count is at least that of the tokens shown.
		seen := map[string]bool{}
		for _, f := range strings.Fields(m[2]) {
			seen[f] = true
		}
		if d, _ := strconv.Atoi(m[1]); d < len(seen) || d > 17 {
			t.Errorf("N=%s: %d distinct, %d among the tokens shown", c.n, d, len(seen))
		}
		if want := fmt.Sprintf("[gate] model %s: qwen35, 4 layers (2 attention), vocab 512, P=8 N=%s\n", model, c.n); stderr.String() != want {
			t.Errorf("N=%s: stderr %q, want %q", c.n, stderr.String(), want)
		}
	}
}

// failWriter fails every write, as stdout on a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputWriteError: when the gate's lines cannot be written, a run
// that would exit 0 (here the CPU part, on a machine without a GPU, or a
// PASS) exits 2 with the write's error; a FAIL keeps its 1 and an earlier
// error stands.
func TestOutputWriteError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := convert.SynthFile(t.Context(), path, convert.SynthOptions{Preset: "tiny", Type: convert.FileBF16, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	out := &sticky.Writer{W: failWriter{}}
	code, err := run([]string{path, "4", "4"}, out)
	code, err = exitStatus(out, code, err)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "writing the gate's output: no space left on device") {
		t.Errorf("a failing stdout: exit %d, %v; want exit 2 naming the write", code, err)
	}
	werr := errors.New("short write")
	for _, c := range []struct {
		code     int
		err      error
		wantCode int
	}{{0, nil, 2}, {1, nil, 1}, {2, errors.New("setup"), 2}} {
		got, err := exitStatus(&sticky.Writer{Err: werr}, c.code, c.err)
		if got != c.wantCode || err == nil || (c.err != nil && err != c.err) {
			t.Errorf("status %d, %v and a failed write: %d, %v; want %d", c.code, c.err, got, err, c.wantCode)
		}
		if got, err := exitStatus(&sticky.Writer{}, c.code, c.err); got != c.code || err != c.err {
			t.Errorf("status %d, %v and no failed write: %d, %v", c.code, c.err, got, err)
		}
	}
}
