package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
)

// presetShape is a synth preset's hyperparameters as the published
// Qwen3.5 text configs give them (docs: /work/shared/reference/
// qwen35-gguf.md; H_v 32 for 9B, 48 for 27B), written out here so that the
// byte counts below come from the shapes, not from the code under test.
type presetShape struct {
	embd, layers, heads, kv, ff, hk, hv, vocab int
	tied                                       bool
	interval                                   int // every interval-th layer is attention
}

var presetShapes = map[string]presetShape{
	"tiny": {64, 4, 2, 1, 128, 2, 4, 512, false, 2},
	"0.8b": {1024, 24, 8, 2, 3584, 16, 16, 248320, true, 4},
	"2b":   {2048, 24, 8, 2, 6144, 16, 16, 248320, true, 4},
	"9b":   {4096, 32, 16, 4, 12288, 16, 32, 248320, false, 4},
	"27b":  {5120, 64, 24, 4, 17408, 16, 48, 248320, false, 4},
}

// Qwen3.5's fixed dims: attention head Dh, GDN head S (K and V), conv taps.
const (
	shapeDh   = 256
	shapeS    = 128
	shapeTaps = 4
)

// bytesPer256 is what 256 values of a matrix type take in a GGUF
// (qwen35-gguf.md's block layouts: Q8_0 34 B per 32, Q4_K 144 B per 256,
// Q6_K 210 B per 256; Q5_K is Q4_K plus 32 bytes of high bits, 176;
// ggml's Q3_K 32 + 64 + 12 + 2 = 110 per 256, Q4_0 and IQ4_NL 18 per 32,
// Q5_0 22 per 32, IQ4_XS 2 + 2 + 4 + 128 = 136 per 256).
var bytesPer256 = map[string]int64{"f32": 1024, "f16": 512, "bf16": 512, "q8_0": 272, "q6_k": 210, "q5_k": 176, "q4_k": 144,
	"q3_k": 110, "q5_0": 176, "q4_0": 144, "iq4_nl": 144, "iq4_xs": 136}

// matBytes is a {in, out} matrix of type typ as the converter writes it: a
// row not of whole 256-value superblocks takes Q8_0 instead of a K-quant
// and IQ4_NL instead of IQ4_XS (llama.cpp's fallbacks; every preset but
// tiny has none).
func matBytes(in, out int, typ string) int64 {
	if (typ == "q3_k" || typ == "q4_k" || typ == "q5_k" || typ == "q6_k") && in%256 != 0 {
		typ = "q8_0"
	}
	if typ == "iq4_xs" && in%256 != 0 {
		typ = "iq4_nl"
	}
	return int64(in) * int64(out) * bytesPer256[typ] / 256
}

// stepWeightBytes is what one decode step reads of the weights of a file
// whose matrices are all of type typ.
func (p presetShape) stepWeightBytes(typ string) int64 {
	return p.stepWeightBytesOf(func(string, int) string { return typ })
}

// stepWeightBytesOf is what one decode step reads of the weights: every
// matrix, norm, conv and ssm_a/ssm_dt vector of every layer, the output
// norm, the LM head (token_embd when tied) and, untied, one embedding row.
// mt gives a matrix's type from its role (the GGUF name less "blk.N." and
// ".weight"; "output" for the LM head, tied or not) and block.
func (p presetShape) stepWeightBytesOf(mt func(role string, l int) string) int64 {
	f32 := func(n int) int64 { return 4 * int64(n) }
	K, V := p.hk*shapeS, p.hv*shapeS
	C := 2*K + V
	n := f32(p.embd) + matBytes(p.embd, p.vocab, mt("output", -1)) // output_norm, LM head
	if !p.tied {
		n += matBytes(p.embd, 1, mt("token_embd", -1)) // the embedding row looked up
	}
	for l := range p.layers {
		n += 2*f32(p.embd) + matBytes(p.embd, p.ff, mt("ffn_gate", l)) + matBytes(p.embd, p.ff, mt("ffn_up", l)) +
			matBytes(p.ff, p.embd, mt("ffn_down", l))
		if (l+1)%p.interval == 0 { // gated attention
			n += matBytes(p.embd, 2*shapeDh*p.heads, mt("attn_q", l)) + matBytes(p.embd, shapeDh*p.kv, mt("attn_k", l)) +
				matBytes(p.embd, shapeDh*p.kv, mt("attn_v", l)) + matBytes(shapeDh*p.heads, p.embd, mt("attn_output", l)) + 2*f32(shapeDh)
		} else { // Gated DeltaNet
			n += matBytes(p.embd, C, mt("attn_qkv", l)) + matBytes(p.embd, V, mt("attn_gate", l)) +
				matBytes(p.embd, p.hv, mt("ssm_beta", l)) + matBytes(p.embd, p.hv, mt("ssm_alpha", l)) +
				matBytes(V, p.embd, mt("ssm_out", l)) + f32(shapeTaps*C) + 2*f32(p.hv) + f32(shapeS)
		}
	}
	return n
}

// presetPlan is convert.PresetPlan, failing t on an error.
func presetPlan(t *testing.T, name string) (*convert.Spec, []convert.Entry) {
	t.Helper()
	spec, plan, err := convert.PresetPlan(name)
	if err != nil {
		t.Fatal(err)
	}
	return spec, plan
}

// planTypes is mt for stepWeightBytesOf from the converter's own choice of
// types for preset name in file type ft (a K mix: which matrices get more
// bits is engine/convert's TestMixTypesPresets's to check; this file checks
// the bytes bench counts for them).
func planTypes(t *testing.T, name string, ft convert.FileType) func(role string, l int) string {
	t.Helper()
	spec, plan := presetPlan(t, name)
	types := map[string]string{}
	for i := range plan {
		types[plan[i].Name] = strings.ToLower(convert.TensorType(spec, &plan[i], ft).String())
	}
	head := "output.weight"
	if spec.Tied {
		head = "token_embd.weight"
	}
	return func(role string, l int) string {
		switch {
		case role == "output":
			return types[head]
		case l < 0:
			return types[role+".weight"]
		}
		return types[fmt.Sprintf("blk.%d.%s.weight", l, role)]
	}
}

func (p presetShape) attnLayers() int { return p.layers / p.interval }

// kvBytes is the KV cache one token reads over tKV keys: K and V rows of
// Dh values per attention layer and KV head, f16, or e4m3 with one f32
// scale per row (FP8).
func (p presetShape) kvBytes(tKV float64, fp8 bool) float64 {
	row := 2.0 * shapeDh
	if fp8 {
		row = shapeDh + 4
	}
	return 2 * row * float64(p.attnLayers()*p.kv) * tKV
}

// stateBytes is the recurrent state a token reads and writes: per GDN
// layer H_v·S·S f32 and the conv's (taps−1)·C f32, twice.
func (p presetShape) stateBytes() float64 {
	C := 2*p.hk*shapeS + p.hv*shapeS
	per := 4*p.hv*shapeS*shapeS + 4*(shapeTaps-1)*C
	return 2 * float64(per*(p.layers-p.attnLayers()))
}

// TestPresetShapesMatchConvert keeps the table above the presets synth
// writes.
func TestPresetShapesMatchConvert(t *testing.T) {
	if len(presetShapes) != len(convert.Presets()) {
		t.Errorf("presets %v, table has %d", convert.Presets(), len(presetShapes))
	}
	for _, name := range convert.Presets() {
		s, err := convert.PresetSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := presetShapes[name]
		if !ok {
			t.Errorf("preset %s not in the table", name)
			continue
		}
		got := presetShape{s.NEmbd, s.NLayer, s.NHead, s.NHeadKV, s.NFF, s.SSMKHeads, s.SSMVHeads, s.NVocab, s.Tied, s.FullAttnInterval}
		if got != p || s.HeadDim != shapeDh || s.SSMKHeadDim != shapeS || s.SSMVHeadDim != shapeS || s.ConvKernel != shapeTaps {
			t.Errorf("preset %s: %+v (Dh %d, S %d/%d, taps %d), table %+v", name, got, s.HeadDim, s.SSMKHeadDim, s.SSMVHeadDim, s.ConvKernel, p)
		}
	}
}

// sparseWriter writes the first headerBytes for real and skips the rest
// with Seek: every byte after a zero-data GGUF's header is zero, so the
// file reads the same with holes there and costs no disk.
type sparseWriter struct {
	f   *os.File
	pos int64
}

const headerBytes = 4 << 20 // a preset's GGUF header (no vocabulary) is ~60 KB

func (w *sparseWriter) Write(p []byte) (int, error) {
	if w.pos < headerBytes {
		n, err := w.f.Write(p)
		w.pos += int64(n)
		return n, err
	}
	if _, err := w.f.Seek(int64(len(p)), io.SeekCurrent); err != nil {
		return 0, err
	}
	w.pos += int64(len(p))
	return len(p), nil
}

// writeZeroPreset writes preset name as synth lays it out (convert.Plan,
// Metadata, TensorType) with all-zero data, as a sparse file.
func writeZeroPreset(t *testing.T, path, name string, ft convert.FileType) {
	t.Helper()
	spec, plan := presetPlan(t, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sw := &sparseWriter{f: f}
	gw := gguf.NewWriter(sw, 3)
	for _, kv := range convert.Metadata(spec, ft, "zero "+name) {
		gw.SetKV(kv.Key, kv.Value)
	}
	zero := make([]byte, 8<<20)
	for i := range plan {
		typ := convert.TensorType(spec, &plan[i], ft)
		rb, err := gguf.RowBytes(typ, int64(plan[i].Shape[0]))
		if err != nil {
			t.Fatal(err)
		}
		nb := uint64(rb)
		for _, d := range plan[i].Shape[1:] {
			nb *= d
		}
		gw.AddTensor(plan[i].Name, typ, plan[i].Shape, func(w io.Writer) error {
			for left := nb; left > 0; {
				k := min(left, uint64(len(zero)))
				if _, err := w.Write(zero[:k]); err != nil {
					return err
				}
				left -= k
			}
			return nil
		})
	}
	if err := gw.Write(); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(sw.pos); err != nil {
		t.Fatal(err)
	}
}

// TestRooflineBytesFromShapes checks bench's byte accounting (the loaded
// model's WeightBytes, trafficOf's KV and state bytes) for every synth
// preset and weight type against the counts worked out from the shapes
// alone. The files are synth's layout with zero data, sparse, and loaded
// through mmap (which never touches the data), so even 27B f32 costs no
// disk or memory.
func TestRooflineBytesFromShapes(t *testing.T) {
	switch runtime.GOOS {
	case "plan9": // gguf reads the whole file there instead of mapping it
		t.Skip("needs mmap")
	case "windows": // a file grown by Truncate is not sparse there unless marked so
		t.Skip("needs sparse files: 27B f32 alone would take 108 GB of disk")
	}
	dir := t.TempDir()
	for _, name := range convert.Presets() {
		p := presetShapes[name]
		for _, typ := range convert.FileTypeNames() {
			ft, err := convert.ParseFileType(typ)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+"-"+typ+".gguf")
			writeZeroPreset(t, path, name, ft)
			f, err := gguf.Open(path)
			if fi, serr := os.Stat(path); errors.Is(err, syscall.ENOMEM) && serr == nil && fi.Size() > 8<<30 {
				// The address space cannot hold the mapping of a large
				// preset: qemu-user's (check:arm64) maps 16 GB but not
				// 64, and ulimit -v can do the same. A small file must
				// still map.
				t.Logf("%s %s: skipped, %d bytes: %v", name, typ, fi.Size(), err)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := model.Load(f)
			if err != nil {
				f.Close()
				t.Fatalf("%s %s: %v", name, typ, err)
			}
			want := p.stepWeightBytes(typ)
			if _, plain := bytesPer256[typ]; !plain {
				want = p.stepWeightBytesOf(planTypes(t, name, ft))
			}
			if got := m.WeightBytes(); got != want {
				t.Errorf("%s %s: weight bytes per step %d, from the shapes %d", name, typ, got, want)
			}
			if typ == "bf16" {
				for _, fp8 := range []bool{false, true} {
					tr := trafficOf(&m.Config, fp8)
					// Integers and halves far below 2^53: float64 is exact.
					for _, tkv := range []float64{1, 96.5, 32800.5} {
						if got, want := tr.kvBytes(tkv), p.kvBytes(tkv, fp8); got != want {
							t.Errorf("%s fp8=%v: KV bytes at %v keys %v, from the shapes %v", name, fp8, tkv, got, want)
						}
					}
					if got, want := tr.stateBytes(), p.stateBytes(); got != want {
						t.Errorf("%s: state bytes %v, from the shapes %v", name, got, want)
					}
				}
			}
			f.Close()
			os.Remove(path)
		}
	}
}

// TestRun271Bytes checks a real report (docs/results/h200-run271.json: ten
// synth models, f16 KV, 64 tokens, 3 repeats) against the shapes: every
// row's bytes, its roofline at the run's copy bandwidth, roofline %, and
// tok/s as the reciprocal of ms/token (3 repeats: both medians are the
// same repeat).
func TestRun271Bytes(t *testing.T) {
	rep, err := readReport(filepath.Join("..", "..", "docs", "results", "h200-run271.json"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, typ := range convert.FileTypeNames() {
		types[typ] = true
	}
	rows := 0
	for _, m := range rep.Models {
		name, typ, _ := strings.Cut(m.Model, "-")
		p, ok := presetShapes[name]
		if !ok || !types[typ] || m.KV != "f16" {
			t.Fatalf("model %q (kv %s): not a preset-type label", m.Model, m.KV)
		}
		if got, want := int64(m.Memory.WeightsStep), p.stepWeightBytes(typ); got != want {
			t.Errorf("%s: weights/step %d, from the shapes %d", m.Model, got, want)
		}
		for _, r := range m.Rows {
			rows++
			tkv := float64(r.Context) + float64(rep.Settings.Tokens+1)/2
			if r.MeanTKV != tkv || r.WeightBytes != float64(p.stepWeightBytes(typ)) || r.KVBytes != p.kvBytes(tkv, false) || r.StateBytes != p.stateBytes() {
				t.Errorf("%s: bytes %v+%v+%v at %v keys, from the shapes %v+%v+%v at %v", r.key(), r.WeightBytes, r.KVBytes, r.StateBytes, r.MeanTKV,
					p.stepWeightBytes(typ), p.kvBytes(tkv, false), p.stateBytes(), tkv)
			}
			bytes := float64(p.stepWeightBytes(typ)) + p.kvBytes(tkv, false) + p.stateBytes()
			// Float rounding of one division and a product: 1e-12 relative.
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
			if roof := bytes / rep.Copy.BWRW * 1e3; !near(r.RooflineMs, roof) {
				t.Errorf("%s: roofline %v ms, want %v", r.key(), r.RooflineMs, roof)
			}
			if pct := r.RooflineMs / r.MsTok.Median * 100; !near(r.RooflinePct, pct) {
				t.Errorf("%s: roofline %% %v, want %v", r.key(), r.RooflinePct, pct)
			}
			if !near(r.TokS.Median, 1000/r.MsTok.Median) || !near(r.TokS.Min, 1000/r.MsTok.Max) || !near(r.TokS.Max, 1000/r.MsTok.Min) {
				t.Errorf("%s: tok/s %+v is not 1000 / ms/token %+v", r.key(), r.TokS, r.MsTok)
			}
		}
	}
	if rows != 150 {
		t.Errorf("%d rows, want 150 (10 models × 5 contexts × 3 paths)", rows)
	}
	// The copy bandwidth is read + written over the median copy time.
	if bw := 2 * float64(rep.Copy.Bytes) / (rep.Copy.Ms.Median / 1e3); math.Abs(bw-rep.Copy.BWRW) > 1e-12*bw {
		t.Errorf("copy bandwidth %v, 2 × %d B / %v ms = %v", rep.Copy.BWRW, rep.Copy.Bytes, rep.Copy.Ms.Median, bw)
	}
}
