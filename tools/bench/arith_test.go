package main

import (
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/gpu"
)

// TestNewRowByHand: the bytes and roofline of a row as the run builds it
// (newRow), worked out by hand for the 9B's shape (config9b: 8 attention
// layers of 4 KV heads, head dim 256; 24 GDN layers of 32 V heads, 8,192
// conv channels, 4 taps) with 1e9 weight bytes, context 1024, 64 tokens,
// at 4 TB/s.
func TestNewRowByHand(t *testing.T) {
	// Mean attention length: positions 1024…1087 attend to 1025…1088 keys,
	// (1025 + 1088) / 2 = 1056.5.
	// KV f16: 8 · 4 · 1056.5 keys · 256 · 2 B · (K, V) = 34,619,392.
	// KV fp8: 8 · 4 · 1056.5 · (256 + 4) · 2 = 17,580,160.
	// State: 24 · 2 · (32·128·128·4 + 8192·3·4) = 24 · 2 · 2,195,456 = 105,381,888.
	// Roofline ms = bytes / 4e12 · 1e3:
	//   f16: (1e9 + 34,619,392 + 105,381,888) = 1,140,001,280 B → 0.28500032 ms;
	//   fp8: 1,122,962,048 B → 0.280740512 ms.
	for _, c := range []struct {
		fp8                bool
		kv                 float64
		total, roofMs      float64
		kvName             string
		measuredMs, rofPct float64
	}{
		{false, 34_619_392, 1_140_001_280, 0.28500032, "f16", 0.5, 57.000064},
		{true, 17_580_160, 1_122_962_048, 0.280740512, "fp8", 0.4, 70.185128},
	} {
		r := newRow("m", c.kvName, 1024, 64, 1e9, trafficOf(config9b(), c.fp8), 4e12)
		if r.Model != "m" || r.KV != c.kvName || r.Context != 1024 || r.Tokens != 64 || r.MeanTKV != 1056.5 {
			t.Errorf("%s: row %+v", c.kvName, r)
		}
		if r.WeightBytes != 1e9 || r.KVBytes != c.kv || r.StateBytes != 105_381_888 || r.bytes() != c.total {
			t.Errorf("%s: bytes %v + %v + %v = %v, want 1e9 + %v + 105381888 = %v", c.kvName, r.WeightBytes, r.KVBytes, r.StateBytes, r.bytes(), c.kv, c.total)
		}
		if math.Abs(r.RooflineMs-c.roofMs) > 1e-15 {
			t.Errorf("%s: roofline %v ms, want %v", c.kvName, r.RooflineMs, c.roofMs)
		}
		// 64 tokens of c.measuredMs each, three repeats, the median in the middle.
		r.finish([]float64{64 * c.measuredMs, 64 * c.measuredMs * 0.9, 64 * c.measuredMs * 1.1})
		if math.Abs(r.RooflinePct-c.rofPct) > 1e-9 {
			t.Errorf("%s: roofline %% %v, want %v", c.kvName, r.RooflinePct, c.rofPct)
		}
	}
	// No copy bandwidth (it failed): no roofline, and no roofline %.
	r := newRow("m", "f16", 1024, 64, 1e9, trafficOf(config9b(), false), 0)
	r.finish([]float64{32})
	if r.RooflineMs != 0 || r.RooflinePct != 0 {
		t.Errorf("without a bandwidth: roofline %v ms, %v %%", r.RooflineMs, r.RooflinePct)
	}
}

// TestCopyBW: a copy of 2 GiB in 1 ms reads and writes 2·2^31 bytes:
// 4.294967296 TB/s.
func TestCopyBW(t *testing.T) {
	if got := copyBW(2<<30, 1); math.Abs(got-4.294967296e12) > 1e-3 {
		t.Errorf("copyBW(2 GiB, 1 ms) = %v, want 4.294967296e12", got)
	}
	if got := copyBW(1<<30, 0.5); math.Abs(got-4.294967296e12) > 1e-3 {
		t.Errorf("copyBW(1 GiB, 0.5 ms) = %v, want 4.294967296e12", got)
	}
	// A copy the event timer saw take no time has no bandwidth: 0, which
	// measureCopy refuses, not the +Inf that JSON cannot hold (every
	// report file and -json failed to write).
	for _, ms := range []float64{0, -1} {
		if got := copyBW(1<<20, ms); got != 0 {
			t.Errorf("copyBW(1 MiB, %v ms) = %v, want 0", ms, got)
		}
	}
}

// TestMarkdownNumbers: the figures the Markdown report prints for a row and
// for the copy, each worked out by hand.
func TestMarkdownNumbers(t *testing.T) {
	r := newRow("m", "f16", 1024, 64, 1e9, trafficOf(config9b(), false), 4e12)
	r.Path = "graph"
	r.Captures = 3
	// 0.5 ms/token median, 0.45–0.55: spread 0.1 / 0.5 = 20%; 2000 tok/s;
	// roofline 0.28500032 ms → 0.285, 57.0%.
	r.finish([]float64{64 * 0.5, 64 * 0.45, 64 * 0.55})
	rep := &Report{Version: reportVersion,
		Copy:   CopyReport{Bytes: 3 << 29, Reps: 10, Ms: Stat{Median: 0.75, Min: 0.74, Max: 0.77}, BWRW: 4.294967296e12},
		Models: []ModelReport{{Model: "m", KV: "f16", Rows: []Row{r}}}}
	var b strings.Builder
	rep.markdown(&b)
	wantContains(t, "markdown", b.String(), []string{
		// 3·2^29 B = 1.5 GiB; spread 0.03 / 0.75 = 4.0%.
		"copy bandwidth: **4.295 TB/s** (bytes read + written; device-to-device copy of 1.50 GiB of random bytes, median of 10, 0.750 ms, spread 4.0%)",
		// 1,140,001,280 B = 1140.0 MB: 1000.0 + 34.6 + 105.4.
		"| m | f16 | 1k | graph | 0.500 | 0.450–0.550 | 20.0 | 2000.0 | 1140.0 | 1000.0+34.6+105.4 | 0.285 | 57.0 | 3 |",
	})
}

// TestMarkdownHeader: every line of the report's head and model table for
// one run with all its parts, written out by hand.
func TestMarkdownHeader(t *testing.T) {
	rep := &Report{Version: reportVersion, Started: "S0", Finished: "S1", Revision: "abc+dirty", Error: "copy failed",
		Device:   DeviceReport{Name: "GPU X", CC: "9.0", SMs: 132, TotalMem: 150_000_000_000, DriverVersion: 12080, PDL: true, SharedPerBlock: 232448},
		Settings: Settings{Contexts: []int{1024, 1536}, Tokens: 64, Reps: 3, Warmup: 1, Prompt: 16},
		Notes:    []string{"note one"},
		Models: []ModelReport{
			{Model: "ok", KV: "f16", LoadS: 9.46,
				Memory: Memory{WeightsDevice: 18_004_999_999, WeightsStep: 16e9, KV: 1_234_567_890, State: 56_215_876, Scratch: 4_990_000, Capacity: 4232, DeviceUsed: 21e9},
				Prime:  &Prime{Tokens: 16, Ms: Stat{Median: 300.04}}, Captures: 7, Nodes: 300},
			// Failed after its upload: a table row, and the error below it.
			{Model: "late", KV: "fp8", LoadS: 1, Memory: Memory{WeightsDevice: 1e9}, Error: "step failed", Skipped: []int{32768},
				Fallbacks: []string{"blk.0.ffn_down.weight of 12288 columns run matvec_q6_k_wide_lean"}},
			// Failed before: the error in the table.
			{Model: "early", KV: "f16", Error: "bad | type"},
		}}
	var b strings.Builder
	rep.markdown(&b)
	md := b.String()
	wantContains(t, "markdown", md, []string{
		"# memra decode benchmark\n\n",
		"\n- device: GPU X (sm 9.0, 132 SMs, 150.00 GB, 227 KiB of shared memory a block), driver 12080, programmatic dependent launch on\n",
		"\n- started S0, finished S1, revision abc+dirty\n",
		"\n- **error:** copy failed\n",
		"\n- 64 tokens per measurement, 1 warm-up + 3 timed repeats (median, min–max), contexts 1024, 1536, priming prompt 16 tokens\n",
		"\n- note one\n",
		// 18,004,999,999 B = 18.00 GB (18.004999999 rounds down); KV 1.23 GB,
		// states 0.06 GB, scratch 0.00 GB.
		"\n| ok | f16 | 9.5 | 18.00 GB | 16.00 GB | 1.23 GB | 0.06 GB | 0.00 GB | 4232 | 21.00 GB | 300.0 (16) | 7 | 300 |\n",
		"\n| late | fp8 | 1.0 | 1.00 GB | 0.00 GB | 0.00 GB | 0.00 GB | 0.00 GB | 0 | 0.00 GB | – | 0 | 0 |\n",
		"\n| early | f16 | error: bad / type |||||||||||\n",
		"\n**late (fp8) error:** step failed\n",
		"\n**late (fp8):** contexts 32768 not measured: past the model's context length\n",
		"\n**late (fp8):** blk.0.ffn_down.weight of 12288 columns run matvec_q6_k_wide_lean\n",
		"\n**early (f16) error:** bad | type\n",
	})
	for _, not := range []string{"copy bandwidth", "**ok (f16)", "stopped", "in progress"} {
		if strings.Contains(md, not) {
			t.Errorf("markdown has %q:\n%s", not, md)
		}
	}

	// PDL off, no revision nor error, a copy measured; stopped by a signal;
	// then in progress.
	rep = &Report{Started: "S0", Finished: "S1", Interrupted: "interrupt", Device: DeviceReport{Name: "GPU X", TotalMem: 80e9},
		Copy: CopyReport{Bytes: 1 << 30, Reps: 5, Ms: Stat{Median: 0.5, Min: 0.5, Max: 0.51}, BWRW: 4.294967296e12}}
	b.Reset()
	rep.markdown(&b)
	md = b.String()
	wantContains(t, "markdown", md, []string{
		"(sm , 0 SMs, 80.00 GB), driver 0, programmatic dependent launch off\n",
		"\n- started S0, stopped S1: interrupt\n",
		// 2^30 B = 1.00 GiB; 2·2^30 B / 0.5 ms = 4.295 TB/s; spread 0.01 / 0.5 = 2.0%.
		"\n- copy bandwidth: **4.295 TB/s** (bytes read + written; device-to-device copy of 1.00 GiB of random bytes, median of 5, 0.500 ms, spread 2.0%)\n",
	})
	for _, not := range []string{"revision", "**error:**", "finished"} {
		if strings.Contains(md, not) {
			t.Errorf("markdown has %q:\n%s", not, md)
		}
	}
	rep.Finished, rep.Interrupted = "", ""
	b.Reset()
	rep.markdown(&b)
	if !strings.Contains(b.String(), "\n- started S0 (in progress, or killed)\n") {
		t.Errorf("markdown of a run in progress:\n%s", b.String())
	}
}

// TestCtxName: contexts of whole KiB read as k, others as numbers.
func TestCtxName(t *testing.T) {
	for c, want := range map[int]string{0: "0", 64: "64", 1000: "1000", 1024: "1k", 1536: "1536", 2048: "2k", 32768: "32k", 33000: "33000"} {
		if got := ctxName(c); got != want {
			t.Errorf("ctxName(%d) = %q, want %q", c, got, want)
		}
	}
}

// TestProfileTableDashes: a rate only for kernels with both bytes and time,
// a copy percentage only with a copy bandwidth.
func TestProfileTableDashes(t *testing.T) {
	p := Profile{Context: 64, Steps: 1, TotalUs: 10, Kernels: []KernelShare{
		{Kernel: "k_bytes_no_time", Launches: 1, MB: 2},
		{Kernel: "k_no_copy", Launches: 1, Us: 10, Pct: 100, MB: 2, TBs: 0.2},
	}}
	var b strings.Builder
	(&Report{Models: []ModelReport{{Model: "m", KV: "f16", Profile: []Profile{p}}}}).profileTables(&b)
	wantContains(t, "profile table", b.String(), []string{
		"| k_bytes_no_time |  | 1 | 0.0 | 0.0 | 2.00 | — | — |",
		"| k_no_copy |  | 1 | 10.0 | 100.0 | 2.00 | 0.20 | — |",
	})
}

// TestProfileUntimed: launches the timer saw take no time (all of a step's,
// or one kernel's) have no share, rate nor copy percentage: 0, not the NaN
// or Inf of a division by zero, which JSON cannot hold.
func TestProfileUntimed(t *testing.T) {
	p := newProfile(64, 2, []gpu.Launch{{Kernel: "a", Weights: 4e6}, {Kernel: "a", Weights: 4e6}}, 4e12)
	if p.TotalUs != 0 || len(p.Kernels) != 1 {
		t.Fatalf("profile %+v", p)
	}
	// 2 launches over 2 steps: 1 a step; 8e6 B over 2 steps: 4 MB a step.
	if k := p.Kernels[0]; k.Launches != 1 || k.Us != 0 || k.MB != 4 || k.Pct != 0 || k.TBs != 0 || k.CopyPct != 0 {
		t.Errorf("untimed kernel: %+v", k)
	}
}
