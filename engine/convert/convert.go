// Package convert turns Hugging Face checkpoints of Qwen3.5 (text part) and
// Qwen3 into GGUF files laid out exactly as llama.cpp's convert_hf_to_gguf.py
// lays them out (names, shapes, types, metadata, transforms), and writes
// random real-size models of the same layout (Synth) for benchmarks.
//
// Plan is the one place that lists a model's tensors; both paths use it.
package convert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/memra-ai/memra/engine/internal/par"
	"github.com/memra-ai/memra/gguf"
)

// Options controls a conversion.
type Options struct {
	Type FileType
	// Name is general.name; empty means the checkpoint directory's name.
	Name string
	// NoMTP drops the multi-token-prediction layers (llama.cpp --no-mtp).
	NoMTP bool
	// Progress, if set, is called after each chunk of output with the bytes
	// of tensor data written so far and the total.
	Progress func(done, total int64)
	// Warn, if set, is told what the file will lack before any tensor is
	// written: a tokenizer that does not load (the file then runs from
	// token ids alone). Tiny test checkpoints, whose vocabularies hold no
	// byte tokens, are converted all the same.
	Warn func(msg string)
}

// chunkBytes bounds the float32 scratch of one streamed chunk, so peak
// memory stays near one chunk rather than one tensor.
const chunkBytes = 4 << 20

// ConvertFile converts the checkpoint in dir to a GGUF file at out through
// writeGGUFFile: out is never a partial file, nor replaces anything but a
// GGUF file, and cancelling ctx stops the write at its next buffer, removes
// the temporary file and returns an error wrapping ctx's cause.
func ConvertFile(ctx context.Context, dir, out string, opt Options) error {
	return writeGGUFFile(ctx, out, func(w io.Writer) error { return Convert(dir, w, opt) })
}

// writeGGUFFile is WriteFileAtomic for a GGUF file, which refuses up front
// to replace a file that is not one: a slip in the output path (the
// checkpoint's config.json or a .safetensors shard, a document) would
// otherwise lose that file when the rename lands. An empty file has
// nothing to lose.
func writeGGUFFile(ctx context.Context, path string, write func(io.Writer) error) error {
	if err := checkOutput(path); err != nil {
		return err
	}
	if err := checkReplacesGGUF(path); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, path, write)
}

// checkReplacesGGUF reports an error unless path is missing, empty or
// begins with GGUF's magic; checkOutput has ruled out all but regular files.
func checkReplacesGGUF(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	defer f.Close()
	var head [4]byte
	n, err := io.ReadFull(f, head[:])
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return nil
	case n == len(head) && string(head[:]) == "GGUF":
		return nil
	case err != nil && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("output %s: %w", path, err)
	}
	return fmt.Errorf("output %s exists and is not a GGUF file (it begins %q): memra replaces only GGUF files, so a slip in -o loses nothing; remove it or give another path",
		path, head[:n])
}

// WriteFileAtomic streams write's output through a buffer into a temporary
// file beside path (path.PID-N.tmp, created exclusively, so that two
// processes writing one path never share it) and renames it to path once
// complete; on an error or ctx's cancellation nothing is left behind. The
// file gets os.Create's mode (0666 less the umask).
func WriteFileAtomic(ctx context.Context, path string, write func(io.Writer) error) (err error) {
	if err := checkOutput(path); err != nil {
		return err
	}
	f, err := createTemp(path)
	if err != nil {
		return fmt.Errorf("output %s: cannot create its temporary file in %s: %w", path, filepath.Dir(path), err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	cw := &ctxWriter{ctx: ctx, w: f}
	bw := &reservingWriter{Writer: bufio.NewWriterSize(cw, 4<<20), f: f, path: path}
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		if ctx.Err() != nil { // the writer's own wrapping may not keep the cause
			return fmt.Errorf("write %s: %w", path, context.Cause(ctx))
		}
		return tempFileError(err, path, tmp, cw.n)
	}
	return replace(tmp, path)
}

// tempFileError restates a failed write or close of the temporary file tmp
// (a full disk, a file size limit: "write x.gguf.123-0.tmp: no space left
// on device", naming a file that is removed by the time it is read) as the
// output path's, with how far the write got; other errors pass unchanged.
func tempFileError(err error, path, tmp string, written int64) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != tmp {
		return err
	}
	return fmt.Errorf("write %s: %w after %.1f MB (%s not written; its partial temporary file was removed)",
		path, pe.Err, float64(written)/1e6, path)
}

// reservingWriter is WriteFileAtomic's buffered output. It is a
// gguf.Reserver: told the file's size before the first byte, it claims the
// room on the disk (where the system can: reserve), so that a file too big
// for the disk fails at once instead of when the disk fills.
type reservingWriter struct {
	*bufio.Writer
	f    *os.File
	path string
}

func (w *reservingWriter) Reserve(size int64) error {
	if err := reserve(w.f, size); err != nil {
		return fmt.Errorf("write %s: the file is %.2f GB and %s has no room for it: %w (nothing was written)",
			w.path, float64(size)/1e9, filepath.Dir(w.path), err)
	}
	return nil
}

// createTemp creates path.PID-N.tmp for the first N not taken. os.CreateTemp
// would do, but creates its files 0600.
func createTemp(path string) (*os.File, error) {
	for n := 0; ; n++ {
		name := fmt.Sprintf("%s.%d-%d.tmp", path, os.Getpid(), n)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && n < 1000 {
			continue
		}
		return f, err
	}
}

// ctxWriter fails every write once ctx is done, so a cancelled conversion
// stops within one buffer (4 MiB) of output.
// It counts the bytes written.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// checkOutput reports, before any work, why path cannot take the file that
// WriteFileAtomic renames onto it: its directory is missing, or it is
// something other than a regular file (a directory, a device, a link), or
// another user's file in a sticky directory (stickyRefuses), which the
// rename would replace or fail on only at the end.
func checkOutput(path string) error {
	dir := filepath.Dir(path)
	dst, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output %s: directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case !dst.IsDir():
		return fmt.Errorf("output %s: %s is a file, not a directory", path, dir)
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case st.IsDir():
		return fmt.Errorf("output %s is a directory: give a file path", path)
	case !st.Mode().IsRegular():
		kind := fileKind(st.Mode())
		if st.Mode()&fs.ModeSymlink != 0 {
			kind = "a symbolic link, which the new file would replace"
		}
		return fmt.Errorf("output %s is %s: give a file path (its target's, for a link)", path, kind)
	}
	dirUID, ok1 := fileOwner(dst)
	fileUID, ok2 := fileOwner(st)
	if ok1 && ok2 && stickyRefuses(dst.Mode(), dirUID, fileUID, os.Geteuid()) {
		return fmt.Errorf("output %s belongs to another user (uid %d) in %s, whose sticky bit lets only its owner replace it: remove it as that user or give another path", path, fileUID, dir)
	}
	return nil
}

// stickyRefuses reports whether rename(2) would refuse to replace a file
// owned by fileUID in a directory with the sticky bit (such as /tmp): only
// the file's owner, the directory's or a privileged process (euid 0 stands
// for CAP_FOWNER here) may. Checked up front, since the rename comes only
// after the whole file is written.
func stickyRefuses(dirMode fs.FileMode, dirUID, fileUID uint32, euid int) bool {
	return dirMode&fs.ModeSticky != 0 && euid > 0 && uint32(euid) != fileUID && uint32(euid) != dirUID
}

// Convert writes the GGUF of the checkpoint in dir to w.
func Convert(dir string, w io.Writer, opt Options) error {
	cfgPath := filepath.Join(dir, "config.json")
	hc, err := readHFConfig(dir)
	if err != nil {
		return err
	}
	spec, err := specFromHF(hc, cfgPath)
	if err != nil {
		return err
	}
	if opt.NoMTP {
		spec.NMTP = 0
	}
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		return err
	}
	defer ck.Close()

	// Normalise names and drop what llama.cpp drops.
	type src struct {
		meta *TensorMeta
		name string // normalised Hugging Face name
	}
	var srcs []src
	hasHead := false
	for _, t := range ck.Tensors {
		n, keep := normaliseName(t.Name, opt.NoMTP)
		if !keep {
			continue
		}
		if n == "lm_head.weight" {
			hasHead = true
		}
		srcs = append(srcs, src{t, n})
	}
	// A checkpoint that stores lm_head gets output.weight even when the
	// config says tied, as llama.cpp writes every tensor it finds.
	if hasHead {
		spec.Tied = false
	}
	plan, err := Plan(spec)
	if err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}
	byHF := make(map[string]*Entry, len(plan))
	for i := range plan {
		byHF[plan[i].HF] = &plan[i]
	}
	used := map[string]*TensorMeta{} // normalised name → the checkpoint tensor that gave it
	type job struct {
		meta *TensorMeta
		e    *Entry
		typ  gguf.Type
	}
	var jobs []job
	var total int64
	for _, s := range srcs {
		e, ok := byHF[s.name]
		if !ok {
			hint := ""
			if strings.HasPrefix(s.name, "mtp.") {
				hint = " (MTP tensor but the config has no mtp_num_hidden_layers; use --no-mtp to drop MTP layers)"
			}
			return fmt.Errorf("%s: tensor %q is not part of a %s model with this config%s", s.meta.File, s.meta.Name, spec.Arch, hint)
		}
		if !slices.Equal(s.meta.Shape, e.HFShape) {
			return fmt.Errorf("%s: tensor %q has shape %v, want %v for %s", s.meta.File, s.meta.Name, s.meta.Shape, e.HFShape, e.Name)
		}
		if u := used[s.name]; u != nil {
			// Two spellings of one tensor (model.norm.weight beside
			// model.language_model.norm.weight): which is meant is not ours to pick.
			return fmt.Errorf("%s: tensors %q (%s) and %q (%s) are both %s", filepath.Dir(s.meta.File), u.Name, filepath.Base(u.File),
				s.meta.Name, filepath.Base(s.meta.File), e.Name)
		}
		used[s.name] = s.meta
		typ := TensorType(spec, e, opt.Type)
		nb, err := tensorSize(typ, e.Shape)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		total += nb
		jobs = append(jobs, job{s.meta, e, typ})
	}
	var missing []string
	onlyMTP := true
	for _, e := range plan {
		if used[e.HF] == nil {
			missing = append(missing, fmt.Sprintf("%s (for %s)", e.HF, e.Name))
			onlyMTP = onlyMTP && strings.HasPrefix(e.HF, "mtp.")
		}
	}
	if len(missing) > 0 {
		hint := ""
		if onlyMTP {
			// transformers' Qwen3_5ForCausalLM has no MTP modules, so a
			// checkpoint it saved (a fine-tune) keeps mtp_num_hidden_layers
			// in its config but drops the mtp.* tensors.
			hint = " (only MTP tensors are missing: use --no-mtp to convert without the MTP layer)"
		}
		return fmt.Errorf("%s: checkpoint is missing %d tensor(s): %s%s", dir, len(missing), short(missing), hint)
	}
	vocab, err := ReadVocab(dir, spec.NVocab)
	if err != nil {
		return err
	}
	warnTokenizer(opt.Warn, dir, func() []gguf.KV { return vocab.KVs(tokenizerPre(spec.Arch)) })
	name := opt.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(dir))
	}

	gw := gguf.NewWriter(w, 3)
	for _, kv := range Metadata(spec, opt.Type, name) {
		gw.SetKV(kv.Key, kv.Value)
	}
	for _, kv := range vocab.KVs(tokenizerPre(spec.Arch)) {
		gw.SetKV(kv.Key, kv.Value)
	}
	var done int64
	for _, j := range jobs {
		j := j
		gw.AddTensor(j.e.Name, j.typ, j.e.Shape, func(out io.Writer) error {
			return streamTensor(out, ck, j.meta, j.e, j.typ, spec, func(n int64) {
				done += n
				if opt.Progress != nil {
					opt.Progress(done, total)
				}
			})
		})
	}
	return gw.Write()
}

// normaliseName maps multimodal-wrapper names to Qwen3_5ForCausalLM's and
// reports whether llama.cpp keeps the tensor.
func normaliseName(n string, noMTP bool) (string, bool) {
	if strings.HasSuffix(n, ".rotary_emb.inv_freq") {
		return "", false
	}
	if strings.HasPrefix(n, "model.language_model.") {
		n = "model." + strings.TrimPrefix(n, "model.language_model.")
	}
	if strings.HasPrefix(n, "model.mtp.") {
		n = strings.TrimPrefix(n, "model.")
	}
	if strings.Contains(n, "visual.") || strings.Contains(n, "vision_") || strings.Contains(n, "vision.") {
		return "", false
	}
	if noMTP && strings.HasPrefix(n, "mtp.") {
		return "", false
	}
	return n, true
}

func tokenizerPre(arch string) string {
	if arch == ArchQwen35 {
		return "qwen35"
	}
	return "qwen2"
}

func tensorSize(t gguf.Type, shape []uint64) (int64, error) {
	rows := int64(1)
	for _, d := range shape[1:] {
		rows *= int64(d)
	}
	rb, err := gguf.RowBytes(t, int64(shape[0]))
	if err != nil {
		return 0, err
	}
	return rb * rows, nil
}

// Metadata returns the general.* and architecture keys in llama.cpp's
// order (see convert_hf_to_gguf: TextModel, Qwen3Next and the Qwen3.5
// mixins); the tokenizer keys follow.
func Metadata(s *Spec, ft FileType, name string) []gguf.KV {
	a := s.Arch + "."
	u32 := func(k string, v int) gguf.KV { return gguf.KV{Key: k, Value: gguf.Uint32Value(uint32(v))} }
	f32 := func(k string, v float32) gguf.KV { return gguf.KV{Key: k, Value: gguf.Float32Value(v)} }
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.StringValue(s.Arch)},
		{Key: "general.type", Value: gguf.StringValue("model")},
	}
	if name != "" {
		kvs = append(kvs, gguf.KV{Key: "general.name", Value: gguf.StringValue(name)})
	}
	sections := gguf.KV{Key: a + "rope.dimension_sections", Value: gguf.Int32sValue(s.RopeSections[:])}
	kvs = append(kvs,
		u32(a+"block_count", s.BlockCount()),
		u32(a+"context_length", s.ContextLength),
		u32(a+"embedding_length", s.NEmbd),
		u32(a+"feed_forward_length", s.NFF),
		u32(a+"attention.head_count", s.NHead),
		u32(a+"attention.head_count_kv", s.NHeadKV),
	)
	if s.Arch == ArchQwen35 && s.RopeSectionsFromConfig {
		kvs = append(kvs, sections)
	}
	kvs = append(kvs,
		f32(a+"rope.freq_base", s.RopeTheta),
		f32(a+"attention.layer_norm_rms_epsilon", s.RMSEps),
		u32(a+"attention.key_length", s.HeadDim),
		u32(a+"attention.value_length", s.HeadDim),
		u32("general.file_type", int(ft)),
	)
	if s.Arch == ArchQwen35 {
		kvs = append(kvs,
			u32(a+"ssm.conv_kernel", s.ConvKernel),
			u32(a+"ssm.state_size", s.SSMKHeadDim),
			u32(a+"ssm.group_count", s.SSMKHeads),
			u32(a+"ssm.time_step_rank", s.SSMVHeads),
			u32(a+"ssm.inner_size", s.VDim()),
			u32(a+"full_attention_interval", s.FullAttnInterval),
			u32(a+"rope.dimension_count", s.RopeDims),
		)
		if !s.RopeSectionsFromConfig {
			kvs = append(kvs, sections)
		}
		if s.NMTP > 0 {
			kvs = append(kvs, u32(a+"nextn_predict_layers", s.NMTP))
		}
	}
	kvs = append(kvs, u32("general.quantization_version", 2))
	return kvs
}

// view2D returns the tensor as rows × cols with cols = ne0 (1-D tensors
// are n rows of 1 so reorders index rows).
func view2D(e *Entry) (rows, cols int) {
	if len(e.Shape) == 1 {
		return int(e.Shape[0]), 1
	}
	cols = int(e.Shape[0])
	rows = 1
	for _, d := range e.Shape[1:] {
		rows *= int(d)
	}
	return rows, cols
}

// streamTensor reads, transforms and encodes one tensor chunk by chunk.
func streamTensor(out io.Writer, ck *Checkpoint, t *TensorMeta, e *Entry, typ gguf.Type, s *Spec, progress func(int64)) error {
	rows, cols := view2D(e)
	perChunk := max(1, chunkBytes/(4*cols))
	if len(e.Shape) == 1 {
		perChunk = rows // 1-D tensors are small; elementwise
	}
	buf := make([]float32, perChunk*cols)
	rowTmp := make([]float32, cols)
	var enc []byte
	var raw []byte
	f16src := t.DType == DTypeF16
	for r0 := 0; r0 < rows; r0 += perChunk {
		n := min(perChunk, rows-r0)
		x := buf[:n*cols]
		if e.R.HeadDim > 0 && e.R.Axis == 0 {
			for r := 0; r < n; r++ {
				sr := srcIndex(r0+r, e.R, s.SSMKHeads, s.SSMVHeads)
				if err := ck.readElems(t, int64(sr)*int64(cols), x[r*cols:(r+1)*cols], &raw); err != nil {
					return err
				}
			}
		} else if err := ck.readElems(t, int64(r0)*int64(cols), x, &raw); err != nil {
			return err
		}
		if e.R.HeadDim > 0 && e.R.Axis == 1 {
			for r := 0; r < n; r++ {
				row := x[r*cols : (r+1)*cols]
				copy(rowTmp, row)
				for c := range row {
					row[c] = rowTmp[srcIndex(c, e.R, s.SSMKHeads, s.SSMVHeads)]
				}
			}
		}
		applyTransform(x, e.X, f16src)
		nb, err := gguf.RowBytes(typ, int64(len(x)))
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		if int64(cap(enc)) < nb {
			enc = make([]byte, nb)
		}
		enc = enc[:nb]
		if err := quantizeRows(typ, x, enc, n); err != nil {
			if re := (*gguf.RangeError)(nil); errors.As(err, &re) {
				return fmt.Errorf("%s (%s in %s): row %d, column %d is %g, outside the ±%g that %v holds: convert with --type bf16 or f16",
					e.Name, t.Name, t.File, r0+re.Index/cols, re.Index%cols, re.Value, re.Limit, typ)
			}
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		if _, err := out.Write(enc); err != nil {
			return err
		}
		progress(nb)
	}
	return nil
}

// quantizeRows is gguf.Quantize of n rows of x into enc, the rows split
// over the CPUs: the K-quant quantisers run at ~50 MB/s of input per core,
// which made a 9B conversion take minutes on one. Each row's bytes depend on
// that row only, so the output is the same for any split.
func quantizeRows(typ gguf.Type, x []float32, enc []byte, n int) error {
	if n <= 1 || typ == gguf.TypeF32 {
		return gguf.Quantize(typ, x, enc)
	}
	cols, rb := len(x)/n, len(enc)/n
	var mu sync.Mutex
	var errs []error
	par.Rows(n, 1, func(lo, hi int) {
		if err := gguf.Quantize(typ, x[lo*cols:hi*cols], enc[lo*rb:hi*rb]); err != nil {
			if re := (*gguf.RangeError)(nil); errors.As(err, &re) {
				r := *re
				r.Index += lo * cols // an index into x, not into rows lo..hi
				err = &r
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	return errors.Join(errs...)
}

// applyTransform applies llama.cpp's elementwise transform. With an F16
// source llama.cpp computes in half precision; the result is rounded to
// half to match.
func applyTransform(x []float32, t Transform, f16 bool) {
	switch t {
	case TNone:
		return
	case TPlusOne:
		for i := range x {
			x[i] += 1
		}
	case TNegExp:
		for i := range x {
			x[i] = float32(-math.Exp(float64(x[i])))
		}
	}
	if f16 {
		for i := range x {
			x[i] = roundF16(x[i])
		}
	}
}

// readElems reads len(dst) elements starting at element index start.
func (ck *Checkpoint) readElems(t *TensorMeta, start int64, dst []float32, scratch *[]byte) error {
	f, ok := ck.handles[t.File]
	if !ok {
		return fmt.Errorf("tensor %q: file %s is not open", t.Name, t.File)
	}
	es := int64(t.DType.size())
	n := int64(len(dst))
	if start < 0 || (start+n)*es > t.Size {
		return fmt.Errorf("tensor %q: read of %d elements at %d is out of range", t.Name, n, start)
	}
	if int64(cap(*scratch)) < n*es {
		*scratch = make([]byte, n*es)
	}
	b := (*scratch)[:n*es]
	if _, err := f.ReadAt(b, t.Begin+start*es); err != nil {
		return fmt.Errorf("tensor %q in %s: %w", t.Name, t.File, err)
	}
	decodeInto(t.DType, b, dst)
	return nil
}
