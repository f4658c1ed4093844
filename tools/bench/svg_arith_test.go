package main

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestChartScales: the chart's log ranges, ticks and labels, worked out by
// hand at their bounds.
func TestChartScales(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*b }
	// One value widens to a decade around it: 100/√10 … 100·√10.
	if lo, hi := logRange(100, 100, 1.4); !near(lo, 31.62277660168379) || !near(hi, 316.22776601683796) {
		t.Errorf("logRange(100, 100) = %v, %v", lo, hi)
	}
	if lo, hi := logRange(10, 1000, 1.25); !near(lo, 8) || !near(hi, 1250) {
		t.Errorf("logRange(10, 1000, 1.25) = %v, %v, want 8, 1250", lo, hi)
	}
	// Both ends are ticks when they are 1, 2, 5 × 10^k.
	if got := ticks125(1, 1000); !reflect.DeepEqual(got, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}) {
		t.Errorf("ticks125(1, 1000) = %v", got)
	}
	if got := ticksAll(7, 10); !reflect.DeepEqual(got, []float64{7, 8, 9, 10}) {
		t.Errorf("ticksAll(7, 10) = %v", got)
	}
	if got := ticksAll(80, 137.5); !reflect.DeepEqual(got, []float64{80, 90, 100}) {
		t.Errorf("ticksAll(80, 137.5) = %v", got)
	}
	for v, want := range map[float64]string{512: "512", 999: "999", 1000: "1k", 1024: "1k", 3000: "3k", 3072: "3k", 1500: "1500",
		500000: "500k", 1e6: "1M", 2e6: "2M", 1.5e6: "1500k", 2048000: "2000k"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestChartText: the title names the device, the subtitle the settings and
// the copy bandwidth (4.2e12 B/s: 4.20 TB/s); graph points are filled,
// eager ones white, the roofline has none; under a decade of tok/s every
// integer multiple is labelled.
func TestChartText(t *testing.T) {
	var b bytes.Buffer
	if err := writeChart(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	wantContains(t, "chart", svg, []string{">memra decode: tok/s vs context on NVIDIA H200</text>",
		">128 tokens/measurement, median of 3; roofline at copy bandwidth 4.20 TB/s (read+write)</text>"})
	// 2 models × 3 contexts × (graph, eager).
	if n, white := strings.Count(svg, "<circle "), strings.Count(svg, `r="3" fill="white"`); n != 12 || white != 6 {
		t.Errorf("%d points, %d white; want 12, 6", n, white)
	}

	// 100 and 110 tok/s: y from 100/1.25 = 80 to 110·1.25 = 137.5, where
	// 1, 2, 5 give only 100.
	rep := &Report{Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 100}},
		{Model: "m", KV: "f16", Context: 1024, Path: "graph", TokS: Stat{Median: 110}},
	}}}}
	b.Reset()
	if err := writeChart(&b, rep); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "narrow chart", b.String(), []string{`text-anchor="end">80</text>`, `text-anchor="end">90</text>`, `text-anchor="end">100</text>`})
	if strings.Contains(b.String(), "vs context on") {
		t.Error("chart names a device it was not given")
	}
}

// TestChartDetails: eager points are the white ones; four 1-2-5 ticks
// (100 to 1,000) are enough to leave out the integer multiples; an empty
// chart says so in the middle of its 1000 × 620 px.
func TestChartDetails(t *testing.T) {
	var b bytes.Buffer
	if err := writeChart(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `fill="white" stroke="#1f77b4"><title>synth-9b-bf16 f16 eager @ 64:`) ||
		strings.Contains(b.String(), `fill="white" stroke="#1f77b4"><title>synth-9b-bf16 f16 graph`) {
		t.Error("eager points are not the white ones")
	}
	// 100 and 800 tok/s: y from 80 to 1000, ticks 100, 200, 500, 1k.
	rep := &Report{Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{
		{Model: "m", KV: "f16", Context: 64, Path: "graph", TokS: Stat{Median: 800}},
		{Model: "m", KV: "f16", Context: 1024, Path: "graph", TokS: Stat{Median: 100}},
	}}}}
	b.Reset()
	if err := writeChart(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `text-anchor="end">1k</text>`) || strings.Contains(b.String(), `text-anchor="end">300</text>`) {
		t.Errorf("ticks of 100 to 1000 tok/s:\n%s", b.String())
	}
	b.Reset()
	if err := writeChart(&b, &Report{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<text x="500" y="310">no data</text>`) {
		t.Errorf("empty chart:\n%s", b.String())
	}
}
