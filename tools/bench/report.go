package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/gpu"
)

// reportVersion is bumped when the JSON layout changes incompatibly.
const reportVersion = 1

// Notes every report carries, so a reader of the files alone knows how the
// numbers were made.
const (
	noteSynthetic = "context filled synthetically (random KV rows and recurrent states, counters at the context); speed depends on bytes moved, not values"
	noteRoofline  = "roofline ms = (weight + KV + state bytes per token) / copy bandwidth, where copy bandwidth counts bytes read + written (so counted, the H200 copies at about 4.19 TB/s and streams read-only at 4.11: the two ceilings agree); roofline % = roofline ms / measured ms"
	noteBytes     = "bytes per token: weights as one decode step reads them in the file's types (untied token_embd: one row; a matrix the GPU stores in a wider type, which the fallbacks name, reads more) + KV at the mean attention length of the measured steps + GDN recurrent and conv states read and written"
	notePaths     = "eager = DecodeStep with logits copied to the host and host argmax per token; graph = ContinueGraph replaying one captured CUDA graph per attention bucket, 4-byte token read back per token; sampled = graph with the token drawn on the device from the top 40 (temperature 0.8, top-p 0.95, min-p 0.05: memra run's defaults) instead of argmax"
	noteCaptures  = "graph captures happen in the warm-up and are excluded from the timed repeats"
	// With -warmup 0 the first timed repeat of each context and path is
	// the one that captures.
	noteNoWarmup = "-warmup 0: each context's first timed repeat of graph and sampled captures their graphs, and its time includes the captures"
)

// runNotes are the notes of every report of a run with warmup untimed
// repeats.
func runNotes(warmup int) []string {
	captures := noteCaptures
	if warmup == 0 {
		captures = noteNoWarmup
	}
	return []string{noteSynthetic, noteRoofline, noteBytes, notePaths, captures}
}

// Report is one bench run, written as JSON.
type Report struct {
	Version  int           `json:"version"`
	Started  string        `json:"started"` // RFC 3339
	Finished string        `json:"finished,omitempty"`
	Host     string        `json:"host,omitempty"`
	Revision string        `json:"revision,omitempty"` // vcs.revision of the binary, "+dirty" if modified
	Device   DeviceReport  `json:"device"`
	Copy     CopyReport    `json:"copy"`
	Settings Settings      `json:"settings"`
	Notes    []string      `json:"notes"`
	Models   []ModelReport `json:"models"`
	Error    string        `json:"error,omitempty"` // a failure before any model (the copy measurement)
	// Interrupted says why the run stopped early (a signal), "" for one
	// that ran to its end.
	Interrupted string `json:"interrupted,omitempty"`
	// Peer: the graph rows against llama-bench's reports of the same files
	// (-peer, those files in PeerFiles), for the table and the chart.
	Peer      *peerComparison `json:"peer,omitempty"`
	PeerFiles []string        `json:"peer_files,omitempty"`
}

// DeviceReport describes the GPU.
type DeviceReport struct {
	Name          string `json:"name"`
	CC            string `json:"cc"` // compute capability, "9.0"
	SMs           int    `json:"sms"`
	TotalMem      uint64 `json:"total_mem"`
	MemBusBits    int    `json:"mem_bus_bits,omitempty"`
	MemClockKHz   int    `json:"mem_clock_khz,omitempty"`
	DriverVersion int    `json:"driver_version,omitempty"`
	PDL           bool   `json:"pdl"` // kernels launched with programmatic dependent launch
	// SharedPerBlock: the bytes of shared memory a block may opt in to,
	// which picks some K-quant kernels (gpu.Model.Fallbacks).
	SharedPerBlock int `json:"shared_per_block,omitempty"`
}

// CopyReport is the device-to-device copy that sets the roofline.
type CopyReport struct {
	Bytes   uint64    `json:"bytes"` // buffer size; each copy reads and writes it
	Reps    int       `json:"reps"`
	Ms      Stat      `json:"ms"`
	BWRW    float64   `json:"bw_rw"` // bytes read + written per second, from the median time
	Samples []float64 `json:"samples_ms,omitempty"`
}

// Settings are the measurement parameters.
type Settings struct {
	Contexts []int  `json:"contexts"`
	Tokens   int    `json:"tokens"`
	Reps     int    `json:"reps"`
	Warmup   int    `json:"warmup"`
	Prompt   int    `json:"prompt"`
	KV       string `json:"kv_list"`
	// Omit: step parts left out of every step (-omit); the times are then
	// those of a step without them.
	Omit []string `json:"omit,omitempty"`
	// Fatbin: the kernel image loaded instead of the binary's own
	// (-fatbin), "PATH (sha256 HEX)".
	Fatbin string `json:"fatbin,omitempty"`
	// SharedLimit: MEMRA_SHARED_LIMIT, the bytes of shared memory the
	// matvec and prompt-batch kernels' blocks were held to, where it was
	// below the device's (0: the device's own).
	SharedLimit int `json:"shared_limit,omitempty"`
	// Priming: how prompts were primed where not in chunks replayed as
	// graphs (the default, perf.md step 125): "eager-chunks" (-eager-chunks,
	// each chunk's kernels launched from the host) or "token-feed"
	// (-token-feed, one decode step a token). Only prime ms depends on it.
	Priming string `json:"priming,omitempty"`
}

// notLatest says why the report is not written as latest.* too, or "" when
// it is: latest.* is a whole run (finished, not interrupted nor failed
// before its models, with a row to compare; the flushes while it runs
// write only its stamped files) of whole steps on the binary's own
// kernels, so that -compare OUT/latest.json always reads a baseline.
func (rep *Report) notLatest() string {
	switch {
	case rep.Finished == "":
		return "this run has not finished"
	case rep.Interrupted != "":
		return "this run was interrupted"
	case rep.Error != "":
		return "this run failed before its models"
	case len(rep.allRows()) == 0:
		return "no model of this run measured a row"
	case len(rep.Settings.Omit) > 0:
		return "this run omitted step parts"
	case rep.Settings.Fatbin != "":
		return "this run loaded -fatbin's kernels"
	case rep.Settings.SharedLimit > 0:
		return "this run held the kernels to MEMRA_SHARED_LIMIT"
	}
	return ""
}

// ModelReport is one model with one KV type.
type ModelReport struct {
	Model    string    `json:"model"` // row key
	Path     string    `json:"path"`
	KV       string    `json:"kv"` // "f16" or "fp8"
	Arch     string    `json:"arch,omitempty"`
	Layers   int       `json:"layers,omitempty"`
	Attn     int       `json:"attn_layers,omitempty"`
	Vocab    int       `json:"vocab,omitempty"`
	SynthS   float64   `json:"synth_s,omitempty"` // seconds writing the synth file (0: reused or a user file)
	LoadS    float64   `json:"load_s,omitempty"`  // open + parse + upload
	UploadS  float64   `json:"upload_s,omitempty"`
	Memory   Memory    `json:"memory"`
	Prime    *Prime    `json:"prime,omitempty"`
	Captures int       `json:"captures"` // graphs captured in total
	Nodes    int       `json:"nodes"`    // kernel nodes of a captured greedy graph
	Rows     []Row     `json:"rows"`
	Skipped  []int     `json:"skipped_contexts,omitempty"` // contexts past the model's context length, not measured
	Profile  []Profile `json:"profile,omitempty"`          // -profile: kernel time per step, per context
	// PrefillProfile (-profile N, where the model primes prompts in
	// chunks): kernel time per prefill chunk over a prompt's first N
	// chunks, from position 0.
	PrefillProfile *Profile `json:"prefill_profile,omitempty"`
	// Fallbacks: matrices stored as a wider type than their file's (their
	// roofline counts the file's bytes), and products that ran a K-quant
	// kernel with fewer ring slots than usual, the GPU (or
	// MEMRA_SHARED_LIMIT) allowing a block too little shared memory for it
	// (gpu.Model.Fallbacks).
	Fallbacks []string `json:"fallbacks,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// Profile is where a decode step's GPU time goes at one context
// (-profile): every kernel timed alone, averaged over Steps, of the greedy
// graph's step (gpu.Model.ProfileGraphStep; Path "graph") or, in reports
// before session 84, of an eager step (gpu.Model.ProfileStep; Path empty);
// or a prefill chunk's (gpu.Model.ProfilePrefill), Steps chunks of Tokens
// tokens each.
type Profile struct {
	Context int           `json:"context"`
	Path    string        `json:"path,omitempty"` // a decode profile's step: "graph", or "" for eager
	Steps   int           `json:"steps"`
	Tokens  int           `json:"tokens,omitempty"` // a prefill chunk's tokens; 0: decode steps
	TotalUs float64       `json:"total_us"`         // kernel time per step (chunk)
	Kernels []KernelShare `json:"kernels"`          // largest first
}

// KernelShare is one kernel's part of a profiled step: its launches on one
// shape (gpu.Launch.Shape: a matrix's rows × cols, an attention bucket's
// splits, ...), and the device-memory bytes they must move (weights, KV
// cache and recurrent state) against their time and the run's copy
// bandwidth.
type KernelShare struct {
	Kernel   string  `json:"kernel"`
	Shape    string  `json:"shape,omitempty"`
	Launches float64 `json:"launches"` // per step
	Us       float64 `json:"us"`       // per step
	Pct      float64 `json:"pct"`      // of TotalUs
	MB       float64 `json:"mb"`       // weight + KV + state bytes per step, 1e6
	TBs      float64 `json:"tb_s"`     // MB / Us: the bytes' rate while the kernel runs, 1e12 B/s
	CopyPct  float64 `json:"copy_pct"` // TBs against the copy bandwidth (read + written, as the roofline counts)
}

// Memory is device memory in bytes.
type Memory struct {
	WeightsDevice uint64 `json:"weights_device"` // uploaded weights
	WeightsStep   uint64 `json:"weights_step"`   // weight bytes one decode step reads, in the file's types
	Capacity      int    `json:"cache_capacity"` // tokens each cache holds
	KV            uint64 `json:"kv"`             // per cache, at capacity
	State         uint64 `json:"state"`
	Scratch       uint64 `json:"scratch"`
	Caches        int    `json:"caches"`                 // caches allocated (eager + graph)
	L2SetAside    uint64 `json:"l2_set_aside,omitempty"` // L2 kept for the caches' state and scratch (perf.md step 98)
	DeviceUsed    uint64 `json:"device_used"`            // total - free with everything allocated
}

// Prime is the prompt priming measurement (GenerateGraph with nothing to
// generate).
type Prime struct {
	Tokens int       `json:"tokens"`
	Chunk  int       `json:"chunk_tokens"` // tokens a prefill chunk takes (gpu.Model.PrefillChunk); 1: one step per token
	Ms     Stat      `json:"ms"`
	Samps  []float64 `json:"samples_ms,omitempty"`
}

// Row is one (model, kv, context, path) measurement.
type Row struct {
	Model   string  `json:"model"`
	KV      string  `json:"kv"`
	Context int     `json:"context"`
	Path    string  `json:"path"` // "eager", "graph" or "sampled"
	Tokens  int     `json:"tokens"`
	MeanTKV float64 `json:"mean_tkv"`
	MsTok   Stat    `json:"ms_per_token"`
	TokS    Stat    `json:"tok_s"` // 1000 / MsTok, figure by figure (perSecond)
	// Bytes one token moves.
	WeightBytes float64   `json:"weight_bytes"`
	KVBytes     float64   `json:"kv_bytes"`
	StateBytes  float64   `json:"state_bytes"`
	RooflineMs  float64   `json:"roofline_ms"`
	RooflinePct float64   `json:"roofline_pct"`        // roofline ms / median ms × 100
	Captures    int       `json:"captures,omitempty"`  // graphs captured in this context's warm-up
	WarmupMs    float64   `json:"warmup_ms,omitempty"` // first warm-up run, captures included
	Samples     []float64 `json:"samples_ms,omitempty"`
}

func (r *Row) bytes() float64 { return r.WeightBytes + r.KVBytes + r.StateBytes }

// key identifies a row across runs.
func (r *Row) key() string { return fmt.Sprintf("%s|%s|%d|%s", r.Model, r.KV, r.Context, r.Path) }

// allRows flattens the models' rows in order.
func (rep *Report) allRows() []Row {
	var rows []Row
	for _, m := range rep.Models {
		rows = append(rows, m.Rows...)
	}
	return rows
}

// readReport reads a JSON report and checks its version.
func readReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read report %s: %s (want a bench report: bench-*.json or latest.json in bench's -out)", path, jsonProblem(b, err))
	}
	// Say what the version means: none is another JSON file (bench
	// -compare -json's output, say), a later one a newer bench's.
	switch {
	case r.Version == 0:
		return nil, fmt.Errorf(`read report %s: version 0 or none: not a bench report (want bench-*.json or latest.json in bench's -out)`, path)
	case r.Version > reportVersion:
		return nil, fmt.Errorf("read report %s: version %d, from a newer bench than this one (it reads version %d): compare with that bench", path, r.Version, reportVersion)
	case r.Version != reportVersion:
		return nil, fmt.Errorf(`read report %s: "version" %d is not a bench report's (this bench reads version %d)`, path, r.Version, reportVersion)
	}
	// -compare matches rows by key; a report holding one key twice (merged
	// or edited by hand) has no single row to match.
	at := map[string]int{}
	for i, row := range r.allRows() {
		k := row.key()
		if j, ok := at[k]; ok {
			return nil, fmt.Errorf("read report %s: rows %d and %d are both %s (model|kv|context|path); a report holds one row per key", path, j+1, i+1, k)
		}
		at[k] = i
	}
	return &r, nil
}

// jsonProblem says what is wrong with the JSON b that failed to decode
// with err, in the file's terms: empty, where its syntax breaks, or which
// field holds what kind of value (not Go's type names).
func jsonProblem(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return "the file is empty"
	case errors.As(err, &syn) && syn.Offset >= int64(len(b)):
		return fmt.Sprintf("the JSON ends early, after %d bytes (a file cut short?)", len(b))
	case errors.As(err, &syn):
		return fmt.Sprintf("not JSON at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("its field %s holds a JSON %s, which is not what that field holds", typ.Field, typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("the file is a JSON %s, not an object", typ.Value)
	}
	return err.Error()
}

func (rep *Report) json() ([]byte, error) {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeFiles writes bench-<stamp>.{json,md,svg} and, unless the report
// says notLatest, latest.{json,md,svg} into dir. Each file is written to a
// temporary name and renamed, so a run killed mid-write leaves the previous
// version.
func (rep *Report) writeFiles(dir, stamp string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	js, err := rep.json()
	if err != nil {
		return err
	}
	var md, svg strings.Builder
	rep.markdown(&md)
	if err := writeChart(&svg, rep); err != nil {
		return err
	}
	var errs []error
	bases := []string{"bench-" + stamp, "latest"}
	if rep.notLatest() != "" {
		bases = bases[:1]
	}
	for _, base := range bases {
		for ext, data := range map[string][]byte{".json": js, ".md": []byte(md.String()), ".svg": []byte(svg.String())} {
			errs = append(errs, writeAtomic(filepath.Join(dir, base+ext), data))
		}
	}
	return errors.Join(errs...)
}

func writeAtomic(path string, data []byte) error {
	return convert.WriteFileAtomic(context.Background(), path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Unit formatting.
func gb(b uint64) string    { return fmt.Sprintf("%.2f GB", float64(b)/1e9) }
func mb(b float64) string   { return fmt.Sprintf("%.1f", b/1e6) }
func tbs(bw float64) string { return fmt.Sprintf("%.3f TB/s", bw/1e12) }
func ctxName(c int) string {
	if c >= 1024 && c%1024 == 0 {
		return fmt.Sprintf("%dk", c/1024)
	}
	return fmt.Sprint(c)
}

// markdown writes the report as Markdown: setup, per-model summary, and
// the decode table.
func (rep *Report) markdown(w io.Writer) {
	fmt.Fprintf(w, "# memra decode benchmark\n\n")
	d := rep.Device
	pdl := "off"
	if d.PDL {
		pdl = "on"
	}
	shared := ""
	if d.SharedPerBlock > 0 {
		shared = fmt.Sprintf(", %d KiB of shared memory a block", d.SharedPerBlock/1024)
	}
	fmt.Fprintf(w, "- device: %s (sm %s, %d SMs, %s%s), driver %d, programmatic dependent launch %s\n", d.Name, d.CC, d.SMs, gb(d.TotalMem),
		shared, d.DriverVersion, pdl)
	fmt.Fprintf(w, "- started %s", rep.Started)
	switch {
	case rep.Interrupted != "":
		fmt.Fprintf(w, ", stopped %s: %s", rep.Finished, rep.Interrupted)
	case rep.Finished != "":
		fmt.Fprintf(w, ", finished %s", rep.Finished)
	default:
		fmt.Fprintf(w, " (in progress, or killed)")
	}
	if rep.Revision != "" {
		fmt.Fprintf(w, ", revision %s", rep.Revision)
	}
	fmt.Fprintln(w)
	if rep.Error != "" {
		fmt.Fprintf(w, "- **error:** %s\n", rep.Error)
	}
	if rep.Copy.BWRW > 0 {
		fmt.Fprintf(w, "- copy bandwidth: **%s** (bytes read + written; device-to-device copy of %.2f GiB of random bytes, median of %d, %.3f ms, spread %.1f%%)\n",
			tbs(rep.Copy.BWRW), float64(rep.Copy.Bytes)/(1<<30), rep.Copy.Reps, rep.Copy.Ms.Median, rep.Copy.Ms.spreadPct())
	}
	s := rep.Settings
	ctxs := make([]string, len(s.Contexts))
	for i, c := range s.Contexts {
		ctxs[i] = fmt.Sprint(c)
	}
	fmt.Fprintf(w, "- %d tokens per measurement, %d warm-up + %d timed repeats (median, min–max), contexts %s, priming prompt %d tokens\n",
		s.Tokens, s.Warmup, s.Reps, strings.Join(ctxs, ", "), s.Prompt)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}

	fmt.Fprintf(w, "\n## Models\n\n")
	fmt.Fprintln(w, "| model | kv | load s | weights (device) | weights/step | KV @cap | states | scratch | cap | device used | prime ms (P) | captures | nodes/graph |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, m := range rep.Models {
		if m.Error != "" && m.Memory.WeightsDevice == 0 {
			fmt.Fprintf(w, "| %s | %s | error: %s |||||||||||\n", m.Model, m.KV, strings.ReplaceAll(m.Error, "|", "/"))
			continue
		}
		prime := "–"
		if m.Prime != nil {
			prime = fmt.Sprintf("%.1f (%d)", m.Prime.Ms.Median, m.Prime.Tokens)
		}
		mem := m.Memory
		fmt.Fprintf(w, "| %s | %s | %.1f | %s | %s | %s | %s | %s | %d | %s | %s | %d | %d |\n",
			m.Model, m.KV, m.LoadS, gb(mem.WeightsDevice), gb(mem.WeightsStep), gb(mem.KV), gb(mem.State), gb(mem.Scratch),
			mem.Capacity, gb(mem.DeviceUsed), prime, m.Captures, m.Nodes)
	}
	for _, m := range rep.Models {
		if m.Error != "" {
			fmt.Fprintf(w, "\n**%s (%s) error:** %s\n", m.Model, m.KV, m.Error)
		}
		if len(m.Skipped) > 0 {
			fmt.Fprintf(w, "\n**%s (%s):** contexts %s not measured: past the model's context length\n", m.Model, m.KV, joinInts(m.Skipped))
		}
		for _, f := range m.Fallbacks {
			fmt.Fprintf(w, "\n**%s (%s):** %s\n", m.Model, m.KV, f)
		}
	}

	fmt.Fprintf(w, "\n## Decode\n\n")
	rep.decodeTable(w)
	if rep.Peer != nil {
		fmt.Fprintln(w)
		rep.Peer.print(w, rep.PeerFiles)
	}
	rep.profileTables(w)
}

// profileTables writes the -profile tables, one per model and context,
// and one per model for its prefill chunks.
func (rep *Report) profileTables(w io.Writer) {
	for _, m := range rep.Models {
		for _, p := range m.Profile {
			fmt.Fprintf(w, "\n## Kernel time per %s step: %s %s @ctx %s (%d steps, %.1f µs of kernels per step)\n\n",
				p.stepName(), m.Model, m.KV, ctxName(p.Context), p.Steps, p.TotalUs)
			p.table(w, "step")
		}
		if p := m.PrefillProfile; p != nil {
			fmt.Fprintf(w, "\n## Kernel time per prefill chunk: %s %s (a prompt's first %d chunks of %d tokens, %.1f µs of kernels per chunk)\n\n",
				m.Model, m.KV, p.Steps, p.Tokens, p.TotalUs)
			p.table(w, "chunk")
		}
	}
}

// table writes a profile's rows, per what it profiled (a step or a chunk).
func (p *Profile) table(w io.Writer, per string) {
	fmt.Fprintf(w, "| kernel | shape | launches/%s | µs/%s | %% | MB/%s | TB/s | %% of copy |\n", per, per, per)
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, k := range p.Kernels {
		rate, pct := "—", "—"
		if k.MB > 0 && k.Us > 0 {
			rate = fmt.Sprintf("%.2f", k.TBs)
			if k.CopyPct > 0 {
				pct = fmt.Sprintf("%.0f", k.CopyPct)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %.1f | %.1f | %.2f | %s | %s |\n", k.Kernel, k.Shape, k.Launches, k.Us, k.Pct, k.MB, rate, pct)
	}
}

// newProfile sums the launches of steps profiled steps by kernel name and
// shape; bwRW is the run's copy bandwidth (bytes read + written per
// second; 0: unknown).
func newProfile(ctx, steps int, launches []gpu.Launch, bwRW float64) Profile {
	p := Profile{Context: ctx, Steps: steps}
	type key struct{ kernel, shape string }
	at := map[key]int{}
	for _, l := range launches {
		i, ok := at[key{l.Kernel, l.Shape}]
		if !ok {
			i = len(p.Kernels)
			at[key{l.Kernel, l.Shape}] = i
			p.Kernels = append(p.Kernels, KernelShare{Kernel: l.Kernel, Shape: l.Shape})
		}
		us := l.Time.Seconds() * 1e6 / float64(steps)
		p.Kernels[i].Launches += 1 / float64(steps)
		p.Kernels[i].Us += us
		p.Kernels[i].MB += float64(l.Weights+l.Cache) / 1e6 / float64(steps)
		p.TotalUs += us
	}
	for i := range p.Kernels {
		k := &p.Kernels[i]
		if p.TotalUs > 0 {
			k.Pct = 100 * k.Us / p.TotalUs
		}
		if k.Us > 0 {
			k.TBs = k.MB / k.Us // 1e6 B / 1e-6 s
			if bwRW > 0 {
				k.CopyPct = 100 * k.TBs * 1e12 / bwRW
			}
		}
	}
	sort.SliceStable(p.Kernels, func(i, j int) bool { return p.Kernels[i].Us > p.Kernels[j].Us })
	return p
}

// decodeTable writes the Markdown table of decode rows.
func (rep *Report) decodeTable(w io.Writer) {
	fmt.Fprintln(w, "| model | kv | ctx | path | ms/tok | min–max | spread % | tok/s | MB/tok | (weights+kv+state) | roofline ms | roofline % | captures |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rep.allRows() {
		capt := ""
		if r.Path != "eager" {
			capt = fmt.Sprint(r.Captures)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.3f | %.3f–%.3f | %.1f | %.1f | %s | %s+%s+%s | %.3f | %.1f | %s |\n",
			r.Model, r.KV, ctxName(r.Context), r.Path, r.MsTok.Median, r.MsTok.Min, r.MsTok.Max, r.MsTok.spreadPct(),
			r.TokS.Median, mb(r.bytes()), mb(r.WeightBytes), mb(r.KVBytes), mb(r.StateBytes), r.RooflineMs, r.RooflinePct, capt)
	}
}

// ratio is one matched row of a comparison.
type ratio struct {
	Model, KV    string
	Context      int
	Path         string
	Old, New     float64 // tok/s medians
	Ratio        float64 // new / old
	OldPct, NewP float64 // roofline %
	// OtherWork is "" when both rows count the same bytes per token, else
	// what differs: not the same work (another model file under the same
	// label, another -tokens), so the row stays out of the geomeans.
	OtherWork string
}

// primeRatio is one model and cache in both reports: its prompt priming,
// compared where both primed the same prompt length, and its load time.
type primeRatio struct {
	Model, KV          string
	OldTokens          int     // P of the old priming (0: not measured)
	NewTokens          int     // P of the new priming (0: not measured)
	OldChunk, NewChunk int     // tokens a prefill chunk took (0: not recorded, reports before it)
	OldMs, NewMs       float64 // priming medians
	Speedup            float64 // OldMs / NewMs (> 1 is faster); NaN unless both primed P tokens
	OldLoadS, NewLoadS float64
}

// kernelRatio is one kernel on one shape in a profile both reports took of
// a model and cache (-profile): of a decode step at a context, or of a
// prefill chunk. A time of 0 is a kernel the other report's profile has
// and this one's lacks.
type kernelRatio struct {
	Model, KV     string
	Of            string // "graph step @ctx 1k", "eager step @ctx 1k", "prefill chunk of 8"
	Kernel, Shape string
	OldUs, NewUs  float64 // per step (chunk)
}

// comparison matches rows by (model, kv, context, path), models by (model,
// kv) for their priming and load, and their -profile tables by context and
// step (or chunk) and kernel.
type comparison struct {
	Rows                   []ratio
	Prime                  []primeRatio
	Kernels                []kernelRatio
	StepsUnpaired          []string // step profiles of one context but another step: "m f16 @ctx 1k (old eager, new graph)"
	OnlyOld, OnlyNew       []string
	OmitOld, OmitNew       []string // the reports' -omit parts, if any
	FatbinOld, FatbinNew   string   // the reports' -fatbin, if any
	SharedOld, SharedNew   int      // the reports' MEMRA_SHARED_LIMIT, if any
	PrimingOld, PrimingNew string   // the reports' Settings.Priming, if any
	DeviceOld, DeviceNew   string   // the GPUs the reports ran on (deviceLabel)
	OtherDevice            bool     // the reports' GPUs have different names: the ratios are of two machines
}

// deviceLabel names the GPU a report ran on, for telling a comparison of
// two machines from one of two builds: the name, and the copy bandwidth
// its roofline used where measured.
func deviceLabel(rep *Report) string {
	name := rep.Device.Name
	if name == "" {
		name = "(device not recorded)"
	}
	if rep.Copy.BWRW > 0 {
		name += " (copy " + tbs(rep.Copy.BWRW) + ")"
	}
	return name
}

func compareReports(old, cur *Report) comparison {
	c := comparison{OmitOld: old.Settings.Omit, OmitNew: cur.Settings.Omit, FatbinOld: old.Settings.Fatbin, FatbinNew: cur.Settings.Fatbin,
		SharedOld: old.Settings.SharedLimit, SharedNew: cur.Settings.SharedLimit, PrimingOld: old.Settings.Priming, PrimingNew: cur.Settings.Priming,
		DeviceOld: deviceLabel(old), DeviceNew: deviceLabel(cur)}
	c.OtherDevice = old.Device.Name != cur.Device.Name
	oldRows := map[string]Row{}
	for _, r := range old.allRows() {
		oldRows[r.key()] = r
	}
	seen := map[string]bool{}
	for _, r := range cur.allRows() {
		k := r.key()
		o, ok := oldRows[k]
		if !ok {
			c.OnlyNew = append(c.OnlyNew, k)
			continue
		}
		seen[k] = true
		x := ratio{Model: r.Model, KV: r.KV, Context: r.Context, Path: r.Path, Old: o.TokS.Median, New: r.TokS.Median, OldPct: o.RooflinePct, NewP: r.RooflinePct}
		x.Ratio = math.NaN() // no ratio of a failed or empty measurement
		if q := r.TokS.Median / o.TokS.Median; o.TokS.Median > 0 && r.TokS.Median > 0 && !math.IsInf(q, 0) {
			x.Ratio = q
		}
		x.OtherWork = otherWork(&o, &r)
		c.Rows = append(c.Rows, x)
	}
	for _, r := range old.allRows() {
		if k := r.key(); !seen[k] {
			c.OnlyOld = append(c.OnlyOld, k)
		}
	}
	sort.Strings(c.OnlyOld)
	sort.Strings(c.OnlyNew)
	c.Prime = comparePrime(old, cur)
	c.Kernels, c.StepsUnpaired = compareKernels(old, cur)
	return c
}

// stepName is the decode step a Profile timed: "graph" or "eager".
func (p *Profile) stepName() string {
	if p.Path == "" {
		return "eager"
	}
	return p.Path
}

// compareKernels pairs the -profile tables of the models in both reports
// (by model and kv): step tables of one context and step, prefill tables of
// one chunk length; within a pair, kernels by name and shape, the largest
// change in time first. It also returns the step tables of one context
// left unpaired because they timed another step: an eager step's kernels
// are not a graph step's (a 16-bit logits matrix is read whole in one and
// screened in the other), and reports before session 84 profiled eager
// steps.
func compareKernels(old, cur *Report) ([]kernelRatio, []string) {
	oldModels := old.modelsByKey()
	var out []kernelRatio
	var unpaired []string
	pair := func(m *ModelReport, of string, o, n *Profile) {
		type key struct{ kernel, shape string }
		at := map[key]int{}
		var rows []kernelRatio
		for _, k := range n.Kernels {
			at[key{k.Kernel, k.Shape}] = len(rows)
			rows = append(rows, kernelRatio{Model: m.Model, KV: m.KV, Of: of, Kernel: k.Kernel, Shape: k.Shape, NewUs: k.Us})
		}
		for _, k := range o.Kernels {
			if i, ok := at[key{k.Kernel, k.Shape}]; ok {
				rows[i].OldUs = k.Us
				continue
			}
			rows = append(rows, kernelRatio{Model: m.Model, KV: m.KV, Of: of, Kernel: k.Kernel, Shape: k.Shape, OldUs: k.Us})
		}
		sort.SliceStable(rows, func(i, j int) bool {
			return math.Abs(rows[i].NewUs-rows[i].OldUs) > math.Abs(rows[j].NewUs-rows[j].OldUs)
		})
		out = append(out, rows...)
	}
	for i := range cur.Models {
		m := &cur.Models[i]
		o, ok := oldModels[m.key()]
		if !ok {
			continue
		}
		for j := range m.Profile {
			n := &m.Profile[j]
			var other *Profile
			paired := false
			for k := range o.Profile {
				if o.Profile[k].Context != n.Context {
					continue
				}
				if o.Profile[k].Path == n.Path {
					pair(m, n.stepName()+" step @ctx "+ctxName(n.Context), &o.Profile[k], n)
					paired = true
					break
				}
				other = &o.Profile[k]
			}
			if !paired && other != nil {
				unpaired = append(unpaired, fmt.Sprintf("%s %s @ctx %s (old %s, new %s)", m.Model, m.KV, ctxName(n.Context), other.stepName(), n.stepName()))
			}
		}
		if p, q := o.PrefillProfile, m.PrefillProfile; p != nil && q != nil && p.Tokens == q.Tokens {
			pair(m, fmt.Sprintf("prefill chunk of %d", q.Tokens), p, q)
		}
	}
	return out, unpaired
}

// modelsByKey indexes the report's models by key, as the comparisons pair
// them.
func (rep *Report) modelsByKey() map[string]*ModelReport {
	out := map[string]*ModelReport{}
	for i := range rep.Models {
		m := &rep.Models[i]
		out[m.key()] = m
	}
	return out
}

// key is a model's in a comparison: model|kv.
func (m *ModelReport) key() string { return m.Model + "|" + m.KV }

// comparePrime pairs the models of old and cur by (model, kv), in cur's
// order, for their priming and load times.
func comparePrime(old, cur *Report) []primeRatio {
	oldModels := old.modelsByKey()
	var out []primeRatio
	for i := range cur.Models {
		m := &cur.Models[i]
		o, ok := oldModels[m.key()]
		if !ok {
			continue
		}
		p := primeRatio{Model: m.Model, KV: m.KV, OldLoadS: o.LoadS, NewLoadS: m.LoadS, Speedup: math.NaN()}
		if o.Prime != nil {
			p.OldTokens, p.OldChunk, p.OldMs = o.Prime.Tokens, o.Prime.Chunk, o.Prime.Ms.Median
		}
		if m.Prime != nil {
			p.NewTokens, p.NewChunk, p.NewMs = m.Prime.Tokens, m.Prime.Chunk, m.Prime.Ms.Median
		}
		if q := p.OldMs / p.NewMs; p.OldTokens > 0 && p.OldTokens == p.NewTokens && p.OldMs > 0 && p.NewMs > 0 && !math.IsInf(q, 0) {
			p.Speedup = q
		}
		out = append(out, p)
	}
	return out
}

// primeGeomean is the geomean of the priming speedups that have one.
func (c comparison) primeGeomean() (float64, int) {
	xs := make([]float64, len(c.Prime))
	for i, p := range c.Prime {
		xs[i] = p.Speedup
	}
	return geomeanOf(xs)
}

// otherWork says how two rows of one key differ in the bytes a token
// moves, "" when they agree. Both runs compute them the same way from the
// model and the settings, so any difference beyond float rounding (1e-9
// relative) is another model or another mean attention length (-tokens).
func otherWork(o, r *Row) string {
	var d []string
	for _, x := range []struct {
		name     string
		old, new float64
	}{{"weights", o.WeightBytes, r.WeightBytes}, {"KV", o.KVBytes, r.KVBytes}, {"state", o.StateBytes, r.StateBytes}} {
		if math.Abs(x.new-x.old) > 1e-9*max(math.Abs(x.old), math.Abs(x.new)) {
			d = append(d, fmt.Sprintf("%s %s → %s MB", x.name, mb(x.old), mb(x.new)))
		}
	}
	return strings.Join(d, ", ")
}

// geomean of the ratios of rows whose path is path ("" for all), leaving
// out rows of other work per token.
func (c comparison) geomean(path string) (float64, int) {
	var xs []float64
	for _, r := range c.Rows {
		if (path == "" || r.Path == path) && r.OtherWork == "" {
			xs = append(xs, r.Ratio)
		}
	}
	return geomeanOf(xs)
}

// geomeanOf is the geometric mean of the finite positive values of xs
// (NaN: a ratio not measured) and how many there were; NaN, 0 for none.
func geomeanOf(xs []float64) (float64, int) {
	s, n := 0.0, 0
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			s += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return math.Exp(s / float64(n)), n
}

// comparisonJSON is bench -compare's output with -json (files only).
type comparisonJSON struct {
	Old     string             `json:"old"`
	New     string             `json:"new"`
	Rows    []ratioJSON        `json:"rows"`
	Geomean map[string]float64 `json:"geomean"` // by path, and "all"
	OnlyOld []string           `json:"only_old"`
	OnlyNew []string           `json:"only_new"`
	OmitOld []string           `json:"omit_old,omitempty"`
	OmitNew []string           `json:"omit_new,omitempty"`
	// FatbinOld, FatbinNew: a report's -fatbin ("PATH (sha256 HEX)"); absent
	// when its kernels were the binary's own.
	FatbinOld string `json:"fatbin_old,omitempty"`
	FatbinNew string `json:"fatbin_new,omitempty"`
	// SharedLimitOld, SharedLimitNew: a report's MEMRA_SHARED_LIMIT in
	// bytes; absent when it ran with the device's own.
	SharedLimitOld int `json:"shared_limit_old,omitempty"`
	SharedLimitNew int `json:"shared_limit_new,omitempty"`
	// PrimingOld, PrimingNew: a report's Settings.Priming; absent for
	// chunks replayed as graphs.
	PrimingOld string `json:"priming_old,omitempty"`
	PrimingNew string `json:"priming_new,omitempty"`
	// DeviceOld, DeviceNew: the GPUs the reports ran on; OtherDevice: their
	// names differ, so the ratios are of two machines.
	DeviceOld   string `json:"device_old"`
	DeviceNew   string `json:"device_new"`
	OtherDevice bool   `json:"other_device"`
	// Prime: each model and cache in both reports, its priming and load;
	// Geomean["prime"] is the priming speedups' geomean.
	Prime []primeJSON `json:"prime,omitempty"`
	// Kernels: the kernels of the -profile tables both reports took.
	Kernels []kernelJSON `json:"kernels,omitempty"`
	// StepsUnpaired: step profiles of one context left unpaired, each of
	// another step ("m f16 @ctx 1k (old eager, new graph)").
	StepsUnpaired []string `json:"steps_unpaired,omitempty"`
}

type kernelJSON struct {
	Model  string  `json:"model"`
	KV     string  `json:"kv"`
	Of     string  `json:"of"` // "graph step @ctx 1k", "eager step @ctx 1k", "prefill chunk of 8"
	Kernel string  `json:"kernel"`
	Shape  string  `json:"shape,omitempty"`
	OldUs  float64 `json:"old_us"` // per step (chunk); 0: not in the old profile
	NewUs  float64 `json:"new_us"` // 0: not in the new profile
}

type primeJSON struct {
	Model     string   `json:"model"`
	KV        string   `json:"kv"`
	OldTokens int      `json:"old_prompt_tokens,omitempty"`
	NewTokens int      `json:"new_prompt_tokens,omitempty"`
	OldChunk  int      `json:"old_chunk_tokens,omitempty"`
	NewChunk  int      `json:"new_chunk_tokens,omitempty"`
	OldMs     float64  `json:"old_prime_ms,omitempty"`
	NewMs     float64  `json:"new_prime_ms,omitempty"`
	Speedup   *float64 `json:"prime_speedup"` // old/new ms; null unless both primed the same prompt length
	OldLoadS  float64  `json:"old_load_s"`
	NewLoadS  float64  `json:"new_load_s"`
}

type ratioJSON struct {
	Model      string   `json:"model"`
	KV         string   `json:"kv"`
	Context    int      `json:"context"`
	Path       string   `json:"path"`
	OldTokS    float64  `json:"old_tok_s"`
	NewTokS    float64  `json:"new_tok_s"`
	Ratio      *float64 `json:"ratio"` // null where either row has no speed (0: a failed measurement)
	OldRoofPct float64  `json:"old_roofline_pct"`
	NewRoofPct float64  `json:"new_roofline_pct"`
	// OtherWork: how the two rows' bytes per token differ (not in the
	// geomeans); absent when they agree.
	OtherWork string `json:"other_work,omitempty"`
}

// json is the comparison as comparisonJSON, indented.
func (c comparison) json(oldName, newName string) ([]byte, error) {
	out := comparisonJSON{Old: oldName, New: newName, Rows: []ratioJSON{}, Geomean: map[string]float64{},
		OnlyOld: append([]string{}, c.OnlyOld...), OnlyNew: append([]string{}, c.OnlyNew...), OmitOld: c.OmitOld, OmitNew: c.OmitNew,
		FatbinOld: c.FatbinOld, FatbinNew: c.FatbinNew, SharedLimitOld: c.SharedOld, SharedLimitNew: c.SharedNew,
		PrimingOld: c.PrimingOld, PrimingNew: c.PrimingNew,
		DeviceOld: c.DeviceOld, DeviceNew: c.DeviceNew, OtherDevice: c.OtherDevice}
	for _, r := range c.Rows {
		x := ratioJSON{Model: r.Model, KV: r.KV, Context: r.Context, Path: r.Path, OldTokS: r.Old, NewTokS: r.New, OldRoofPct: r.OldPct, NewRoofPct: r.NewP, OtherWork: r.OtherWork}
		if !math.IsNaN(r.Ratio) && !math.IsInf(r.Ratio, 0) {
			x.Ratio = &r.Ratio
		}
		out.Rows = append(out.Rows, x)
	}
	for _, path := range []string{"graph", "sampled", "eager", ""} {
		if g, n := c.geomean(path); n > 0 {
			name := path
			if name == "" {
				name = "all"
			}
			out.Geomean[name] = g
		}
	}
	for _, p := range c.Prime {
		x := primeJSON{Model: p.Model, KV: p.KV, OldTokens: p.OldTokens, NewTokens: p.NewTokens, OldChunk: p.OldChunk, NewChunk: p.NewChunk,
			OldMs: p.OldMs, NewMs: p.NewMs, OldLoadS: p.OldLoadS, NewLoadS: p.NewLoadS}
		if !math.IsNaN(p.Speedup) {
			x.Speedup = &p.Speedup
		}
		out.Prime = append(out.Prime, x)
	}
	if g, n := c.primeGeomean(); n > 0 {
		out.Geomean["prime"] = g
	}
	out.StepsUnpaired = c.StepsUnpaired
	for _, k := range c.Kernels {
		out.Kernels = append(out.Kernels, kernelJSON(k))
	}
	js, err := json.MarshalIndent(out, "", "  ")
	return append(js, '\n'), err
}

func (c comparison) print(w io.Writer, oldName, newName string) {
	fmt.Fprintf(w, "## Compare: new %s / old %s (tok/s; > 1 is faster)\n\n", newName, oldName)
	fmt.Fprintf(w, "Devices: old %s, new %s.\n\n", c.DeviceOld, c.DeviceNew)
	if c.OtherDevice {
		fmt.Fprintln(w, "Note: the reports ran on different GPUs: each ratio is of two machines as much as of two builds; compare builds on one device.")
		fmt.Fprintln(w)
	}
	for _, o := range []struct {
		name  string
		parts []string
	}{{"old", c.OmitOld}, {"new", c.OmitNew}} {
		if len(o.parts) > 0 {
			fmt.Fprintf(w, "Note: %s omitted %s from every step (-omit): its steps are partial.\n\n", o.name, strings.Join(o.parts, ", "))
		}
	}
	for _, f := range []struct{ name, fatbin string }{{"old", c.FatbinOld}, {"new", c.FatbinNew}} {
		if f.fatbin != "" {
			fmt.Fprintf(w, "Note: %s ran the kernels of %s (-fatbin), not its binary's own.\n\n", f.name, f.fatbin)
		}
	}
	for _, l := range []struct {
		name  string
		bytes int
	}{{"old", c.SharedOld}, {"new", c.SharedNew}} {
		if l.bytes > 0 {
			fmt.Fprintf(w, "Note: %s held its kernels to %d bytes of shared memory a block (MEMRA_SHARED_LIMIT): some ran forms with fewer ring slots.\n\n", l.name, l.bytes)
		}
	}
	for _, p := range []struct{ name, priming string }{{"old", c.PrimingOld}, {"new", c.PrimingNew}} {
		if p.priming != "" {
			fmt.Fprintf(w, "Note: %s primed its prompts with -%s, not in chunks replayed as graphs: its prime ms are that path's.\n\n", p.name, p.priming)
		}
	}
	fmt.Fprintln(w, "| model | kv | ctx | path | old tok/s | new tok/s | new/old | roofline % old → new |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---:|")
	var other []string
	for _, r := range c.Rows {
		q := "—"
		if !math.IsNaN(r.Ratio) {
			q = fmt.Sprintf("**%.3f**", r.Ratio)
		}
		if r.OtherWork != "" {
			q += " ≠"
			other = append(other, fmt.Sprintf("%s|%s|%d|%s (%s)", r.Model, r.KV, r.Context, r.Path, r.OtherWork))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %.1f | %.1f | %s | %.1f → %.1f |\n", r.Model, r.KV, r.Context, r.Path, r.Old, r.New, q, r.OldPct, r.NewP)
	}
	fmt.Fprintln(w)
	for _, path := range []string{"graph", "sampled", "eager", ""} {
		if g, n := c.geomean(path); n > 0 {
			name := path
			if name == "" {
				name = "all"
			}
			fmt.Fprintf(w, "geomean new/old (%s, %d rows): %.3f\n", name, n, g)
		}
	}
	if len(other) > 0 {
		fmt.Fprintf(w, "≠ not the same bytes per token, so not the same work (another model under the label, or another -tokens), and not in the geomeans: %s\n", strings.Join(other, ", "))
	}
	c.printPrime(w)
	c.printKernels(w)
	if len(c.StepsUnpaired) > 0 {
		fmt.Fprintf(w, "step profiles not compared, each of another step (an eager step reads a 16-bit logits matrix whole, a graph step screens it): %s\n",
			strings.Join(c.StepsUnpaired, ", "))
	}
	if len(c.OnlyOld) > 0 {
		fmt.Fprintf(w, "only in old %s\n", groupKeys(c.OnlyOld))
	}
	if len(c.OnlyNew) > 0 {
		fmt.Fprintf(w, "only in new %s\n", groupKeys(c.OnlyNew))
	}
}

// printKernels writes the kernels of the -profile tables both reports
// took, each profile's largest change in time first.
func (c comparison) printKernels(w io.Writer) {
	if len(c.Kernels) == 0 {
		return
	}
	fmt.Fprintln(w, "\nKernel time (-profile: each kernel alone, µs per step or chunk; new/old < 1 is faster):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| model | kv | of | kernel | shape | old µs | new µs | new − old | new/old |")
	fmt.Fprintln(w, "|---|---|---|---|---|---:|---:|---:|---:|")
	us := func(v float64) string {
		if v == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, k := range c.Kernels {
		q := "—"
		if k.OldUs > 0 && k.NewUs > 0 {
			q = fmt.Sprintf("%.3f", k.NewUs/k.OldUs)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %+.1f | %s |\n", k.Model, k.KV, k.Of, k.Kernel, k.Shape, us(k.OldUs), us(k.NewUs),
			k.NewUs-k.OldUs, q)
	}
}

// printPrime writes the priming and load table of the models in both
// reports: the old/new speedup where both primed the same prompt length.
func (c comparison) printPrime(w io.Writer) {
	if len(c.Prime) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPriming (prompt of P tokens, median ms; speedup old/new, > 1 is faster) and load:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| model | kv | P old → new | chunk old → new | prime ms old → new | speedup | load s old → new |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	dash := func(v int) string {
		if v == 0 {
			return "–"
		}
		return fmt.Sprint(v)
	}
	ms := func(tokens int, v float64) string {
		if tokens == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, p := range c.Prime {
		q := "—"
		if !math.IsNaN(p.Speedup) {
			q = fmt.Sprintf("**%.3f**", p.Speedup)
		}
		fmt.Fprintf(w, "| %s | %s | %s → %s | %s → %s | %s → %s | %s | %.2f → %.2f |\n", p.Model, p.KV, dash(p.OldTokens), dash(p.NewTokens),
			dash(p.OldChunk), dash(p.NewChunk), ms(p.OldTokens, p.OldMs), ms(p.NewTokens, p.NewMs), q, p.OldLoadS, p.NewLoadS)
	}
	if g, n := c.primeGeomean(); n > 0 {
		fmt.Fprintf(w, "\ngeomean priming speedup (%d models): %.3f\n", n, g)
	}
}

// groupKeys writes row keys (model|kv|ctx|path) a model and cache at a
// time, "(N rows): m|f16: ctx 64, 4096 × eager, graph; …", so that a
// comparison against a subset of the old rows (a run of two models against
// the full table) gives a line, not a list of every row. A group whose
// contexts and paths do not make a full grid lists its rows as ctx/path.
func groupKeys(keys []string) string {
	type group struct {
		name  string
		ctxs  []int
		paths []string
		rows  []string
	}
	var order []*group
	byName := map[string]*group{}
	for _, k := range keys {
		f := strings.Split(k, "|")
		if len(f) != 4 {
			order = append(order, &group{name: k})
			continue
		}
		name := f[0] + "|" + f[1]
		g := byName[name]
		if g == nil {
			g = &group{name: name}
			byName[name] = g
			order = append(order, g)
		}
		if ctx, err := strconv.Atoi(f[2]); err == nil && !slices.Contains(g.ctxs, ctx) {
			g.ctxs = append(g.ctxs, ctx)
		}
		if !slices.Contains(g.paths, f[3]) {
			g.paths = append(g.paths, f[3])
		}
		g.rows = append(g.rows, f[2]+"/"+f[3])
	}
	parts := make([]string, len(order))
	for i, g := range order {
		switch {
		case len(g.rows) == 0:
			parts[i] = g.name
		case len(g.rows) == len(g.ctxs)*len(g.paths):
			slices.Sort(g.ctxs)
			slices.Sort(g.paths)
			parts[i] = fmt.Sprintf("%s: ctx %s × %s", g.name, joinInts(g.ctxs), strings.Join(g.paths, ", "))
		default:
			parts[i] = g.name + ": " + strings.Join(g.rows, ", ")
		}
	}
	rows := "rows"
	if len(keys) == 1 {
		rows = "row"
	}
	return fmt.Sprintf("(%d %s): %s", len(keys), rows, strings.Join(parts, "; "))
}

// joinInts writes xs as "1, 2, 3".
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
