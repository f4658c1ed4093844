package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/tools/internal/sticky"
)

func oneRowReport(path string, tokS, weights float64) *Report {
	return &Report{Version: reportVersion, Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: path, TokS: Stat{Median: tokS}, WeightBytes: weights},
	}}}}
}

// TestCompareFailedNew: a new row without a speed (0: its measurement
// failed) has no ratio, as an old one without does: not 0, which would
// read as "infinitely slower" and sink the geomean to 0. Its JSON ratio is
// null, not a NaN that json.Marshal refuses.
func TestCompareFailedNew(t *testing.T) {
	for _, c := range []struct{ old, new float64 }{{100, 0}, {0, 100}, {0, 0}} {
		cmp := compareReports(oneRowReport("graph", c.old, 1e9), oneRowReport("graph", c.new, 1e9))
		if len(cmp.Rows) != 1 || !math.IsNaN(cmp.Rows[0].Ratio) {
			t.Errorf("old %v new %v tok/s: rows %+v, want one of ratio NaN", c.old, c.new, cmp.Rows)
		}
		if _, n := cmp.geomean(""); n != 0 {
			t.Errorf("old %v new %v tok/s: geomean over %d rows", c.old, c.new, n)
		}
		js, err := cmp.json("a", "b")
		if err != nil {
			t.Fatalf("old %v new %v tok/s: json: %v", c.old, c.new, err)
		}
		var cj comparisonJSON
		if err := json.Unmarshal(js, &cj); err != nil || len(cj.Rows) != 1 || cj.Rows[0].Ratio != nil || len(cj.Geomean) != 0 {
			t.Errorf("old %v new %v tok/s: json %s (%v)", c.old, c.new, js, err)
		}
	}
}

// TestCompareRoundingSameWork: bytes per token that differ by float
// rounding only (1e-12 relative) are the same work; a millionth is not.
func TestCompareRoundingSameWork(t *testing.T) {
	const w = 15_875_500_032
	if c := compareReports(oneRowReport("graph", 100, w), oneRowReport("graph", 110, w*(1+1e-12))); c.Rows[0].OtherWork != "" {
		t.Errorf("rounding apart: other work %q", c.Rows[0].OtherWork)
	}
	// 15,875,500,032 B = 15875.5 MB; +1e-6 relative: 15875.516 → 15875.5.
	c := compareReports(oneRowReport("graph", 100, w), oneRowReport("graph", 110, w*(1+1e-6)))
	if got := c.Rows[0].OtherWork; got != "weights 15875.5 → 15875.5 MB" {
		t.Errorf("a millionth apart: other work %q", got)
	}
	if g, n := c.geomean(""); n != 0 || !math.IsNaN(g) {
		t.Errorf("geomean %v over %d rows of other work", g, n)
	}
}

// TestComparePrintParts: the notes of -omit and the lists of unmatched
// rows appear exactly when there is something to say, and the ratio is
// new / old (110 / 100 = 1.100 faster; 100 / 125 = 0.800).
func TestComparePrintParts(t *testing.T) {
	old := &Report{Version: reportVersion, Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 100}, RooflinePct: 40},
		{Model: "m", KV: "f16", Context: 64, Path: "eager", TokS: Stat{Median: 125}},
	}}}}
	cur := &Report{Version: reportVersion, Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 110}, RooflinePct: 44},
		{Model: "m", KV: "f16", Context: 64, Path: "eager", TokS: Stat{Median: 100}},
	}}}}
	var b bytes.Buffer
	compareReports(old, cur).print(&b, "o", "n")
	out := b.String()
	wantContains(t, "compare", out, []string{"| m | f16 | 64 | graph | 100.0 | 110.0 | **1.100** | 40.0 → 44.0 |", "| m | f16 | 64 | eager | 125.0 | 100.0 | **0.800** | 0.0 → 0.0 |",
		// sqrt(1.1 · 0.8) = sqrt(0.88) = 0.938
		"geomean new/old (graph, 1 rows): 1.100", "geomean new/old (eager, 1 rows): 0.800", "geomean new/old (all, 2 rows): 0.938"})
	for _, not := range []string{"omitted", "-fatbin", "≠", "only in", "sampled"} {
		if strings.Contains(out, not) {
			t.Errorf("compare of matching whole runs has %q:\n%s", not, out)
		}
	}
	cur.Models[0].Rows = append(cur.Models[0].Rows, Row{Model: "m", KV: "f16", Context: 128, Path: "graph", TokS: Stat{Median: 90}})
	b.Reset()
	compareReports(old, cur).print(&b, "o", "n")
	if !strings.Contains(b.String(), "only in new (1 row): m|f16: ctx 128 × graph\n") || strings.Contains(b.String(), "only in old") {
		t.Errorf("compare with a new row:\n%s", b.String())
	}
}

// TestProfileTies: kernels of equal time keep the order of their first
// launch.
func TestProfileTies(t *testing.T) {
	var ls []gpu.Launch
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		ls = append(ls, gpu.Launch{Kernel: k, Time: 1000})
	}
	p := newProfile(64, 1, ls, 0)
	var got []string
	for _, k := range p.Kernels {
		got = append(got, k.Kernel)
	}
	if strings.Join(got, "") != "abcde" {
		t.Errorf("kernels of equal time in order %v, want a b c d e", got)
	}
}

// TestDecodeTableEager: an eager row has no captures column.
func TestDecodeTableEager(t *testing.T) {
	r := Row{Model: "m", KV: "f16", Context: 64, Path: "eager", Captures: 5}
	var b bytes.Buffer
	(&Report{Models: []ModelReport{{Rows: []Row{r}}}}).decodeTable(&b)
	if !strings.HasSuffix(b.String(), "| 0.000 | 0.0 |  |\n") {
		t.Errorf("eager row:\n%s", b.String())
	}
}

// TestGroupKeys: the rows one report lacks read a model and cache at a
// time: a full grid of contexts and paths as one line, a partial one row by
// row, in the keys' order; a key that is not model|kv|ctx|path as itself.
func TestGroupKeys(t *testing.T) {
	keys := []string{
		"a|f16|1024|eager", "a|f16|1024|graph", "a|f16|64|eager", "a|f16|64|graph",
		"b|fp8|4096|graph", "b|fp8|64|eager",
		"odd",
	}
	want := "(7 rows): a|f16: ctx 64, 1024 × eager, graph; b|fp8: 4096/graph, 64/eager; odd"
	if got := groupKeys(keys); got != want {
		t.Errorf("groupKeys:\n got %s\nwant %s", got, want)
	}
}

// Priming and load compare by (model, kv): a speedup old/new only where
// both primed the same prompt length, a dash for a model primed at
// another length or not at all, and a geomean of the speedups alone.
func TestComparePrime(t *testing.T) {
	row := func(m string) []Row {
		return []Row{{Model: m, KV: "f16", Context: 1024, Path: "graph", TokS: Stat{Median: 100}}}
	}
	old := &Report{Version: reportVersion, Models: []ModelReport{
		{Model: "a", KV: "f16", LoadS: 1.7, Prime: &Prime{Tokens: 512, Chunk: 1, Ms: Stat{Median: 956}}, Rows: row("a")},
		{Model: "b", KV: "f16", LoadS: 0.5, Prime: &Prime{Tokens: 64, Ms: Stat{Median: 55}}, Rows: row("b")},
		{Model: "c", KV: "f16", LoadS: 0.4, Rows: row("c")},
		{Model: "gone", KV: "f16", Rows: row("gone")},
	}}
	cur := &Report{Version: reportVersion, Models: []ModelReport{
		{Model: "c", KV: "f16", LoadS: 0.3, Prime: &Prime{Tokens: 512, Chunk: 8, Ms: Stat{Median: 90}}, Rows: row("c")},
		{Model: "a", KV: "f16", LoadS: 1.6, Prime: &Prime{Tokens: 512, Chunk: 8, Ms: Stat{Median: 431}}, Rows: row("a")},
		{Model: "b", KV: "f16", LoadS: 0.5, Prime: &Prime{Tokens: 512, Chunk: 8, Ms: Stat{Median: 80}}, Rows: row("b")},
		{Model: "a", KV: "fp8", Prime: &Prime{Tokens: 512, Ms: Stat{Median: 400}}},
	}}
	c := compareReports(old, cur)
	if len(c.Prime) != 3 || c.Prime[0].Model != "c" || c.Prime[1].Model != "a" || c.Prime[2].Model != "b" {
		t.Fatalf("prime rows (cur's order, models of both only): %+v", c.Prime)
	}
	want := 956.0 / 431.0
	if math.Abs(c.Prime[1].Speedup-want) > 1e-12 || !math.IsNaN(c.Prime[0].Speedup) || !math.IsNaN(c.Prime[2].Speedup) {
		t.Errorf("speedups %v %v %v, want NaN, %v, NaN", c.Prime[0].Speedup, c.Prime[1].Speedup, c.Prime[2].Speedup, want)
	}
	var b bytes.Buffer
	c.print(&b, "old.json", "new.json")
	wantContains(t, "compare output", b.String(), []string{
		"| a | f16 | 512 → 512 | 1 → 8 | 956.0 → 431.0 | **2.218** | 1.70 → 1.60 |",
		"| b | f16 | 64 → 512 | – → 8 | 55.0 → 80.0 | — | 0.50 → 0.50 |",
		"| c | f16 | – → 512 | – → 8 | – → 90.0 | — | 0.40 → 0.30 |",
		"geomean priming speedup (1 models): 2.218",
	})
	cj, js := compareJSON(t, c)
	if len(cj.Prime) != 3 || cj.Prime[1].Speedup == nil || math.Abs(*cj.Prime[1].Speedup-want) > 1e-12 || cj.Prime[0].Speedup != nil ||
		cj.Prime[1].OldChunk != 1 || cj.Prime[1].NewChunk != 8 || math.Abs(cj.Geomean["prime"]-want) > 1e-12 {
		t.Errorf("compare -json prime: %s", js)
	}
}

// compareJSON is c as bench -compare -json writes it, read back, and the
// bytes written.
func compareJSON(t *testing.T, c comparison) (comparisonJSON, []byte) {
	t.Helper()
	js, err := c.json("old.json", "new.json")
	if err != nil {
		t.Fatal(err)
	}
	var cj comparisonJSON
	if err := json.Unmarshal(js, &cj); err != nil {
		t.Fatalf("%v:\n%s", err, js)
	}
	return cj, js
}

// wantContains reports each of subs that got, the output named what, lacks.
func wantContains(t *testing.T, what, got string, subs []string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, got)
		}
	}
}

// TestCompareNamesDevices: -compare and -peer name the GPUs each side ran
// on and say when they differ, on the stored reports of an H100 run
// (run356) and an H200 run (run352) with llama.cpp's H200 reports beside
// it: a ratio across machines is not a ratio of builds.
func TestCompareNamesDevices(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "results")
	h100, err := readReport(filepath.Join(dir, "h100-run356.json"))
	if err != nil {
		t.Fatal(err)
	}
	h200, err := readReport(filepath.Join(dir, "h200-run352.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h100.Device.Name, "H100") || !strings.Contains(h200.Device.Name, "H200") {
		t.Fatalf("fixtures ran on %q and %q", h100.Device.Name, h200.Device.Name)
	}
	const note = "ran on different GPUs"
	for _, c := range []struct {
		old, cur *Report
		other    bool
	}{{h100, h200, true}, {h200, h200, false}} {
		cmp := compareReports(c.old, c.cur)
		var md bytes.Buffer
		cmp.print(&md, "old.json", "new.json")
		if want := "Devices: old " + c.old.Device.Name; !strings.Contains(md.String(), want) || !strings.Contains(md.String(), "new "+c.cur.Device.Name) {
			t.Errorf("%s → %s: the table does not name both devices:\n%s", c.old.Device.Name, c.cur.Device.Name, md.String())
		}
		if strings.Contains(md.String(), note) != c.other {
			t.Errorf("%s → %s: note %q shown: %v, want %v", c.old.Device.Name, c.cur.Device.Name, note, !c.other, c.other)
		}
		js, err := cmp.json("old.json", "new.json")
		if err != nil {
			t.Fatal(err)
		}
		var got comparisonJSON
		if err := json.Unmarshal(js, &got); err != nil {
			t.Fatal(err)
		}
		if got.OtherDevice != c.other || !strings.HasPrefix(got.DeviceOld, c.old.Device.Name) || !strings.HasPrefix(got.DeviceNew, c.cur.Device.Name) {
			t.Errorf("%s → %s: JSON other_device %v (%q, %q), want %v", c.old.Device.Name, c.cur.Device.Name, got.OtherDevice, got.DeviceOld, got.DeviceNew, c.other)
		}
	}
	llama, err := filepath.Glob(filepath.Join(dir, "h200-run352-llama", "*.json"))
	if err != nil || len(llama) == 0 {
		t.Fatalf("llama-bench reports: %v %v", llama, err)
	}
	peer, err := readPeers(llama)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rep   *Report
		other bool
	}{{h100, true}, {h200, false}} {
		pc := comparePeer(peer, c.rep)
		if len(pc.Rows) == 0 {
			t.Fatalf("%s: no pairs", c.rep.Device.Name)
		}
		var md bytes.Buffer
		pc.print(&md, llama)
		if pc.OtherDevice != c.other || strings.Contains(md.String(), "different GPUs") != c.other || !strings.Contains(md.String(), "memra on "+c.rep.Device.Name) {
			t.Errorf("memra on %s against llama.cpp on %s: other_device %v, want %v:\n%s", c.rep.Device.Name, pc.Rows[0].PeerGPU, pc.OtherDevice, c.other, md.String())
		}
	}
}

// failWriter fails every write, as stdout on a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputWriteError: a comparison or help text that cannot be written to
// stdout exits 1 with the write's error, not 0 with nothing printed.
func TestOutputWriteError(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "results")
	for _, args := range [][]string{
		{"-compare", filepath.Join(dir, "h200-run352.json"), filepath.Join(dir, "h200-run352.json")},
		{"-h"},
	} {
		out := &sticky.Writer{W: failWriter{}}
		code, err := run(args, out, io.Discard)
		code, err = exitStatus(out, code, err)
		if code != 1 || err == nil || !strings.Contains(err.Error(), "write the output: no space left on device") {
			t.Errorf("bench %s with a failing stdout: exit %d, %v; want exit 1 naming the write", strings.Join(args, " "), code, err)
		}
	}
	if code, err := exitStatus(&sticky.Writer{Err: errors.New("short write")}, 2, errors.New("usage")); code != 2 || err.Error() != "usage" {
		t.Errorf("an earlier error: %d, %v; want it to stand", code, err)
	}
}

// TestReportFileErrors: a file that is not a bench report is named with
// what is wrong in the file's terms, never Go's type names.
func TestReportFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"", "the file is empty"},
		{"  \n", "the file is empty"},
		{"[1]", "the file is a JSON array, not an object"},
		{`{"version": 1, "models": 3}`, "its field models holds a JSON number"},
		{`{"models": [`, "the JSON ends early, after 12 bytes"},
		{`{"a" 1}`, "not JSON at byte 6"},
		// No version: another JSON file (bench -compare -json's output, a
		// -peer comparison), said so, not "version 0" alone; a later
		// version, a newer bench's.
		{`{}`, "version 0 or none: not a bench report"},
		{`{"rows": []}`, "version 0 or none: not a bench report"},
		{`{"version": 2}`, "version 2, from a newer bench than this one (it reads version 1): compare with that bench"},
		{`{"version": -1}`, `"version" -1 is not a bench report's`},
	} {
		path := filepath.Join(dir, "r.json")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readReport(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "main.") || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: %v; want an error naming %s and saying %q", c.body, err, path, c.want)
		}
		if _, err = readPeer(path); err == nil || strings.Contains(err.Error(), "main.") {
			t.Errorf("as a llama-bench report, %q: %v; want an error without Go's type names", c.body, err)
		}
	}
}

// TestCompareKernels: -compare pairs the -profile tables of a model in both
// reports, step tables by context and step (a context only one report
// profiled, or an eager step's table against a graph step's, has no pair)
// and prefill tables by chunk length, kernels by name and shape, each
// pair's largest change in time first (ties in the new table's order, a
// kernel only the old one has after them), and writes them as a
// table and as JSON.
func TestCompareKernels(t *testing.T) {
	ks := func(kv ...any) []KernelShare {
		var out []KernelShare
		for i := 0; i < len(kv); i += 3 {
			out = append(out, KernelShare{Kernel: kv[i].(string), Shape: kv[i+1].(string), Us: kv[i+2].(float64)})
		}
		return out
	}
	row := Row{Model: "m", KV: "f16", Context: 1024, Path: "graph", TokS: Stat{Median: 100}}
	old := &Report{Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{row},
		Profile:        []Profile{{Context: 1024, Path: "graph", Kernels: ks("a", "1×2", 10.0, "b", "", 5.0, "c", "", 2.0)}},
		PrefillProfile: &Profile{Tokens: 8, Kernels: ks("x", "4×4", 100.0)}}}}
	cur := &Report{Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{row},
		Profile:        []Profile{{Context: 1024, Path: "graph", Kernels: ks("a", "1×2", 8.0, "b", "", 6.0, "d", "", 1.0)}, {Context: 64, Path: "graph", Kernels: ks("a", "1×2", 7.0)}},
		PrefillProfile: &Profile{Tokens: 8, Kernels: ks("x", "4×4", 90.0)}}}}
	c := compareReports(old, cur)
	want := []kernelRatio{
		{"m", "f16", "graph step @ctx 1k", "a", "1×2", 10, 8},
		{"m", "f16", "graph step @ctx 1k", "c", "", 2, 0},
		{"m", "f16", "graph step @ctx 1k", "b", "", 5, 6},
		{"m", "f16", "graph step @ctx 1k", "d", "", 0, 1},
		{"m", "f16", "prefill chunk of 8", "x", "4×4", 100, 90},
	}
	if len(c.Kernels) != len(want) {
		t.Fatalf("kernels %+v, want %+v", c.Kernels, want)
	}
	for i := range want {
		if c.Kernels[i] != want[i] {
			t.Errorf("kernel %d: %+v, want %+v", i, c.Kernels[i], want[i])
		}
	}
	var b strings.Builder
	c.print(&b, "old.json", "new.json")
	wantContains(t, "compare table", b.String(), []string{
		"| model | kv | of | kernel | shape | old µs | new µs | new − old | new/old |",
		"| m | f16 | graph step @ctx 1k | a | 1×2 | 10.0 | 8.0 | -2.0 | 0.800 |",
		"| m | f16 | graph step @ctx 1k | c |  | 2.0 | – | -2.0 | — |",
		"| m | f16 | graph step @ctx 1k | d |  | – | 1.0 | +1.0 | — |",
		"| m | f16 | prefill chunk of 8 | x | 4×4 | 100.0 | 90.0 | -10.0 | 0.900 |",
	})
	cj, js := compareJSON(t, c)
	if len(cj.Kernels) != len(want) || cj.Kernels[4] != (kernelJSON{"m", "f16", "prefill chunk of 8", "x", "4×4", 100, 90}) {
		t.Errorf("compare -json kernels: %s", js)
	}
	// An eager step's profile (reports before session 84) against a graph
	// step's at the same context: other kernels, no pair.
	// It is named as such, in the text and the JSON.
	old.Models[0].Profile[0].Path = ""
	c = compareReports(old, cur)
	if k := c.Kernels; len(k) != 1 || k[0].Of != "prefill chunk of 8" {
		t.Errorf("an eager step's profile paired with a graph step's: %+v", k)
	}
	const unpaired = "m f16 @ctx 1k (old eager, new graph)"
	if len(c.StepsUnpaired) != 1 || c.StepsUnpaired[0] != unpaired {
		t.Errorf("unpaired step profiles %q, want [%q]", c.StepsUnpaired, unpaired)
	}
	b.Reset()
	c.print(&b, "old.json", "new.json")
	wantContains(t, "compare table", b.String(), []string{"step profiles not compared, each of another step", unpaired})
	if cj, js := compareJSON(t, c); len(cj.StepsUnpaired) != 1 || cj.StepsUnpaired[0] != unpaired {
		t.Errorf("compare -json steps_unpaired: %s", js)
	}
	// Chunks of another length, or no profile on one side: no pair.
	cur.Models[0].PrefillProfile.Tokens = 4
	cur.Models[0].Profile = nil
	if k := compareReports(old, cur).Kernels; len(k) != 0 {
		t.Errorf("unpaired profiles compared: %+v", k)
	}
}
