package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// -peer reads llama-bench's reports (`llama-bench -o json` or `-o jsonl`)
// of the same GGUF files and prints memra's graph decode against them, so
// the peer column of docs/perf.md comes out of two files measured on one
// machine instead of being typed in.

// peerRow is one llama-bench measurement: the fields -peer reads.
type peerRow struct {
	ModelFilename string  `json:"model_filename"`
	NPrompt       int     `json:"n_prompt"`
	NGen          int     `json:"n_gen"`
	NDepth        int     `json:"n_depth"`
	TypeK         string  `json:"type_k"`
	NGPULayers    *int    `json:"n_gpu_layers"` // nil: not in the report
	AvgTs         float64 `json:"avg_ts"`
	StddevTs      float64 `json:"stddev_ts"`
	GPUInfo       string  `json:"gpu_info"`
	BuildCommit   string  `json:"build_commit"`
}

// readPeer reads a llama-bench report: a JSON array (-o json) or one object
// a line (-o jsonl). Only its generation rows (n_prompt 0) are kept; a file
// without one is an error, as is a row without a model or a speed.
func readPeer(path string) ([]peerRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []peerRow
	var where []string // each row's place in the file, for messages
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &rows); err != nil {
			return nil, fmt.Errorf("read llama-bench report %s: %s (want the output of llama-bench -o json or -o jsonl)", path, jsonProblem(t, err))
		}
		for i := range rows {
			where = append(where, fmt.Sprintf("row %d", i+1))
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var r peerRow
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("read llama-bench report %s: line %d: %s (want the output of llama-bench -o json or -o jsonl)", path, n, jsonProblem(line, err))
			}
			rows = append(rows, r)
			where = append(where, fmt.Sprintf("line %d", n))
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read llama-bench report %s: %w", path, err)
		}
	}
	var gen []peerRow
	for i, r := range rows {
		if r.ModelFilename == "" || !(r.AvgTs > 0) || math.IsInf(r.AvgTs, 0) || r.NGen < 0 || r.NDepth < 0 {
			return nil, fmt.Errorf("read llama-bench report %s: %s has no model_filename, a speed (avg_ts) that is not a positive number, or a negative n_gen or n_depth", path, where[i])
		}
		if r.NPrompt == 0 && r.NGen > 0 {
			gen = append(gen, r)
		}
	}
	if len(gen) == 0 {
		return nil, fmt.Errorf("read llama-bench report %s: no generation rows (tgN, n_prompt 0) among its %d; run llama-bench with -p 0 -n 128", path, len(rows))
	}
	return gen, nil
}

// peerRatio is one memra graph row beside the llama-bench row it is paired
// with.
type peerRatio struct {
	Model      string  `json:"model"`
	Context    int     `json:"context"`     // memra's: decoding starts with this many tokens in the cache
	MeanTKV    float64 `json:"mean_tkv"`    // memra's mean context over its timed tokens
	Depth      int     `json:"peer_depth"`  // llama-bench's n_depth
	Gen        int     `json:"peer_n_gen"`  // llama-bench's n_gen (tgN)
	PeerTokS   float64 `json:"peer_tok_s"`  // llama-bench's avg_ts
	PeerStddev float64 `json:"peer_stddev"` // and its stddev_ts
	MemraTokS  float64 `json:"memra_tok_s"` // memra's graph median
	Ratio      float64 `json:"ratio"`       // memra / peer (> 1: memra is faster)
	PeerGPU    string  `json:"peer_gpu,omitempty"`
	PeerBuild  string  `json:"peer_build,omitempty"`
}

// peerComparison pairs memra's graph rows (f16 KV, as llama-bench's
// default) with llama-bench's generation rows of the same file: by the
// file's base name, and by where decoding starts, memra's context c with
// llama-bench's depth c, and depth 0 with memra's smallest context if that
// is at most the row's n_gen (their decodes then overlap: tg128 from an
// empty cache against memra's 64, the short contexts where attention is a
// sliver of a step). Each memra row takes one llama-bench row, the first;
// rows of other KV types, of no GPU layers, of a second row for the same
// start or without a finite ratio stay unpaired and are listed, with why.
type peerComparison struct {
	Rows     []peerRatio `json:"rows"`
	Geomean  float64     `json:"geomean,omitempty"`
	Unpaired []string    `json:"unpaired_peer_rows,omitempty"`
	// MemraGPU is the GPU memra's report ran on; OtherDevice says that a
	// paired row's gpu_info names another, so its ratio is of two machines.
	MemraGPU    string `json:"memra_gpu"`
	OtherDevice bool   `json:"other_device"`
}

func comparePeer(peer []peerRow, cur *Report) peerComparison {
	c := peerComparison{MemraGPU: deviceLabel(cur)}
	why := map[int]string{} // a peer row's reason for staying unpaired, past "no such file or context"
	paired := map[int]bool{}
	for _, m := range cur.Models {
		if m.KV != "f16" {
			continue
		}
		var mine []peerRatio
		graph := map[int]Row{}
		taken := map[int]int{} // context → the peer row paired with it
		smallest := math.MaxInt
		for _, r := range m.Rows {
			if r.Path == "graph" && r.TokS.Median > 0 {
				graph[r.Context] = r
				smallest = min(smallest, r.Context)
			}
		}
		for i, p := range peer {
			if paired[i] || filepath.Base(p.ModelFilename) != filepath.Base(m.Path) {
				continue
			}
			switch {
			case p.TypeK != "" && p.TypeK != "f16":
				why[i] = "KV " + p.TypeK
				continue
			case p.NGPULayers != nil && *p.NGPULayers == 0:
				why[i] = "no layer on the GPU (-ngl 0)"
				continue
			}
			ctx := p.NDepth
			if ctx == 0 && smallest <= p.NGen {
				ctx = smallest
			}
			r, ok := graph[ctx]
			if !ok {
				continue
			}
			if j, dup := taken[ctx]; dup {
				// One measurement a side: a second llama-bench row for the
				// same start (another -fa, -ngl or n_gen, or the file run
				// twice) would count twice in the geomean.
				why[i] = fmt.Sprintf("memra's context %d is already paired with %s", ctx, peerName(peer[j]))
				continue
			}
			q := r.TokS.Median / p.AvgTs
			if math.IsInf(q, 0) || math.IsNaN(q) {
				why[i] = fmt.Sprintf("avg_ts %g gives no finite ratio", p.AvgTs)
				continue
			}
			paired[i], taken[ctx] = true, i
			mine = append(mine, peerRatio{Model: m.Model, Context: ctx, MeanTKV: r.MeanTKV, Depth: p.NDepth, Gen: p.NGen,
				PeerTokS: p.AvgTs, PeerStddev: p.StddevTs, MemraTokS: r.TokS.Median, Ratio: q,
				PeerGPU: p.GPUInfo, PeerBuild: p.BuildCommit})
		}
		sort.SliceStable(mine, func(i, j int) bool { return mine[i].Context < mine[j].Context })
		c.Rows = append(c.Rows, mine...)
	}
	for i, p := range peer {
		if !paired[i] {
			u := peerName(p)
			if why[i] != "" {
				u += " (" + why[i] + ")"
			}
			c.Unpaired = append(c.Unpaired, u)
		}
	}
	var rs []float64
	for _, r := range c.Rows {
		rs = append(rs, r.Ratio)
		// llama-bench's gpu_info lists the devices it saw by name, as the driver gives them.
		if r.PeerGPU != "" && (cur.Device.Name == "" || !strings.Contains(r.PeerGPU, cur.Device.Name)) {
			c.OtherDevice = true
		}
	}
	if g, n := geomeanOf(rs); n > 0 {
		c.Geomean = g
	}
	return c
}

// peerName names a llama-bench row in messages.
func peerName(p peerRow) string {
	return fmt.Sprintf("%s tg%d at depth %d", filepath.Base(p.ModelFilename), p.NGen, p.NDepth)
}

func (c peerComparison) print(w io.Writer, peerNames []string) {
	fmt.Fprintf(w, "## Against llama.cpp (%s): graph decode tok/s, memra / llama-bench (> 1: memra is faster)\n\n", strings.Join(peerNames, ", "))
	fmt.Fprintln(w, "| model | memra ctx | llama-bench | mean context memra / llama.cpp | llama.cpp tok/s | memra tok/s | memra / llama.cpp |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|")
	for _, r := range c.Rows {
		fmt.Fprintf(w, "| %s | %d | tg%d @ d%d | %.0f / %.0f | %.1f ± %.1f | %.1f | **%.2f×** |\n", r.Model, r.Context, r.Gen, r.Depth,
			r.MeanTKV, float64(r.Depth)+float64(r.Gen)/2, r.PeerTokS, r.PeerStddev, r.MemraTokS, r.Ratio)
	}
	fmt.Fprintln(w)
	if c.Geomean > 0 {
		fmt.Fprintf(w, "geomean memra / llama.cpp (%d rows): %.3f\n", len(c.Rows), c.Geomean) // every ratio paired is finite
	}
	gpus, builds := map[string]bool{}, map[string]bool{}
	for _, r := range c.Rows {
		gpus[r.PeerGPU], builds[r.PeerBuild] = true, true
	}
	if len(gpus) > 0 {
		fmt.Fprintf(w, "llama.cpp ran on %s, build %s; memra on %s\n", joinKeys(gpus), joinKeys(builds), c.MemraGPU)
	}
	if c.OtherDevice {
		fmt.Fprintln(w, "Note: llama.cpp and memra ran on different GPUs: these ratios are of two machines as much as of two engines; measure both on one device.")
	}
	if len(c.Unpaired) > 0 {
		fmt.Fprintf(w, "llama-bench rows with no memra graph row of the same file and context (f16 KV): %s\n", strings.Join(c.Unpaired, ", "))
	}
}

func joinKeys(m map[string]bool) string {
	var ks []string
	for k := range m {
		if k == "" {
			k = "(not given)"
		}
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, "; ")
}

// readPeers reads every -peer file into one list.
func readPeers(paths []string) ([]peerRow, error) {
	var all []peerRow
	for _, p := range paths {
		rows, err := readPeer(p)
		if err != nil {
			return nil, fmt.Errorf("-peer: %w", err)
		}
		all = append(all, rows...)
	}
	return all, nil
}

// errNoPeerRows is -peer's error when nothing pairs.
var errNoPeerRows = errors.New("no llama-bench row pairs with a graph row of this report (pairs match on the file's base name, f16 KV, and memra's context = llama-bench's depth, or its smallest context ≤ n_gen for depth 0)")

// peerFiles compares the report at newPath with the llama-bench reports,
// as Markdown or, with asJSON, as JSON.
func peerFiles(peerPaths []string, newPath string, asJSON bool, w io.Writer) (int, error) {
	peer, err := readPeers(peerPaths)
	if err != nil {
		return 2, err
	}
	cur, err := readReport(newPath)
	if err != nil {
		return 2, err
	}
	c := comparePeer(peer, cur)
	if len(c.Rows) == 0 {
		return 2, fmt.Errorf("-peer %s against %s: %w", strings.Join(peerPaths, ","), newPath, errNoPeerRows)
	}
	if !asJSON {
		c.print(w, peerPaths)
		return 0, nil
	}
	js, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return 2, err
	}
	if _, err := w.Write(append(js, '\n')); err != nil {
		return 1, err
	}
	return 0, nil
}
