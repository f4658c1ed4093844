package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPerfTableMatchesReport reads docs/perf.md's current table, which is
// typed by hand, and checks every cell but the peer's against the JSON
// report its "Full output" line cites: graph tok/s at each context, roofline
// % at 1k, sampled and eager tok/s at 1k, graph / eager, 32k / 1k and the
// graph's nodes, each rounded as the table prints it. So the table cannot
// drift from the measurement it names, nor name one it was not copied
// from. The peer column is llama.cpp's, quoted from the issue.
func TestPerfTableMatchesReport(t *testing.T) {
	section := perfSection(t, "## Current table")
	cite := regexp.MustCompile(`Full output: \[results/([^\]]+)\.md\]`).FindStringSubmatch(section)
	if cite == nil {
		t.Fatal(`the current table's section cites no "Full output: [results/NAME.md]"`)
	}
	rep, err := readReport(filepath.Join("..", "..", "docs", "results", cite[1]+".json"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, r := range rep.allRows() {
		rows[r.key()] = r
	}
	nodes := map[string]int{}
	for _, m := range rep.Models {
		nodes[m.Model+"|"+m.KV] = m.Nodes
	}

	const header = "| model | ctx 64 | 1k | 4k | 16k | 32k | roofline % @1k | sampled @1k | eager @1k | graph/eager @1k | 32k / 1k | nodes |"
	at := strings.Index(section, header)
	if at < 0 {
		t.Fatalf("the current table's header is not %q", header)
	}
	lines := strings.Split(section[at:], "\n")[2:] // past the header and its rule
	checked := 0
	for _, line := range lines {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 13 {
			t.Fatalf("row %q: %d cells, want 13", line, len(cells))
		}
		model := strings.ReplaceAll(cells[0], " ", "-")
		get := func(ctx int, path string) Row {
			t.Helper()
			r, ok := rows[fmt.Sprintf("%s|f16|%d|%s", model, ctx, path)]
			if !ok {
				t.Fatalf("%s: %s has no f16 %s row at context %d", cells[0], cite[1], path, ctx)
			}
			return r
		}
		tok := func(ctx int, path string) float64 { return get(ctx, path).TokS.Median }
		want := []string{}
		for _, ctx := range []int{64, 1024, 4096, 16384, 32768} {
			want = append(want, thousands(tok(ctx, "graph")))
		}
		want = append(want,
			fmt.Sprintf("%.1f", get(1024, "graph").RooflinePct),
			thousands(tok(1024, "sampled")),
			thousands(tok(1024, "eager")),
			fmt.Sprintf("%.2f×", tok(1024, "graph")/tok(1024, "eager")),
			fmt.Sprintf("%.0f%%", 100*tok(32768, "graph")/tok(1024, "graph")),
			fmt.Sprint(nodes[model+"|f16"]),
		)
		for i, w := range want {
			if cells[1+i] != w {
				t.Errorf("%s, column %d: the table says %s, %s.json gives %s", cells[0], i+2, cells[1+i], cite[1], w)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("the current table has no rows")
	}
}

// thousands formats a rate as the table does: rounded to a whole number,
// with a comma before the thousands.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	if len(s) > 3 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}

// TestPerfPeerTableMatchesReports checks docs/perf.md's table against
// llama.cpp, typed in from bench's output, against the files it came from:
// the llama-bench reports and memra's report that its section cites, paired
// again here and printed as bench prints them; every row printed must stand
// in the section as it is, and the section must hold no other row.
func TestPerfPeerTableMatchesReports(t *testing.T) {
	section := perfSection(t, "## Against llama.cpp, measured")
	rep := regexp.MustCompile(`\[results/([^\]]+)\.md\]`).FindStringSubmatch(section)
	dir := regexp.MustCompile(`\[results/([^\]]+)/\]`).FindStringSubmatch(section)
	if rep == nil || dir == nil {
		t.Fatal("the section cites no report [results/NAME.md] or llama-bench folder [results/DIR/]")
	}
	results := filepath.Join("..", "..", "docs", "results")
	cur, err := readReport(filepath.Join(results, rep[1]+".json"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(results, dir[1], "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no llama-bench reports in %s: %v", dir[1], err)
	}
	peer, err := readPeers(files)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	comparePeer(peer, cur).print(&b, nil)
	if got, want := tableRows(section), tableRows(b.String()); got != want {
		t.Errorf("the section's rows:\n%s\nbench -peer on its files prints:\n%s", got, want)
	}
	if g := regexp.MustCompile(`geomean memra / llama.cpp \(\d+ rows\): [0-9.]+`).FindString(b.String()); g == "" || !strings.Contains(section, g) {
		t.Errorf("the section does not quote the geomean line %q", g)
	}
}

// perfSection is docs/perf.md from the line opening with heading up to the
// next "## " heading.
func perfSection(t *testing.T, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "perf.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, heading)
	if start < 0 {
		t.Fatalf("docs/perf.md has no %q section", heading)
	}
	section := text[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	return section
}

// tableRows is the Markdown table rows of s past their headers, one a line.
func tableRows(s string) string {
	var rows []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| model") {
			rows = append(rows, line)
		}
	}
	return strings.Join(rows, "\n")
}
