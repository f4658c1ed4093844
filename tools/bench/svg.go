package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// series is one line of the chart: tok/s against context.
type series struct {
	label string
	kind  string // "graph", "eager" or "roofline"
	color string
	xs    []float64 // contexts
	ys    []float64 // tok/s
}

// palette holds one color per (model, kv); colors repeat past ten, the
// models of perf.md's table.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// chartSeries builds, per (model, kv), the graph and eager lines and the
// roofline line (1000 / roofline ms at each context), and with -peer the
// llama.cpp line (its tok/s at the contexts it is paired with).
func chartSeries(rep *Report) []series {
	var out []series
	for i, m := range rep.Models {
		color := palette[i%len(palette)]
		byPath := map[string]*series{}
		roof := &series{label: m.Model + " " + m.KV + " roofline", kind: "roofline", color: color}
		roofSeen := map[int]bool{}
		rows := append([]Row(nil), m.Rows...)
		sort.SliceStable(rows, func(a, b int) bool { return rows[a].Context < rows[b].Context })
		for _, r := range rows {
			s := byPath[r.Path]
			if s == nil {
				s = &series{label: m.Model + " " + m.KV + " " + r.Path, kind: r.Path, color: color}
				byPath[r.Path] = s
			}
			if r.TokS.Median > 0 {
				s.xs, s.ys = append(s.xs, float64(r.Context)), append(s.ys, r.TokS.Median)
			}
			if !roofSeen[r.Context] && r.RooflineMs > 0 {
				roofSeen[r.Context] = true
				roof.xs, roof.ys = append(roof.xs, float64(r.Context)), append(roof.ys, 1000/r.RooflineMs)
			}
		}
		for _, p := range []string{"graph", "eager"} {
			if s := byPath[p]; s != nil && len(s.xs) > 0 {
				out = append(out, *s)
			}
		}
		if len(roof.xs) > 0 {
			out = append(out, *roof)
		}
		if rep.Peer != nil && m.KV == "f16" {
			p := series{label: m.Model + " llama.cpp", kind: "peer", color: color}
			for _, r := range rep.Peer.Rows { // in context order (comparePeer)
				if r.Model == m.Model {
					p.xs, p.ys = append(p.xs, float64(r.Context)), append(p.ys, r.PeerTokS)
				}
			}
			if len(p.xs) > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// logAxis maps values on a log10 scale onto [p0, p1] pixels.
type logAxis struct{ lo, hi, p0, p1 float64 }

func (a logAxis) pos(v float64) float64 {
	return a.p0 + (math.Log10(v)-math.Log10(a.lo))/(math.Log10(a.hi)-math.Log10(a.lo))*(a.p1-a.p0)
}

// logRange pads [lo, hi] by factor on both sides (and widens a single
// value to a decade around it).
func logRange(lo, hi, pad float64) (float64, float64) {
	if lo == hi {
		return lo / math.Sqrt(10), hi * math.Sqrt(10)
	}
	return lo / pad, hi * pad
}

// ticks125 lists 1, 2, 5 × 10^k within [lo, hi].
func ticks125(lo, hi float64) []float64 {
	var ts []float64
	for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, k); v >= lo && v <= hi {
				ts = append(ts, v)
			}
		}
	}
	return ts
}

// ticksAll lists 1…9 × 10^k within [lo, hi].
func ticksAll(lo, hi float64) []float64 {
	var ts []float64
	for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
		for m := 1.0; m <= 9; m++ {
			if v := m * math.Pow(10, k); v >= lo && v <= hi {
				ts = append(ts, v)
			}
		}
	}
	return ts
}

func tickLabel(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e6) == 0:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1024 && math.Mod(v, 1024) == 0:
		return fmt.Sprintf("%gk", v/1024)
	case v >= 1000 && math.Mod(v, 1000) == 0:
		return fmt.Sprintf("%gk", v/1000)
	}
	return fmt.Sprintf("%g", v)
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // writes to memory: cannot fail
	return b.String()
}

// writeChart writes an SVG of tok/s against context (log-log): one solid
// line per model × kv for graph, dotted for eager, dashed for the roofline,
// dash-dotted with squares for llama.cpp (-peer).
func writeChart(w io.Writer, rep *Report) error {
	const (
		W                        = 1000.0
		left, right, top, bottom = 80.0, 300.0, 56.0, 64.0
		legendStep               = 18.0 // px per legend entry
	)
	ss := chartSeries(rep)
	// 620 px, taller where the legend (one entry per series, in the right
	// margin) needs it: 11 models' three lines each would run off the
	// bottom.
	H := max(620.0, top+8+float64(len(ss))*legendStep)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%g" height="%g" fill="white"/>`+"\n", W, H)
	title := "memra decode: tok/s vs context"
	if rep.Device.Name != "" {
		title += " on " + rep.Device.Name
	}
	fmt.Fprintf(&b, `<text x="%g" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", left, esc(title))
	sub := fmt.Sprintf("%d tokens/measurement, median of %d; roofline at copy bandwidth %.2f TB/s (read+write)", rep.Settings.Tokens, rep.Settings.Reps, rep.Copy.BWRW/1e12)
	fmt.Fprintf(&b, `<text x="%g" y="42" fill="#555">%s</text>`+"\n", left, esc(sub))
	if len(ss) == 0 {
		fmt.Fprintf(&b, `<text x="%g" y="%g">no data</text>`+"\n", W/2, H/2)
		b.WriteString("</svg>\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for i := range s.xs {
			xlo, xhi = min(xlo, s.xs[i]), max(xhi, s.xs[i])
			ylo, yhi = min(ylo, s.ys[i]), max(yhi, s.ys[i])
		}
	}
	xlo, xhi = logRange(xlo, xhi, 1.4)
	ylo, yhi = logRange(ylo, yhi, 1.25)
	px := logAxis{xlo, xhi, left, W - right}
	py := logAxis{ylo, yhi, H - bottom, top}

	// Frame, grid and tick labels.
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", left, top, W-right-left, H-bottom-top)
	xt := map[float64]bool{}
	for _, s := range ss {
		for _, x := range s.xs {
			xt[x] = true
		}
	}
	var xticks []float64
	for x := range xt {
		xticks = append(xticks, x)
	}
	sort.Float64s(xticks)
	for _, x := range xticks {
		p := px.pos(x)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/>`+"\n", p, top, p, H-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", p, H-bottom+16, esc(tickLabel(x)))
	}
	yticks := ticks125(ylo, yhi)
	if len(yticks) < 4 { // less than a decade shown: label every integer multiple
		yticks = ticksAll(ylo, yhi)
	}
	for _, y := range yticks {
		p := py.pos(y)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, p, W-right, p)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, p+4, esc(tickLabel(y)))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">context (tokens, log scale)</text>`+"\n", (left+W-right)/2, H-18)
	fmt.Fprintf(&b, `<text transform="translate(20 %g) rotate(-90)" text-anchor="middle">tokens/s (log scale)</text>`+"\n", (top+H-bottom)/2)

	// Series and legend.
	dash := map[string]string{"graph": "", "eager": ` stroke-dasharray="2 3"`, "roofline": ` stroke-dasharray="8 5"`, "peer": ` stroke-dasharray="12 3 2 3"`}
	width := map[string]float64{"graph": 2.5, "eager": 2, "roofline": 1.5, "peer": 1.5}
	for i, s := range ss {
		pts := make([]string, len(s.xs))
		for j := range s.xs {
			pts[j] = fmt.Sprintf("%.1f,%.1f", px.pos(s.xs[j]), py.pos(s.ys[j]))
		}
		fmt.Fprintf(&b, `<polyline class="series %s" points="%s" fill="none" stroke="%s" stroke-width="%g"%s><title>%s</title></polyline>`+"\n",
			s.kind, strings.Join(pts, " "), s.color, width[s.kind], dash[s.kind], esc(s.label))
		switch s.kind {
		case "graph", "eager":
			for j := range s.xs {
				fill := s.color
				if s.kind == "eager" {
					fill = "white"
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s" stroke="%s"><title>%s @ %d: %.1f tok/s</title></circle>`+"\n",
					px.pos(s.xs[j]), py.pos(s.ys[j]), fill, s.color, esc(s.label), int(s.xs[j]), s.ys[j])
			}
		case "peer": // squares, so the peer's points read apart from memra's circles
			for j := range s.xs {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="6" height="6" fill="white" stroke="%s"><title>%s @ %d: %.1f tok/s</title></rect>`+"\n",
					px.pos(s.xs[j])-3, py.pos(s.ys[j])-3, s.color, esc(s.label), int(s.xs[j]), s.ys[j])
			}
		}
		ly := top + 8 + float64(i)*legendStep
		lx := W - right + 16
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="%g"%s/>`+"\n", lx, ly, lx+30, ly, s.color, width[s.kind], dash[s.kind])
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", lx+36, ly+4, esc(s.label))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
