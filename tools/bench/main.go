// Command bench measures memra's decode speed on the GPU against the
// bandwidth roofline: per model, load time; eager (DecodeStep) and graph
// (captured CUDA graph replay) tokens/s at several contexts; prompt
// priming; device memory; graph captures. A device-to-device copy measured
// in the same run gives the bandwidth, and roofline % compares the measured
// time per token with the bytes a token must move at that bandwidth.
//
// Contexts are filled synthetically (Cache.FillSynthetic): decode speed
// depends on the bytes moved, not on their values, so there is no need to
// prime 32k tokens one by one.
//
// Results (JSON, Markdown, SVG chart) are rewritten after every measured
// context, so a killed run keeps what it measured. -compare OLD.json prints
// new/old ratios.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/gpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/tools/internal/sigctx"
	"github.com/memra-ai/memra/tools/internal/sticky"
)

func main() {
	out := &sticky.Writer{W: os.Stdout}
	code, err := run(os.Args[1:], out, os.Stderr)
	code, err = exitStatus(out, code, err)
	var ng noGPUError
	switch {
	case errors.As(err, &ng):
		fmt.Fprintln(os.Stderr, err) // already says "bench needs ..."
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.Exit(code)
}

// exitStatus folds a failed write to stdout (a full disk, /dev/full) into
// run's status (sticky.Writer.Status): a table, comparison or help text
// lost is results not written, status 1; an earlier error stands.
func exitStatus(out *sticky.Writer, code int, err error) (int, error) {
	return out.Status(code, err, 1, "write the output")
}

// run returns the exit status (usageHead's): 0 success, 1 some model or
// the copy failed, the results could not be written or -compare OLD.json
// or -peer LLAMA.json shares no row with the run, 2 usage, setup error (an
// -out that cannot be written), no GPU or report files that share no row;
// ^C during a synth write, 128 + the signal's number.
func run(av []string, stdout, stderr io.Writer) (int, error) {
	c, err := parseArgs(av, stdout) // -h is asked for: on stdout, as memra's and gate's (bench -h | less)
	if errors.Is(err, errHelp) {
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	if c.compareTo != "" { // files only
		code := 0
		if c.compare != "" {
			if code, err = compareFiles(c.compare, c.compareTo, c.jsonOut, stdout); err != nil || len(c.peer) == 0 {
				return code, err
			}
			fmt.Fprintln(stdout)
		}
		pcode, err := peerFiles(c.peer, c.compareTo, c.jsonOut, stdout)
		return max(code, pcode), err
	}
	var old *Report
	if c.compare != "" { // read it before spending minutes on the GPU
		if old, err = readReport(c.compare); err != nil {
			return 2, fmt.Errorf("-compare: %w", err)
		}
	}
	var peer []peerRow
	if len(c.peer) > 0 {
		if peer, err = readPeers(c.peer); err != nil {
			return 2, err
		}
	}
	for _, p := range c.models { // a mistyped path is named before the GPU is looked for
		if st, err := os.Stat(p); err != nil {
			return 2, fmt.Errorf("-model: %w", err)
		} else if !st.Mode().IsRegular() {
			return 2, fmt.Errorf("-model %s: not a regular file", p)
		}
	}
	var image []byte // -fatbin's kernels; nil: the embedded ones
	if c.fatbin != "" {
		if image, err = os.ReadFile(c.fatbin); err != nil {
			return 2, fmt.Errorf("-fatbin: %w", err)
		}
		if len(image) == 0 {
			return 2, fmt.Errorf("-fatbin %s: empty file", c.fatbin)
		}
	}
	if err := checkOut(c.out); err != nil { // else found after the copy, and the run goes on unwritten
		return 2, err
	}
	// The KV type is -kv's: MEMRA_KV_FP8=1, which memra run and the gate
	// read, would otherwise be ignored here, and an f16 run taken for FP8.
	if fp8, err := gpu.KVFP8FromEnv(); err != nil {
		return 2, err
	} else if fp8 && !slices.Contains(c.kv, "fp8") {
		return 2, fmt.Errorf("MEMRA_KV_FP8=1, but bench takes the KV cache type from -kv (now %s): give -kv fp8 (or -kv f16,fp8 for both), or unset it", strings.Join(c.kv, ","))
	}
	if _, err := cuda.PDLFromEnv(); err != nil {
		return 2, err
	}
	if _, err := cuda.L2WindowFromEnv(); err != nil {
		return 2, err
	}
	if err := gpu.CheckEnv(); err != nil { // else every model would fail at its load
		return 2, err
	}
	e, err := cuda.New(0)
	if cuda.NoGPU(err) {
		return 2, noGPUError{err}
	}
	if err != nil {
		return 2, fmt.Errorf("the NVIDIA driver is installed but unusable: %w", err)
	}
	defer e.Close()
	if image != nil { // said once, not once a model
		if err := gpu.CheckFatbin(e, image); err != nil {
			return 2, fmt.Errorf("-fatbin %s: %w", c.fatbin, err)
		}
	}

	t0 := time.Now()
	b := &bencher{c: c, e: e, log: stderr, stamp: t0.Format("20060102-150405"), fatbin: image}
	b.rep = newReport(c, e, image)
	code := b.all()
	b.logf("done in %.0fs", time.Since(t0).Seconds())
	b.rep.Finished = time.Now().Format(time.RFC3339)
	if peer != nil { // into the report, so its files hold the pairing too
		if pc := comparePeer(peer, b.rep); len(pc.Rows) > 0 {
			b.rep.Peer, b.rep.PeerFiles = &pc, c.peer
		} else {
			fmt.Fprintf(stderr, "bench: -peer %s: %v\n", strings.Join(c.peer, ","), errNoPeerRows)
			code = max(code, 1)
		}
	}
	werr := b.flush()
	if werr != nil {
		fmt.Fprintf(stderr, "bench: write results: %v\n", werr)
		code = max(code, 1)
	}
	latest := " (and latest.*)"
	switch why := b.rep.notLatest(); {
	case werr != nil:
		latest = " (some not written: see above)"
	case why != "":
		latest = " (latest.* left as they were: " + why + ")"
	}
	fmt.Fprintf(stderr, "[bench] results in %s/bench-%s.{json,md,svg}%s\n", c.out, b.stamp, latest)

	tableOut := stdout
	if c.jsonOut {
		tableOut = stderr
	}
	b.rep.markdown(tableOut)
	if old != nil {
		fmt.Fprintln(tableOut)
		if !compareRun(old, b.rep, c.compare, tableOut, stderr) {
			code = max(code, 1)
		}
	}

	if c.jsonOut {
		js, err := b.rep.json()
		if err != nil {
			return 2, err
		}
		stdout.Write(js)
	}
	return code, nil
}

// compareRun prints the comparison of a fresh run cur with the report at
// oldPath, or says on stderr that they share no row (the run stands; the
// comparison asked for does not) and returns false.
func compareRun(old, cur *Report, oldPath string, table, stderr io.Writer) bool {
	cmp := compareReports(old, cur)
	if len(cmp.Rows) == 0 {
		fmt.Fprintf(stderr, "bench: -compare %s: no rows in common with this run %s\n", oldPath, rowCounts(old, cur))
		return false
	}
	cmp.print(table, oldPath, "this run")
	return true
}

// rowCounts is the parenthesis of the "no rows in common" errors: what
// rows match on, and how many each report has.
func rowCounts(old, cur *Report) string {
	return fmt.Sprintf("(rows match on model, kv, context and path; %d old, %d new)", len(old.allRows()), len(cur.allRows()))
}

// noGPUError is the error of a machine without an NVIDIA GPU (no driver or
// no device; cuda.NoGPU).
type noGPUError struct{ err error }

func (e noGPUError) Error() string { return "bench needs an NVIDIA GPU: " + e.err.Error() }
func (e noGPUError) Unwrap() error { return e.err }

// compareFiles prints the ratios of newPath's rows to oldPath's, as Markdown
// or, with asJSON, as comparisonJSON.
func compareFiles(oldPath, newPath string, asJSON bool, w io.Writer) (int, error) {
	old, err := readReport(oldPath)
	if err != nil {
		return 2, err
	}
	cur, err := readReport(newPath)
	if err != nil {
		return 2, err
	}
	c := compareReports(old, cur)
	if len(c.Rows) == 0 {
		return 2, fmt.Errorf("-compare: %s and %s have no rows in common %s", oldPath, newPath, rowCounts(old, cur))
	}
	if !asJSON {
		c.print(w, oldPath, newPath)
		return 0, nil
	}
	js, err := c.json(oldPath, newPath)
	if err != nil {
		return 2, err
	}
	if _, err := w.Write(js); err != nil {
		return 1, err
	}
	return 0, nil
}

// newReport starts c's report; image is -fatbin's contents (nil without it).
func newReport(c config, e *cuda.Engine, image []byte) *Report {
	info := e.Info()
	host, _ := os.Hostname()
	rep := &Report{
		Version: reportVersion, Started: time.Now().Format(time.RFC3339), Host: host, Revision: revision(),
		Device: DeviceReport{Name: info.Name, CC: fmt.Sprintf("%d.%d", info.Major, info.Minor), SMs: info.SMs,
			TotalMem: info.TotalMem, MemBusBits: info.MemoryBusWidth, MemClockKHz: info.MemoryClockKHz, DriverVersion: info.DriverVersion, PDL: e.PDL(),
			SharedPerBlock: info.MaxSharedPerBlockOptin},
		Settings: Settings{Contexts: c.contexts, Tokens: c.tokens, Reps: c.reps, Warmup: c.warmup, Prompt: c.prompt, KV: strings.Join(c.kv, ","), Omit: c.omit},
		Notes:    runNotes(c.warmup),
		Models:   []ModelReport{},
	}
	if image != nil {
		rep.Settings.Fatbin = fmt.Sprintf("%s (sha256 %x)", c.fatbin, sha256.Sum256(image))
		rep.Notes = append(rep.Notes, "kernels loaded from "+rep.Settings.Fatbin+" (-fatbin) instead of those built into bench")
	}
	// gpu.CheckEnv took MEMRA_SHARED_LIMIT; at or above the device's it changes nothing.
	if n, err := strconv.Atoi(os.Getenv("MEMRA_SHARED_LIMIT")); err == nil && n < info.MaxSharedPerBlockOptin {
		rep.Settings.SharedLimit = n
		rep.Notes = append(rep.Notes, fmt.Sprintf("MEMRA_SHARED_LIMIT=%d held the matvec and prompt-batch kernels' blocks to %d bytes of shared memory (the device allows %d), so that the load picked the kernels a GPU with that limit would; an SM still held as many blocks as this device allows", n, n, info.MaxSharedPerBlockOptin))
	}
	switch {
	case c.tokenFeed:
		rep.Settings.Priming = "token-feed"
		rep.Notes = append(rep.Notes, "prompts primed one decode step per token (-token-feed)")
	case c.eager:
		rep.Settings.Priming = "eager-chunks"
		rep.Notes = append(rep.Notes, "prompts primed in chunks whose kernels the host launches one by one (-eager-chunks), not replayed as graphs")
	}
	if c.chunk != 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("prompts primed in chunks of %d tokens (-chunk %d) where the model primes in chunks", c.chunk, c.chunk))
	}
	if len(c.omit) > 0 {
		rep.Notes = append(rep.Notes, "omitted from every step (-omit): "+strings.Join(c.omit, ", ")+
			"; the times are those of a step without these parts and its tokens are meaningless, while the roofline "+
			"columns still count the whole step's bytes")
	}
	return rep
}

// checkOut says whether the results folder dir can take the results: it,
// or the nearest folder above it that exists (writeFiles makes the rest),
// must be a folder bench can write a file in. It leaves nothing behind.
func checkOut(dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil && !st.IsDir() {
			return fmt.Errorf("-out %s: %s is a file, not a folder: give a folder for the results", dir, d)
		}
		if err == nil {
			break
		}
		if up := filepath.Dir(d); errors.Is(err, fs.ErrNotExist) && up != d {
			d = up
			continue
		}
		return fmt.Errorf("-out %s: %w: give a folder bench can write", dir, err)
	}
	f, err := os.CreateTemp(d, ".bench-out-check-*")
	if err != nil {
		return fmt.Errorf("-out %s: cannot write in %s (%w): give a folder bench can write", dir, d, err)
	}
	return errors.Join(f.Close(), os.Remove(f.Name()))
}

// revision is the VCS revision the binary was built from, if recorded.
func revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// bencher runs the measurements and keeps the report current on disk.
type bencher struct {
	c      config
	e      *cuda.Engine
	log    io.Writer
	stamp  string
	rep    *Report
	fatbin []byte // gpu.Options.Fatbin (-fatbin); nil: the embedded kernels
}

func (b *bencher) logf(format string, a ...any) {
	fmt.Fprintf(b.log, "[bench] "+format+"\n", a...)
}

func (b *bencher) flush() error { return b.rep.writeFiles(b.c.out, b.stamp) }

// all measures the copy bandwidth, then every model × KV type. A failing
// model is recorded and the run goes on; the result is 1 if any failed.
func (b *bencher) all() int {
	info := b.e.Info()
	b.logf("device %s (sm_%d%d, %d SMs, %.1f GB), programmatic dependent launch %v", info.Name, info.Major, info.Minor, info.SMs, float64(info.TotalMem)/1e9, b.e.PDL())
	cp, err := measureCopy(b.e, uint64(b.c.copyMiB)<<20, 10)
	if err != nil {
		b.logf("copy bandwidth: %v", err)
		b.rep.Error = err.Error()
		return 1
	}
	b.rep.Copy = cp
	b.logf("copy bandwidth %.3f TB/s read+write (%.1f MiB, median %.3f ms of %d, min–max %.3f–%.3f ms)",
		cp.BWRW/1e12, float64(cp.Bytes)/(1<<20), cp.Ms.Median, cp.Reps, cp.Ms.Min, cp.Ms.Max)
	if err := b.flush(); err != nil {
		b.logf("write results: %v", err)
	}
	code := 0
	for _, j := range b.c.jobs() {
		synthS, err := b.ensure(j)
		var ie *sigctx.Interrupted
		if errors.As(err, &ie) { // ^C stops the run, not this model alone
			b.logf("%v; stopping (results so far are in %s)", err, b.c.out)
			b.rep.Interrupted = err.Error()
			return ie.Code
		}
		for _, kv := range b.c.kv {
			b.rep.Models = append(b.rep.Models, ModelReport{Model: j.label, Path: j.path, KV: kv, SynthS: synthS, Rows: []Row{}})
			mr := &b.rep.Models[len(b.rep.Models)-1]
			if err == nil {
				err2 := b.model(j, kv, mr)
				if err2 != nil {
					mr.Error = err2.Error()
				}
			} else {
				mr.Error = err.Error()
			}
			if mr.Error != "" {
				b.logf("%s %s: FAILED: %s", j.label, kv, mr.Error)
				code = 1
			}
			if err := b.flush(); err != nil {
				b.logf("write results: %v", err)
			}
		}
	}
	return code
}

// ensure writes a synth model if it is not there yet, returning the
// seconds it took (0 when reused or for a user file).
func (b *bencher) ensure(j job) (float64, error) {
	if j.preset == "" {
		return 0, nil
	}
	if _, err := os.Stat(j.path); err == nil {
		b.logf("%s: reusing %s", j.label, j.path)
		return 0, nil
	}
	if err := os.MkdirAll(b.c.modelsDir, 0o755); err != nil {
		return 0, fmt.Errorf("models dir: %w", err)
	}
	b.logf("%s: synthesising into %s", j.label, j.path)
	t0 := time.Now()
	next := int64(0)
	// ^C during the write (a 9B preset takes minutes) removes the temporary
	// file and stops the run; the signals are the default again after.
	w := sigctx.New()
	defer w.Stop()
	err := convert.SynthFile(w, j.path, convert.SynthOptions{Preset: j.preset, Type: j.ftype, Seed: 1,
		Progress: func(done, total int64) {
			if total > 0 && done*10 >= next*total { // a line per 10%
				b.logf("%s: synth %3d%% (%.1f / %.1f GB, %.0fs)", j.label, done*100/total, float64(done)/1e9, float64(total)/1e9, time.Since(t0).Seconds())
				next = done*10/total + 1
			}
		}})
	if err != nil {
		if ie := w.Interrupted("synth " + j.label + ": nothing written"); ie != nil {
			return 0, ie
		}
		return 0, fmt.Errorf("synth %s: %w", j.label, err)
	}
	s := time.Since(t0).Seconds()
	b.logf("%s: synth done in %.1fs", j.label, s)
	return s, nil
}

// measureCopy times a device-to-device copy of size bytes of random data
// with CUDA events: 2 warm-up copies, then reps timed ones.
func measureCopy(e *cuda.Engine, size uint64, reps int) (CopyReport, error) {
	src, err := e.Alloc(size)
	if err != nil {
		return CopyReport{}, fmt.Errorf("copy bandwidth: %w", err)
	}
	defer e.Free(src)
	dst, err := e.Alloc(size)
	if err != nil {
		return CopyReport{}, fmt.Errorf("copy bandwidth: %w", err)
	}
	defer e.Free(dst)
	// Random source bytes, 64 MiB of fresh random data at a time.
	rng := rand.New(rand.NewPCG(1, 2))
	chunk := make([]byte, min(size, 64<<20))
	for off := uint64(0); off < size; off += uint64(len(chunk)) {
		n := min(uint64(len(chunk)), size-off)
		for i := uint64(0); i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(chunk[i:], rng.Uint64())
		}
		if err := e.CopyHtoD(src.Add(off), chunk[:n]); err != nil {
			return CopyReport{}, fmt.Errorf("copy bandwidth: fill: %w", err)
		}
	}
	ev0, err := e.NewEvent()
	if err != nil {
		return CopyReport{}, err
	}
	defer e.DestroyEvent(ev0)
	ev1, err := e.NewEvent()
	if err != nil {
		return CopyReport{}, err
	}
	defer e.DestroyEvent(ev1)
	var ms []float64
	for i := range reps + 2 {
		if err := errors.Join(e.Record(ev0), e.CopyDtoDAsync(dst, src, size), e.Record(ev1), e.EventSynchronize(ev1)); err != nil {
			return CopyReport{}, fmt.Errorf("copy bandwidth: %w", err)
		}
		d, err := e.Elapsed(ev0, ev1)
		if err != nil {
			return CopyReport{}, fmt.Errorf("copy bandwidth: %w", err)
		}
		if i >= 2 {
			ms = append(ms, float64(d)/float64(time.Millisecond))
		}
	}
	st := summarize(ms)
	bw := copyBW(size, st.Median)
	if bw == 0 { // no roofline to set: every roofline % would be 0
		return CopyReport{}, fmt.Errorf("copy bandwidth: the copy of %d MiB took no time the events could see (median %g ms): give a larger -copy-mib", size>>20, st.Median)
	}
	return CopyReport{Bytes: size, Reps: reps, Ms: st, BWRW: bw, Samples: ms}, nil
}

// copyBW is the bandwidth of a copy of size bytes that took ms
// milliseconds, counting each byte read and written: 2·size / (ms / 1e3).
// A time of 0 (or less) has no bandwidth: 0, not the +Inf that JSON cannot
// hold (the report could not be written).
func copyBW(size uint64, ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return 2 * float64(size) / (ms / 1e3)
}

// cacheFor is the cache a run at context ctx needs: the context, the tokens
// timed past it (or profiled) and 8 more, or the priming prompt and 8.
func (c *config) cacheFor(ctx int) int { return max(ctx+max(c.tokens, c.profile)+8, c.prompt+8) }

// fitContexts splits the (sorted) contexts into those whose cache the model
// holds and those past its context length; none that fits is an error, and
// so is a priming prompt past it (which no context would fit).
func (c *config) fitContexts(m *model.Config) (fit, skipped []int, err error) {
	if err := m.CheckContext(c.prompt + 8); err != nil {
		return nil, nil, fmt.Errorf("-prompt %d needs a cache of %d positions: %w", c.prompt, c.prompt+8, err)
	}
	fit = c.contexts
	for len(fit) > 0 && m.CheckContext(c.cacheFor(fit[len(fit)-1])) != nil {
		fit = fit[:len(fit)-1]
	}
	if len(fit) == 0 {
		err := m.CheckContext(c.cacheFor(c.contexts[0]))
		return nil, nil, fmt.Errorf("-ctx %d needs a cache of %d positions: %w", c.contexts[0], c.cacheFor(c.contexts[0]), err)
	}
	return fit, c.contexts[len(fit):], nil
}

// model loads one model with one KV type and measures it, filling mr.
func (b *bencher) model(j job, kv string, mr *ModelReport) error {
	c := b.c
	t0 := time.Now()
	f, err := gguf.Open(j.path)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := model.Load(f)
	if err != nil {
		return fmt.Errorf("%s: %w", j.path, err)
	}
	mr.Arch, mr.Layers, mr.Attn, mr.Vocab = m.Arch, m.NLayer, m.NumAttention(), m.NVocab
	// The cache holds the longest context with the tokens timed past it (and
	// 8 more), and the priming prompt. Contexts past the model's context
	// length are skipped, said in the log and the report; none left is an
	// error. Checked here, before the weights go up, as NewCache would only
	// after.
	contexts, skipped, err := c.fitContexts(&m.Config)
	if err != nil {
		return fmt.Errorf("%s: %w", j.path, err)
	}
	if len(skipped) > 0 {
		mr.Skipped = skipped
		b.logf("%s %s: contexts %s skipped: with the timed (or profiled) tokens and 8 more, past the model's context length %d", j.label, kv, joinInts(skipped), m.ContextLength)
	}
	capacity := c.cacheFor(contexts[len(contexts)-1])
	b.logf("%s %s: %s, %d layers (%d attention), vocab %d; loading", j.label, kv, m.Arch, m.NLayer, m.NumAttention(), m.NVocab)
	tu := time.Now()
	g, err := gpu.Load(b.e, m, gpu.Options{KVFP8: kv == "fp8", Omit: c.omit, TokenFeed: c.tokenFeed, EagerChunks: c.eager, FullLogits: c.fullLogits, PrefillChunk: c.chunk, Fatbin: b.fatbin}, nil)
	if err != nil {
		return err
	}
	defer g.Close()
	mr.LoadS, mr.UploadS = time.Since(t0).Seconds(), time.Since(tu).Seconds()
	b.logf("%s %s: loaded %.2f GB in %.2fs (upload %.2fs, %.1f GB/s)", j.label, kv, float64(g.WeightBytes())/1e9,
		mr.LoadS, mr.UploadS, float64(g.WeightBytes())/1e9/mr.UploadS)
	mr.Fallbacks = g.Fallbacks()
	if full, screened := g.ScreenBytes(); full > 0 {
		b.logf("%s %s: greedy and sampled steps screen the logits through an 8-bit copy: %.1f MB a step in place of %.1f MB (the graph and sampled rows' roofline counts it; -full-logits reads the whole matrix)",
			j.label, kv, float64(screened)/1e6, float64(full)/1e6)
	}
	for _, f := range mr.Fallbacks {
		b.logf("%s %s: %s", j.label, kv, f)
	}

	cc, err := g.NewCache(capacity)
	if err != nil {
		return fmt.Errorf("eager cache: %w", err)
	}
	defer cc.Close()
	gs := g.NewGraphDecodeState()
	defer gs.Close()
	if err := gs.Reserve(capacity); err != nil {
		return fmt.Errorf("graph cache: %w", err)
	}
	kvB, stB, scB := cc.Bytes()
	free, total, err := b.e.MemInfo()
	if err != nil {
		return err
	}
	mr.Memory = Memory{WeightsDevice: g.WeightBytes(), WeightsStep: uint64(m.WeightBytes()), Capacity: capacity,
		KV: kvB, State: stB, Scratch: scB, Caches: 2, DeviceUsed: total - free, L2SetAside: b.e.L2SetAside()}
	b.logf("%s: %.1f MiB of L2 set aside for the state and scratch", mr.Model, float64(mr.Memory.L2SetAside)/(1<<20))

	// Prompt priming: GenerateGraph with nothing to generate primes only.
	prompt := primePrompt(c.prompt, m.NVocab)
	var primeMs []float64
	for i := range c.warmup + c.reps {
		t := time.Now()
		if _, err := g.GenerateGraph(gs, prompt, 0); err != nil {
			return fmt.Errorf("prime: %w", err)
		}
		if i >= c.warmup {
			primeMs = append(primeMs, msSince(t))
		}
	}
	mr.Prime = &Prime{Tokens: c.prompt, Chunk: g.PrefillChunk(), Ms: summarize(primeMs), Samps: primeMs}
	b.logf("%s %s: prime %d tokens in chunks of %d: %.2f ms (min–max %.2f–%.2f)", j.label, kv, c.prompt, mr.Prime.Chunk,
		mr.Prime.Ms.Median, mr.Prime.Ms.Min, mr.Prime.Ms.Max)
	if c.profile > 0 && g.PrefillChunk() > 1 {
		if err := b.profilePrefill(g, cc, capacity, mr); err != nil {
			return fmt.Errorf("profile prefill: %w", err)
		}
	}

	tr := trafficOf(&m.Config, kv == "fp8")
	tok := int32(1000 % m.NVocab)
	for _, ctx := range contexts {
		base := newRow(j.label, kv, ctx, c.tokens, float64(m.WeightBytes()), tr, b.rep.Copy.BWRW)

		dev := base
		if full, screened := g.ScreenBytes(); full > 0 {
			// A greedy or sampled step reads the logits' 8-bit copy in their place.
			dev = newRow(j.label, kv, ctx, c.tokens, float64(m.WeightBytes())-float64(full)+float64(screened), tr, b.rep.Copy.BWRW)
		}
		gr := dev
		gr.Path = "graph"
		if err := b.graph(g, gs, ctx, tok, &gr); err != nil {
			return fmt.Errorf("graph decode at context %d: %w", ctx, err)
		}
		mr.Rows = append(mr.Rows, gr)
		if mr.Nodes == 0 { // the first context's graph rows capture greedy graphs before any sampled one
			mr.Nodes = gs.Nodes
		}
		rows := []*Row{&gr}
		sr := dev
		if c.sampled {
			sr.Path = "sampled"
			if err := b.sampled(g, gs, ctx, tok, &sr); err != nil {
				return fmt.Errorf("sampled graph decode at context %d: %w", ctx, err)
			}
			mr.Rows = append(mr.Rows, sr)
			rows = append(rows, &sr)
		}
		mr.Captures = gs.Captures
		er := base
		er.Path = "eager"
		if err := b.eager(g, cc, ctx, tok, &er); err != nil {
			return fmt.Errorf("eager decode at context %d: %w", ctx, err)
		}
		mr.Rows = append(mr.Rows, er)
		for _, r := range append(rows, &er) {
			b.logf("%s %s ctx %6d %s: %7.3f ms/tok (%.3f–%.3f) %8.1f tok/s  %.1f MB/tok  roofline %.3f ms = %5.1f%%%s",
				j.label, kv, ctx, r.Path, r.MsTok.Median, r.MsTok.Min, r.MsTok.Max, r.TokS.Median, r.bytes()/1e6, r.RooflineMs, r.RooflinePct,
				map[bool]string{true: fmt.Sprintf("  (%d captures, warm-up %.1f ms)", r.Captures, r.WarmupMs)}[r.Path != "eager"])
		}
		if c.profile > 0 {
			if err := b.profile(g, cc, ctx, tok, mr); err != nil {
				return fmt.Errorf("profile at context %d: %w", ctx, err)
			}
		}
		if err := b.flush(); err != nil {
			b.logf("write results: %v", err)
		}
	}
	return nil
}

// profile times every kernel of c.profile greedy graph steps from a
// synthetic context (gpu.Model.ProfileGraphStep: the step the graph rows
// replay, not the eager one, whose logits differ from it since the screen,
// docs/perf.md step 132) and adds the per-kernel shares to mr.
func (b *bencher) profile(g *gpu.Model, cc *gpu.Cache, ctx int, tok int32, mr *ModelReport) error {
	if err := cc.FillSynthetic(ctx, tok, 1); err != nil {
		return err
	}
	var all []gpu.Launch
	for range b.c.profile {
		ls, err := g.ProfileGraphStep(cc)
		if err != nil {
			return err
		}
		all = append(all, ls...)
	}
	p := newProfile(ctx, b.c.profile, all, b.rep.Copy.BWRW)
	p.Path = "graph"
	mr.Profile = append(mr.Profile, p)
	b.logf("%s %s ctx %6d profile: %.1f µs of kernels per step, %d (kernel, shape) rows", mr.Model, mr.KV, ctx, p.TotalUs, len(p.Kernels))
	return nil
}

// profilePrefill times every kernel of a prompt's first c.profile prefill
// chunks (as many as the cache holds), from position 0
// (gpu.Model.ProfilePrefill), and sets mr.PrefillProfile.
func (b *bencher) profilePrefill(g *gpu.Model, cc *gpu.Cache, capacity int, mr *ModelReport) error {
	chunk := g.PrefillChunk()
	n := min(b.c.profile, capacity/chunk)
	if n < b.c.profile {
		b.logf("%s %s prefill profile: %d chunks of %d tokens, as many as the cache of %d holds (-profile %d)", mr.Model, mr.KV, n, chunk,
			capacity, b.c.profile)
	}
	if err := cc.Reset(); err != nil { // a prompt's start: empty KV, zero states
		return err
	}
	prompt := primePrompt(n*chunk, g.Config().NVocab) // the priming prompt's first chunks
	var all []gpu.Launch
	for i := range n {
		ls, err := g.ProfilePrefill(cc, prompt[i*chunk:(i+1)*chunk])
		if err != nil {
			return err
		}
		all = append(all, ls...)
	}
	p := newProfile(0, n, all, b.rep.Copy.BWRW)
	p.Tokens = chunk
	mr.PrefillProfile = &p
	b.logf("%s %s prefill profile: %.1f µs of kernels per chunk of %d tokens over %d chunks, %d (kernel, shape) rows", mr.Model, mr.KV,
		p.TotalUs, chunk, n, len(p.Kernels))
	return nil
}

// primePrompt is the n-token prompt bench primes with, spread over the
// vocabulary.
func primePrompt(n, vocab int) []int32 {
	prompt := make([]int32, n)
	for i := range prompt {
		prompt[i] = int32((100 + i*7919) % vocab)
	}
	return prompt
}

func msSince(t time.Time) float64 { return float64(time.Since(t)) / float64(time.Millisecond) }

// finish fills a row's statistics from per-repeat times of r.Tokens tokens.
func (r *Row) finish(totalMs []float64) {
	per := make([]float64, len(totalMs))
	for i, t := range totalMs {
		per[i] = t / float64(r.Tokens)
	}
	r.Samples = per
	r.MsTok = summarize(per)
	r.TokS = perSecond(r.MsTok)
	if r.MsTok.Median > 0 {
		r.RooflinePct = r.RooflineMs / r.MsTok.Median * 100
	}
}

// perSecond is tokens/s of ms/token statistics, each figure the reciprocal
// of its counterpart (the fastest, Max, is 1000 / Min ms): with an even
// number of repeats the median of the rates, a mean of two reciprocals, is
// not 1000 / the median ms that roofline % divides, so the two columns of
// one row would disagree. A time of 0 has no rate: 0.
func perSecond(ms Stat) Stat {
	inv := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return 1000 / x
	}
	return Stat{Median: inv(ms.Median), Min: inv(ms.Max), Max: inv(ms.Min), Q1: inv(ms.Q3), Q3: inv(ms.Q1)}
}

// graph times ContinueGraph from a synthetic context: each repeat refills
// the cache to ctx and generates r.Tokens tokens (r.Tokens graph replays;
// ContinueGraph's first token is the filled-in input, read back without a
// step). Warm-ups capture the graphs of the buckets the window crosses.
func (b *bencher) graph(g *gpu.Model, gs *gpu.GraphDecodeState, ctx int, tok int32, r *Row) error {
	before := gs.Captures
	var ms []float64
	for i := range b.c.warmup + b.c.reps {
		if err := gs.Cache().FillSynthetic(ctx, tok, uint64(1+i)); err != nil {
			return err
		}
		t := time.Now()
		if _, err := g.ContinueGraph(gs, r.Tokens+1); err != nil {
			return err
		}
		d := msSince(t)
		if i == 0 && b.c.warmup > 0 {
			r.WarmupMs = d
		}
		if i >= b.c.warmup {
			ms = append(ms, d)
		}
	}
	r.Captures = gs.Captures - before
	r.finish(ms)
	return nil
}

// benchSampling is the draw the sampled rows time: the CLI's default
// options (memra run), seed 1.
var benchSampling = gpu.Sampling{TopK: sample.DefaultTopK, Temperature: sample.DefaultTemperature, TopP: sample.DefaultTopP, MinP: sample.DefaultMinP, Seed: 1}

// sampled is graph with the token drawn on the device (benchSampling): the
// same replays, each ending with the top-k passes and the draw instead of
// argmax. Its graphs are captured in its own warm-up.
func (b *bencher) sampled(g *gpu.Model, gs *gpu.GraphDecodeState, ctx int, tok int32, r *Row) error {
	if err := gs.SetSampling(&benchSampling); err != nil {
		return err
	}
	err := b.graph(g, gs, ctx, tok, r)
	return errors.Join(err, gs.SetSampling(nil))
}

// eager times r.Tokens DecodeStep calls with host argmax from a synthetic
// context (refilled per repeat).
func (b *bencher) eager(g *gpu.Model, cc *gpu.Cache, ctx int, tok int32, r *Row) error {
	var ms []float64
	for i := range b.c.warmup + b.c.reps {
		if err := cc.FillSynthetic(ctx, tok, uint64(1+i)); err != nil {
			return err
		}
		if err := g.Engine().Synchronize(); err != nil {
			return err
		}
		in := tok
		t := time.Now()
		for range r.Tokens {
			ll, err := g.DecodeStep(cc, in)
			if err != nil {
				return err
			}
			in = int32(sample.Argmax(ll))
		}
		if i >= b.c.warmup {
			ms = append(ms, msSince(t))
		}
	}
	r.finish(ms)
	return nil
}
