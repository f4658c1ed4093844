package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// llamaRow is one row as llama-bench -o json writes it (the fields -peer
// reads and a few it ignores, so the decoder is exercised on the real
// shape).
func llamaRow(file string, nPrompt, nGen, depth int, avg, sd float64, typeK string) map[string]any {
	return map[string]any{
		"build_commit": "de3ff815", "build_number": 1, "gpu_info": "NVIDIA H100 80GB HBM3", "model_filename": file,
		"model_type": "qwen35 0.8B BF16", "n_gpu_layers": 99, "flash_attn": 1, "type_k": typeK, "type_v": typeK,
		"n_prompt": nPrompt, "n_gen": nGen, "n_depth": depth, "avg_ns": int64(1e9 / avg), "stddev_ns": 1000,
		"avg_ts": avg, "stddev_ts": sd, "samples_ts": []float64{avg, avg},
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.WriteFile(path, mustJSON(t, v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// peerReport: memra graph rows of two files (f16) and one FP8 model that
// -peer must leave out.
func peerReport() *Report {
	g := func(m string, ctx int, toks float64) Row {
		return Row{Model: m, KV: "f16", Context: ctx, Path: "graph", TokS: Stat{Median: toks}, MeanTKV: float64(ctx) + 32}
	}
	return &Report{Version: reportVersion, Models: []ModelReport{
		{Model: "a", Path: "/models/a.gguf", KV: "f16", Rows: []Row{g("a", 64, 1500), g("a", 1024, 1400),
			{Model: "a", KV: "f16", Context: 1024, Path: "eager", TokS: Stat{Median: 600}}}},
		{Model: "a", Path: "/models/a.gguf", KV: "fp8", Rows: []Row{{Model: "a", KV: "fp8", Context: 1024, Path: "graph", TokS: Stat{Median: 9999}}}},
		{Model: "b", Path: "/other/b.gguf", KV: "f16", Rows: []Row{g("b", 1024, 400)}},
	}}
}

func TestPeerPairs(t *testing.T) {
	dir := t.TempDir()
	lj := filepath.Join(dir, "llama.json")
	writeJSON(t, lj, []any{
		llamaRow("/tmp/models/a.gguf", 0, 128, 0, 500, 2, "f16"),     // → a ctx 64 (its smallest, ≤ 128)
		llamaRow("/tmp/models/a.gguf", 0, 128, 1024, 560, 3, "f16"),  // → a ctx 1024
		llamaRow("/tmp/models/a.gguf", 512, 0, 0, 9000, 9, "f16"),    // a prompt row: not read
		llamaRow("/tmp/models/b.gguf", 0, 128, 0, 100, 1, "f16"),     // b's smallest context is 1024 > 128: unpaired
		llamaRow("/tmp/models/b.gguf", 0, 128, 1024, 200, 1, "q8_0"), // another KV type: unpaired
		llamaRow("/tmp/models/c.gguf", 0, 128, 1024, 200, 1, "f16"),  // no such file in the report
	})
	peer, err := readPeer(lj)
	if err != nil {
		t.Fatal(err)
	}
	if len(peer) != 5 {
		t.Fatalf("read %d generation rows, want 5 (the prompt row dropped)", len(peer))
	}
	c := comparePeer(peer, peerReport())
	if len(c.Rows) != 2 {
		t.Fatalf("paired %d rows, want 2: %+v", len(c.Rows), c.Rows)
	}
	// memra 1500 against 500 and 1400 against 560, by hand: 3 and 2.5.
	for i, w := range []struct {
		ctx, depth int
		ratio      float64
	}{{64, 0, 3}, {1024, 1024, 2.5}} {
		r := c.Rows[i]
		if r.Model != "a" || r.Context != w.ctx || r.Depth != w.depth || math.Abs(r.Ratio-w.ratio) > 1e-12 {
			t.Errorf("row %d: %+v, want a ctx %d depth %d ratio %v", i, r, w.ctx, w.depth, w.ratio)
		}
	}
	if want := math.Sqrt(3 * 2.5); math.Abs(c.Geomean-want) > 1e-12 {
		t.Errorf("geomean %v, want %v", c.Geomean, want)
	}
	if len(c.Unpaired) != 3 || !strings.Contains(strings.Join(c.Unpaired, ","), "c.gguf tg128 at depth 1024") {
		t.Errorf("unpaired %v", c.Unpaired)
	}
	var b bytes.Buffer
	c.print(&b, []string{"llama.json"})
	wantContains(t, "peer table", b.String(), []string{"| a | 64 | tg128 @ d0 | 96 / 64 | 500.0 ± 2.0 | 1500.0 | **3.00×** |",
		"| a | 1024 | tg128 @ d1024 | 1056 / 1088 | 560.0 ± 3.0 | 1400.0 | **2.50×** |", "geomean memra / llama.cpp (2 rows): 2.739",
		"llama.cpp ran on NVIDIA H100 80GB HBM3, build de3ff815"})

	// One llama-bench row a memra row: a second for the same start, one of
	// no GPU layers, and one whose speed gives no finite ratio stay unpaired,
	// each saying why.
	cpuRow := llamaRow("/tmp/models/a.gguf", 0, 128, 1024, 50, 1, "f16")
	cpuRow["n_gpu_layers"] = 0
	lj2 := filepath.Join(dir, "more.json")
	writeJSON(t, lj2, []any{
		llamaRow("/tmp/models/a.gguf", 0, 128, 1024, 560, 3, "f16"),
		llamaRow("/tmp/models/a.gguf", 0, 256, 1024, 550, 3, "f16"),
		cpuRow,
		llamaRow("/tmp/models/a.gguf", 0, 128, 0, 1e-320, 0, "f16"),
	})
	more, err := readPeer(lj2)
	if err != nil {
		t.Fatal(err)
	}
	c2 := comparePeer(more, peerReport())
	if len(c2.Rows) != 1 || c2.Rows[0].Gen != 128 || len(c2.Unpaired) != 3 {
		t.Fatalf("duplicates: rows %+v unpaired %v", c2.Rows, c2.Unpaired)
	}
	wantContains(t, "unpaired reasons", strings.Join(c2.Unpaired, "\n"), []string{
		"tg256 at depth 1024 (memra's context 1024 is already paired with a.gguf tg128 at depth 1024)",
		"(no layer on the GPU (-ngl 0))", "gives no finite ratio"})
	if js, err := json.Marshal(c2); err != nil || !json.Valid(js) {
		t.Errorf("the comparison does not marshal: %v", err)
	}

	// The same through the command line, files only, as Markdown and as JSON
	// (-o jsonl from llama-bench reads the same).
	rep := peerReport()
	if err := rep.writeFiles(dir, "x"); err != nil {
		t.Fatal(err)
	}
	newJSON := filepath.Join(dir, "bench-x.json")
	var out bytes.Buffer
	if code, err := run([]string{"-peer", lj, newJSON}, &out, io.Discard); code != 0 || err != nil || !strings.Contains(out.String(), "**2.50×**") {
		t.Fatalf("bench -peer: code %d err %v\n%s", code, err, out.String())
	}
	jl := filepath.Join(dir, "llama.jsonl")
	if err := os.WriteFile(jl, append(mustJSON(t, llamaRow("a.gguf", 0, 128, 1024, 700, 1, "f16")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code, err := run([]string{"-json", "-peer", jl, newJSON}, &out, io.Discard); code != 0 || err != nil {
		t.Fatalf("bench -json -peer (jsonl): code %d err %v", code, err)
	}
	var pj peerComparison
	if err := json.Unmarshal(out.Bytes(), &pj); err != nil || len(pj.Rows) != 1 || math.Abs(pj.Rows[0].Ratio-2) > 1e-12 {
		t.Errorf("bench -json -peer: %v %+v\n%s", err, pj, out.String())
	}
	// -compare and -peer together, files only: both tables.
	out.Reset()
	if code, err := run([]string{"-compare", newJSON, "-peer", lj, newJSON}, &out, io.Discard); code != 0 || err != nil ||
		!strings.Contains(out.String(), "## Compare") || !strings.Contains(out.String(), "## Against llama.cpp") {
		t.Errorf("bench -compare -peer: code %d err %v\n%s", code, err, out.String())
	}
}

func TestPeerErrors(t *testing.T) {
	dir := t.TempDir()
	rep := peerReport()
	if err := rep.writeFiles(dir, "x"); err != nil {
		t.Fatal(err)
	}
	newJSON := filepath.Join(dir, "bench-x.json")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	onlyPrompt, _ := json.Marshal([]any{llamaRow("a.gguf", 512, 0, 0, 9000, 9, "f16")})
	noSpeed, _ := json.Marshal([]any{llamaRow("a.gguf", 0, 128, 0, 0, 0, "f16")})
	elsewhere, _ := json.Marshal([]any{llamaRow("z.gguf", 0, 128, 1024, 100, 1, "f16")})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"not JSON", []string{"-peer", write("bad.json", "llama-bench: error\n"), newJSON}, "bad.json: line 1"},
		{"truncated", []string{"-peer", write("cut.json", `[{"model_filename": "a.gguf", "n_gen`), newJSON}, "cut.json"},
		{"prompt rows only", []string{"-peer", write("pp.json", string(onlyPrompt)), newJSON}, "no generation rows"},
		{"no speed", []string{"-peer", write("zero.json", string(noSpeed)), newJSON}, "avg_ts"},
		{"missing", []string{"-peer", filepath.Join(dir, "none.json"), newJSON}, "none.json"},
		{"nothing pairs", []string{"-peer", write("z.json", string(elsewhere)), newJSON}, "no llama-bench row pairs"},
		{"empty flag", []string{"-peer", "", newJSON}, `-peer ""`},
		{"two JSONs", []string{"-json", "-compare", newJSON, "-peer", write("ok.json", string(elsewhere)), newJSON}, "not both"},
		{"run flags", []string{"-ctx", "64", "-peer", write("ok2.json", string(elsewhere)), newJSON}, "-ctx would be ignored"},
		{"no f16 run", []string{"-kv", "fp8", "-peer", write("ok3.json", string(elsewhere))}, "-kv fp8 runs none"},
		{"jsonl line", []string{"-peer", write("bad.jsonl", "\n"+string(mustJSON(t, llamaRow("a.gguf", 0, 128, 0, 0, 0, "f16")))+"\n"), newJSON}, "bad.jsonl: line 2 has no model_filename"},
	} {
		code, err := run(c.args, io.Discard, io.Discard)
		if code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: code %d, err %v; want 2 and %q", c.name, code, err, c.want)
		}
	}
}

// TestPeerInReport: after a run with -peer the pairing is part of the
// report: its JSON keeps it, its Markdown prints the table, and its chart
// draws llama.cpp's tok/s as a line of squares in the model's color.
func TestPeerInReport(t *testing.T) {
	rep := peerReport()
	peer := []peerRow{{ModelFilename: "a.gguf", NGen: 128, NDepth: 1024, AvgTs: 700, StddevTs: 1, GPUInfo: "gpu"},
		{ModelFilename: "a.gguf", NGen: 128, NDepth: 0, AvgTs: 750, StddevTs: 1, GPUInfo: "gpu"}}
	pc := comparePeer(peer, rep)
	rep.Peer, rep.PeerFiles = &pc, []string{"l.json"}
	dir := t.TempDir()
	if err := rep.writeFiles(dir, "p"); err != nil {
		t.Fatal(err)
	}
	back, err := readReport(filepath.Join(dir, "bench-p.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Peer == nil || len(back.Peer.Rows) != 2 || back.Peer.Rows[0].Context != 64 || back.PeerFiles[0] != "l.json" {
		t.Fatalf("peer after a round trip: %+v %v", back.Peer, back.PeerFiles)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bench-p.md"))
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "report Markdown", string(md), []string{"## Against llama.cpp (l.json)", "| a | 1024 | tg128 @ d1024 | 1056 / 1088 | 700.0 ± 1.0 | 1400.0 | **2.00×** |"})
	svg, err := os.ReadFile(filepath.Join(dir, "bench-p.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// Two squares (contexts 64 and 1k), one legend entry, one line.
	if n := strings.Count(string(svg), `<rect x="`) - strings.Count(string(svg), `<rect x="0"`) - 1; n != 2 {
		t.Errorf("chart: %d peer squares, want 2", n)
	}
	wantContains(t, "chart", string(svg), []string{`class="series peer"`, ">a llama.cpp</text>", "a llama.cpp @ 1024: 700.0 tok/s"})
}

// TestPeerRun352 pairs the real files of scripts/gpu/run352.sh: llama-bench's
// own reports (its CUDA build on the H200, -o json) and the report memra's
// bench wrote beside them with -peer. Every generation row pairs, each ratio
// is memra's graph median over llama-bench's avg_ts as the two files hold
// them (read here without this package's types), and the pairing the report
// stored on the GPU machine is the one its files give again here.
func TestPeerRun352(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "results")
	llama, err := filepath.Glob(filepath.Join(dir, "h200-run352-llama", "*.json"))
	if err != nil || len(llama) != 5 {
		t.Fatalf("llama-bench reports: %v %v", llama, err)
	}
	peer, err := readPeers(llama)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := readReport(filepath.Join(dir, "h200-run352.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := comparePeer(peer, rep)
	if len(c.Rows) != 10 || len(c.Unpaired) != 0 {
		t.Fatalf("paired %d rows (%v unpaired), want all 10", len(c.Rows), c.Unpaired)
	}
	avg := map[string]float64{} // file|depth → avg_ts, from the raw JSON
	for _, f := range llama {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw []map[string]any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		for _, r := range raw {
			avg[fmt.Sprintf("%s|%v", filepath.Base(r["model_filename"].(string)), r["n_depth"])] = r["avg_ts"].(float64)
		}
	}
	graph := map[string]float64{}
	for _, r := range rep.allRows() {
		if r.Path == "graph" && r.KV == "f16" {
			graph[fmt.Sprintf("%s|%d", r.Model, r.Context)] = r.TokS.Median
		}
	}
	for _, r := range c.Rows {
		p, m := avg[fmt.Sprintf("%s.gguf|%d", r.Model, r.Depth)], graph[fmt.Sprintf("%s|%d", r.Model, r.Context)]
		if p == 0 || m == 0 || r.Ratio != m/p {
			t.Errorf("%s ctx %d: ratio %v, want %v / %v", r.Model, r.Context, r.Ratio, m, p)
		}
	}
	if rep.Peer == nil || !reflect.DeepEqual(rep.Peer.Rows, c.Rows) {
		t.Errorf("the report's stored pairing differs from its files':\nstored %+v\nagain  %+v", rep.Peer, c.Rows)
	}
}
