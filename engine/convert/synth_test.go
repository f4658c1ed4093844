package convert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memra-ai/memra/gguf"
)

// TestSynthMatchesConvert: synth's tiny preset must lay out tensors and
// architecture metadata exactly as converting a checkpoint of the same dims.
func TestSynthMatchesConvert(t *testing.T) {
	d := tinyDims{arch: ArchQwen35, embd: 64, ff: 128, vocab: 512, layers: 4, heads: 2, kvHeads: 1, headDim: 256,
		hk: 2, hv: 4, dk: 128, dv: 128, conv: 4, interval: 2}
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 9, DTypeBF16))
	conv, _ := convertDir(t, dir, Options{Type: FileQ8_0})
	out := filepath.Join(t.TempDir(), "synth.gguf")
	if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: FileQ8_0, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	syn, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer syn.Close()
	var ws []want
	for _, ti := range conv.Tensors {
		ws = append(ws, want{ti.Name, ti.Type, ti.Shape})
	}
	checkTable(t, syn, ws)
	arch := func(f *gguf.File) string {
		var b strings.Builder
		for _, kv := range f.KVs {
			if strings.HasPrefix(kv.Key, "qwen35.") || kv.Key == "general.file_type" || kv.Key == "general.architecture" {
				fmt.Fprintf(&b, "%s=%v\n", kv.Key, kv.Value.Any())
			}
		}
		return b.String()
	}
	if a, b := arch(conv), arch(syn); a != b {
		t.Errorf("metadata differs:\nconvert:\n%s\nsynth:\n%s", a, b)
	}
	// Value sanity: ssm_a negative, norms near 1.
	for _, ti := range syn.Tensors {
		if ti.Type != gguf.TypeF32 {
			continue
		}
		x := readF32Tensor(t, syn, ti.Name)
		for i, v := range x {
			bad := v != v
			switch {
			case strings.HasSuffix(ti.Name, ".ssm_a"):
				bad = bad || v >= 0
			case strings.HasSuffix(ti.Name, "norm.weight"):
				bad = bad || v < 0.9 || v > 1.1
			}
			if bad {
				t.Fatalf("%s[%d] = %g out of its range", ti.Name, i, v)
			}
		}
	}
}

func TestSynthDeterministic(t *testing.T) {
	var a, b, c bytes.Buffer
	if err := Synth(&a, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 7, Workers: 3}); err != nil {
		t.Fatal(err)
	}
	if err := Synth(&b, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 7, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if err := Synth(&c, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 8}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("same seed, different worker counts: outputs differ")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("different seeds gave identical outputs")
	}
}

func TestSynthPresetsPlan(t *testing.T) {
	// Parameter counts of the text models (no vision tower, no MTP), a
	// plausibility check of the preset shapes against the model names.
	for name, lo := range map[string]float64{"0.8b": 0.7e9, "2b": 1.8e9, "9b": 8.5e9, "27b": 25e9} {
		s, err := PresetSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		var n float64
		for _, e := range p {
			m := 1.0
			for _, d := range e.Shape {
				m *= float64(d)
			}
			n += m
		}
		if n < lo || n > lo*1.25 {
			t.Errorf("%s: %.3g parameters, want about %.3g", name, n, lo)
		}
	}
	if _, err := PresetSpec("7b"); err == nil {
		t.Error("unknown preset accepted")
	}
}

func TestSynthVocabFromGGUF(t *testing.T) {
	d := qwen3Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 10, DTypeF32))
	vocabPath := filepath.Join(t.TempDir(), "vocab.gguf")
	if err := ConvertFile(t.Context(), dir, vocabPath, Options{Type: FileF32}); err != nil {
		t.Fatal(err)
	}
	kvs, desc, err := synthVocab(vocabPath, 512)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(desc, vocabPath) {
		t.Errorf("description %q", desc)
	}
	for _, kv := range kvs {
		if kv.Key == "tokenizer.ggml.tokens" {
			if kv.Value.Len() != 512 || kv.Value.Index(511).Any() != "[PAD511]" || kv.Value.Index(0).Any() != "t0" {
				t.Errorf("tokens not padded from the source: len %d", kv.Value.Len())
			}
		}
	}
	os.Remove(vocabPath)
	if _, _, err := synthVocab(vocabPath, 512); err == nil {
		t.Error("missing vocab file accepted")
	}
}

// TestSynthWarnsOfVocab: a --vocab whose tokenizer would not load from the
// written file is warned of, naming the file and why (the file is written
// anyway: it runs from token ids); one that loads is not.
func TestSynthWarnsOfVocab(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gguf")
	f, err := os.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter(f, 3)
	for _, kv := range byteVocab(512).KVs("qwen35") {
		w.SetKV(kv.Key, kv.Value)
	}
	if err := errors.Join(w.Write(), f.Close()); err != nil {
		t.Fatal(err)
	}
	d := qwen3Dims()
	ck := t.TempDir()
	writeCheckpoint(t, ck, d, hfTensors(d, 10, DTypeF32))
	bad := filepath.Join(dir, "bad.gguf") // tokens t0, t1, ...: no token for byte 0x00
	if err := ConvertFile(t.Context(), ck, bad, Options{Type: FileF32}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vocab, want string
	}{{good, ""}, {bad, bad + ": its tokenizer does not load (gguf: the vocabulary has no token for byte 0x00"}} {
		var warned []string
		err := Synth(io.Discard, SynthOptions{Preset: "tiny", VocabGGUF: c.vocab, Warn: func(m string) { warned = append(warned, m) }})
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.vocab, err)
		case c.want == "" && len(warned) != 0:
			t.Errorf("%s: warned %q", c.vocab, warned)
		case c.want != "" && (len(warned) != 1 || !strings.HasPrefix(warned[0], c.want)):
			t.Errorf("%s: warned %q, want one starting %q", c.vocab, warned, c.want)
		}
	}
}

// BenchmarkSynthTensor measures generation + bf16 encoding of one
// 4096×12288 matrix (a 9B ffn_up), the bulk of synth's work.
func BenchmarkSynthTensor(b *testing.B) {
	e := &Entry{Name: "blk.0.ffn_up.weight", Shape: []uint64{4096, 12288}, Role: "matrix"}
	b.SetBytes(4096 * 12288 * 2)
	for i := 0; i < b.N; i++ {
		if err := synthTensor(io.Discard, e, gguf.TypeBF16, 1, 0, func(int64) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSynthFileChecksOutput: an output path that the final rename would
// fail on or replace (a directory, a missing directory, a link, a device)
// is refused before any work.
func TestSynthFileChecksOutput(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.gguf")
	if err := os.Symlink(filepath.Join(dir, "target.gguf"), link); err != nil {
		if runtime.GOOS != "windows" { // where links need a privilege or developer mode
			t.Fatal(err)
		}
		t.Log(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		link = "" // no link made (wine 8.0's CreateSymbolicLinkW reports one all the same)
	}
	file := filepath.Join(dir, "file.gguf")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "x.gguf"), "does not exist"},
		{filepath.Join(file, "x.gguf"), "file.gguf is a file, not a directory"},
		{link, "is a symbolic link"},
		{"/dev/null", "is a device"},
	} {
		if c.path == "/dev/null" && os.Geteuid() == 0 {
			// As root a regression would replace /dev/null with the
			// file; TestCheckOutputDevice makes its own device instead.
			t.Log("root: /dev/null is not tried")
			continue
		}
		if c.path == "" {
			t.Log("no symbolic link here: that case is not tried")
			continue
		}
		err := SynthFile(t.Context(), c.path, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying it %s", c.path, err, c.want)
		}
	}
}

// tempsOf lists WriteFileAtomic's temporary files for path.
func tempsOf(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWriteFileAtomicNoTemp: when no temporary file can be made beside the
// output (here every name a write of this process would try is taken; an
// unwritable directory does the same where permissions apply, not as root),
// the error names the output and its directory before any work.
func TestWriteFileAtomicNoTemp(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.gguf")
	for n := 0; n <= 1000; n++ {
		if err := os.WriteFile(fmt.Sprintf("%s.%d-%d.tmp", out, os.Getpid(), n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	called := false
	err := WriteFileAtomic(t.Context(), out, func(io.Writer) error { called = true; return nil })
	if err == nil || called || !strings.Contains(err.Error(), "output "+out+": cannot create its temporary file in "+dir) {
		t.Errorf("error %v (write called: %v)", err, called)
	}
}

// TestSynthFileCancelled: cancelling the context mid-write stops the write
// and removes the temporary file, and the error says why.
func TestSynthFileCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.gguf")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var sawTmp bool
	err := SynthFile(ctx, path, SynthOptions{Preset: "0.8b", Type: FileBF16, Seed: 1, Workers: 1,
		Progress: func(done, total int64) {
			if len(tempsOf(t, path)) == 1 {
				sawTmp = true
			}
			cancel() // after the first chunk
		}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) {
		t.Fatalf("cancelled synth: %v; want context.Canceled naming %s", err, path)
	}
	if !sawTmp {
		t.Error("the temporary file never existed: the test did not cancel a write in progress")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind (stat: %v)", path, err)
	}
	if tmps := tempsOf(t, path); len(tmps) > 0 {
		t.Errorf("%v left behind", tmps)
	}
}

// TestWriteFileAtomicConcurrent: writers racing on one path each write
// their own temporary file, so every rename is of a whole file and the path
// ends up holding exactly one writer's bytes. With one fixed temporary name
// (before), one writer truncated another's file under it and the renames
// failed or published a partial file.
func TestWriteFileAtomicConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.bin")
	const writers, size = 8, 3 << 20
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = WriteFileAtomic(t.Context(), path, func(w io.Writer) error {
				chunk := bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
				for range size / len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return err
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != size || !bytes.Equal(b, bytes.Repeat(b[:1], size)) {
		t.Errorf("%s holds %d bytes not all one writer's (want %d of one byte)", path, len(b), size)
	}
	if tmps := tempsOf(t, path); len(tmps) > 0 {
		t.Errorf("%v left behind", tmps)
	}
	// The mode is os.Create's (os.CreateTemp's would be 0600).
	ref, err := os.Create(filepath.Join(filepath.Dir(path), "ref"))
	if err != nil {
		t.Fatal(err)
	}
	ref.Close()
	st, err1 := os.Stat(path)
	rst, err2 := os.Stat(ref.Name())
	if err1 != nil || err2 != nil || st.Mode() != rst.Mode() {
		t.Errorf("mode %v, os.Create's %v (%v, %v)", st.Mode(), rst.Mode(), err1, err2)
	}
}

// TestStickyRefuses: rename(2)'s rule for a sticky directory, case by case
// (a file of another user cannot be made here: the tests may run as root,
// whom the rule lets through).
func TestStickyRefuses(t *testing.T) {
	const sticky = fs.ModeDir | fs.ModeSticky | 0o777
	for _, c := range []struct {
		mode            fs.FileMode
		dirUID, fileUID uint32
		euid            int
		want            bool
	}{
		{sticky, 0, 1001, 1000, true},              // /tmp, another user's file
		{sticky, 0, 1000, 1000, false},             // our own file
		{sticky, 1000, 1001, 1000, false},          // our directory
		{sticky, 0, 1001, 0, false},                // root
		{sticky, 1000, 1001, 0, false},             // root, another user's directory
		{fs.ModeDir | 0o777, 0, 1001, 1000, false}, // no sticky bit
	} {
		if got := stickyRefuses(c.mode, c.dirUID, c.fileUID, c.euid); got != c.want {
			t.Errorf("stickyRefuses(%v, dir %d, file %d, euid %d) = %v, want %v", c.mode, c.dirUID, c.fileUID, c.euid, got, c.want)
		}
	}
}

// TestSynthTensorChunks pins the bytes of a tensor of several chunks (the
// last one short) at any worker count; the tiny preset's tensors are one
// chunk each, so TestSynthDeterministic does not see chunks' order. The
// sums are those of the batch-at-a-time synthTensor before the pipeline.
func TestSynthTensorChunks(t *testing.T) {
	e := &Entry{Name: "blk.0.ffn_up.weight", Shape: []uint64{1024, 4999}, Role: "matrix"}
	for typ, want := range map[gguf.Type]string{
		gguf.TypeF32:  "97b8e84a953df40160d18303b711a1e230b2984d6e76449024ac66b5e53d5fd6",
		gguf.TypeBF16: "5c1f0616cb2b52f84f6ce3231bce8f7f7b19272333415adb4dded60b5602924a",
		gguf.TypeQ4_K: "88a759c7946abe2e6a8819de81351f11f526df7eb2cef9023ce7ce89d4326a26",
	} {
		for _, workers := range []int{1, 2, 3, 8} {
			h := sha256.New()
			var progressed int64
			if err := synthTensor(h, e, typ, 5, workers, func(n int64) { progressed += n }); err != nil {
				t.Fatal(err)
			}
			nb, _ := gguf.RowBytes(typ, 1024*4999)
			if got := hex.EncodeToString(h.Sum(nil)); got != want || progressed != nb {
				t.Errorf("%v, %d workers: sha256 %s, progress %d; want %s, %d", typ, workers, got, progressed, want, nb)
			}
		}
	}
}

// failAfter is a writer that fails once more than n bytes were written to
// it, and counts the writes after that.
type failAfter struct {
	n, written int64
	err        error
	late       int
}

func (w *failAfter) Write(p []byte) (int, error) {
	if w.written >= w.n {
		w.late++
		return 0, w.err
	}
	w.written += int64(len(p))
	return len(p), nil
}

// waitGoroutines fails the test unless the goroutine count falls back to
// want within a second (a goroutine that has called wg.Done may still be on
// its way out).
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > want; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left running, %d before:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSynthWriteErrorStops: a write that fails mid-tensor (a full disk, or
// the cancelled context of SynthFile's writer) ends Synth with that error,
// no write is tried after it, and no goroutine generating chunks is left
// running.
func TestSynthWriteErrorStops(t *testing.T) {
	before := runtime.NumGoroutine()
	errFull := errors.New("disk full")
	// 8 MiB is within token_embd, 243 chunks of 0.8b's first tensor.
	w := &failAfter{n: 8 << 20, err: errFull}
	err := Synth(w, SynthOptions{Preset: "0.8b", Type: FileBF16, Seed: 1, Workers: 4})
	if !errors.Is(err, errFull) || w.late != 1 {
		t.Fatalf("Synth onto a failing writer: %v after %d failed writes; want %v after one", err, w.late, errFull)
	}
	waitGoroutines(t, before)

	path := filepath.Join(t.TempDir(), "x.gguf")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err = SynthFile(ctx, path, SynthOptions{Preset: "0.8b", Type: FileBF16, Seed: 1, Workers: 4,
		Progress: func(done, total int64) {
			if done >= 8<<20 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled SynthFile: %v; want context.Canceled", err)
	}
	waitGoroutines(t, before)
}

// TestPresetsSmallestFirst: the presets are listed as people name them,
// smallest first, in usage lines and errors.
func TestPresetsSmallestFirst(t *testing.T) {
	if got, want := strings.Join(Presets(), " "), "tiny 0.8b 2b 9b 27b"; got != want {
		t.Errorf("Presets() = %s, want %s", got, want)
	}
}
