// Package modeltest writes small random GGUF models (qwen35 and qwen3) for
// tests of the loader and of every backend: random, non-zero weights of any
// supported type, with the metadata and tensor names of real files.
package modeltest

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
)

// Spec describes a synthetic model. Dimensions follow engine/model.Config.
type Spec struct {
	Arch           string // "qwen35" or "qwen3"
	NLayer, NNextN int    // main layers; MTP layers appended after them (qwen35)
	NEmbd, NFF     int
	NVocab         int
	NHead, NHeadKV int
	HeadDim, NRot  int
	RopeBase       float32
	NormEps        float32
	ContextLength  int

	// qwen35 only.
	Interval      int // full_attention_interval (written unless RecurrentLayers is set)
	RecurrentLyrs []bool
	ConvKernel    int
	StateSize     int // S (K head dim)
	GroupCount    int // H_k
	NumVHeads     int // H_v
	HeadDimV      int // Sv

	Tied bool // omit output.weight
	Seed uint64

	// Type returns the storage type of a matrix or embedding (nil: F32).
	// Norms, ssm_a, ssm_dt, ssm_norm and ssm_conv1d are always F32.
	Type func(name string) gguf.Type
	// Omit leaves these tensors out; Shape overrides declared shapes; both
	// exist to provoke load errors.
	Omit  map[string]bool
	Shape map[string][]uint64
	// Force sets the type of any tensor by name (after Type).
	Force map[string]gguf.Type
	// SkipKeys leaves these metadata keys (without the arch prefix) out.
	SkipKeys map[string]bool
	// KV writes these metadata keys (without the arch prefix) with these
	// values, in place of the spec's or beside them: a key of the wrong
	// type, or a value the spec's fields cannot express.
	KV map[string]gguf.Value
	// BlockCount, when not 0, is written as block_count instead of
	// NLayer + NNextN; Extra adds F32 tensors of these names and shapes.
	// Both provoke metadata that does not match the tensors.
	BlockCount int
	Extra      map[string][]uint64
	// NaN fills these F32 tensors with NaN: a file whose weights are not
	// finite, which loads and decodes to logits that are all NaN.
	NaN map[string]bool
}

// TinyQwen35 is a 4-layer qwen35 (layers 1 and 3 attention) plus one MTP
// layer, with every dimension a multiple of 256 where k-quants need it.
func TinyQwen35() Spec {
	return Spec{
		Arch: "qwen35", NLayer: 4, NNextN: 1, NEmbd: 256, NFF: 512, NVocab: 320,
		NHead: 4, NHeadKV: 2, HeadDim: 64, NRot: 16, RopeBase: 10000, NormEps: 1e-6, ContextLength: 256,
		Interval: 2, ConvKernel: 4, StateSize: 32, GroupCount: 2, NumVHeads: 4, HeadDimV: 64, Seed: 1,
	}
}

// TinyQwen3 is a 3-layer qwen3.
func TinyQwen3() Spec {
	return Spec{
		Arch: "qwen3", NLayer: 3, NEmbd: 256, NFF: 512, NVocab: 320,
		NHead: 4, NHeadKV: 2, HeadDim: 64, NRot: 64, RopeBase: 1e6, NormEps: 1e-6, ContextLength: 256, Seed: 2,
	}
}

type tensorSpec struct {
	name  string
	shape []uint64
	kind  Kind
}

// Kind says how RandomTensor draws values.
type Kind int

const (
	KindMatrix Kind = iota // uniform, RMS ≈ 1/sqrt(row length)
	KindNorm               // 1 ± 0.2
	KindSmall              // ±0.5 (biases)
	KindA                  // negative: ssm_a = −exp(A_log)
	KindConv               // ±0.5 (conv taps)
)

func (s *Spec) tensors() []tensorSpec {
	u := func(xs ...int) []uint64 {
		out := make([]uint64, len(xs))
		for i, x := range xs {
			out[i] = uint64(x)
		}
		return out
	}
	var ts []tensorSpec
	add := func(name string, kind Kind, shape ...int) {
		ts = append(ts, tensorSpec{name, u(shape...), kind})
	}
	add("token_embd.weight", KindMatrix, s.NEmbd, s.NVocab)
	add("output_norm.weight", KindNorm, s.NEmbd)
	if !s.Tied {
		add("output.weight", KindMatrix, s.NEmbd, s.NVocab)
	}
	K := s.GroupCount * s.StateSize
	V := s.NumVHeads * s.HeadDimV
	for i := range s.NLayer + s.NNextN {
		n := func(x string) string { return fmt.Sprintf("blk.%d.%s", i, x) }
		add(n("attn_norm.weight"), KindNorm, s.NEmbd)
		if s.Arch == "qwen3" {
			add(n("ffn_norm.weight"), KindNorm, s.NEmbd)
		} else {
			add(n("post_attention_norm.weight"), KindNorm, s.NEmbd)
		}
		mtp := i >= s.NLayer
		if mtp || !s.recurrent(i) {
			qRows := s.NHead * s.HeadDim
			if s.Arch == "qwen35" {
				qRows *= 2
			}
			add(n("attn_q.weight"), KindMatrix, s.NEmbd, qRows)
			add(n("attn_k.weight"), KindMatrix, s.NEmbd, s.NHeadKV*s.HeadDim)
			add(n("attn_v.weight"), KindMatrix, s.NEmbd, s.NHeadKV*s.HeadDim)
			add(n("attn_output.weight"), KindMatrix, s.NHead*s.HeadDim, s.NEmbd)
			add(n("attn_q_norm.weight"), KindNorm, s.HeadDim)
			add(n("attn_k_norm.weight"), KindNorm, s.HeadDim)
		} else {
			add(n("attn_qkv.weight"), KindMatrix, s.NEmbd, 2*K+V)
			add(n("attn_gate.weight"), KindMatrix, s.NEmbd, V)
			add(n("ssm_conv1d.weight"), KindConv, s.ConvKernel, 2*K+V)
			add(n("ssm_dt.bias"), KindSmall, s.NumVHeads)
			add(n("ssm_a"), KindA, s.NumVHeads)
			add(n("ssm_beta.weight"), KindMatrix, s.NEmbd, s.NumVHeads)
			add(n("ssm_alpha.weight"), KindMatrix, s.NEmbd, s.NumVHeads)
			add(n("ssm_norm.weight"), KindNorm, s.HeadDimV)
			add(n("ssm_out.weight"), KindMatrix, V, s.NEmbd)
		}
		add(n("ffn_gate.weight"), KindMatrix, s.NEmbd, s.NFF)
		add(n("ffn_up.weight"), KindMatrix, s.NEmbd, s.NFF)
		add(n("ffn_down.weight"), KindMatrix, s.NFF, s.NEmbd)
		if mtp {
			add(n("nextn.eh_proj.weight"), KindMatrix, 2*s.NEmbd, s.NEmbd)
			add(n("nextn.enorm.weight"), KindNorm, s.NEmbd)
			add(n("nextn.hnorm.weight"), KindNorm, s.NEmbd)
		}
	}
	return ts
}

func (s *Spec) recurrent(i int) bool {
	if s.Arch != "qwen35" {
		return false
	}
	if s.RecurrentLyrs != nil {
		return s.RecurrentLyrs[i]
	}
	iv := s.Interval
	if iv == 0 {
		iv = 4
	}
	return (i+1)%iv != 0
}

// Write writes the model to path.
func Write(path string, s Spec) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteTo(f, s); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// WriteTo writes the model as a GGUF v3 stream.
func WriteTo(out io.Writer, s Spec) error {
	w := gguf.NewWriter(out, 3)
	w.SetKV("general.architecture", gguf.StringValue(s.Arch))
	w.SetKV("general.name", gguf.StringValue("modeltest-"+s.Arch))
	set := func(key string, v gguf.Value) {
		if !s.SkipKeys[key] {
			w.SetKV(s.Arch+"."+key, v)
		}
	}
	u32 := func(x int) gguf.Value { return gguf.Uint32Value(uint32(x)) }
	if s.BlockCount != 0 {
		set("block_count", u32(s.BlockCount))
	} else {
		set("block_count", u32(s.NLayer+s.NNextN))
	}
	set("context_length", u32(s.ContextLength))
	set("embedding_length", u32(s.NEmbd))
	set("feed_forward_length", u32(s.NFF))
	set("attention.head_count", u32(s.NHead))
	set("attention.head_count_kv", u32(s.NHeadKV))
	set("attention.key_length", u32(s.HeadDim))
	set("attention.value_length", u32(s.HeadDim))
	set("attention.layer_norm_rms_epsilon", gguf.Float32Value(s.NormEps))
	set("rope.freq_base", gguf.Float32Value(s.RopeBase))
	set("rope.dimension_count", u32(s.NRot))
	if s.Arch == "qwen35" {
		set("rope.dimension_sections", gguf.Int32sValue([]int32{11, 11, 10, 0}))
		if s.NNextN > 0 {
			set("nextn_predict_layers", u32(s.NNextN))
		}
		if s.RecurrentLyrs != nil {
			set("attention.recurrent_layers", gguf.BoolsValue(append([]bool(nil), s.RecurrentLyrs...)))
		} else if s.Interval != 0 {
			set("full_attention_interval", u32(s.Interval))
		}
		set("ssm.conv_kernel", u32(s.ConvKernel))
		set("ssm.state_size", u32(s.StateSize))
		set("ssm.group_count", u32(s.GroupCount))
		set("ssm.time_step_rank", u32(s.NumVHeads))
		set("ssm.inner_size", u32(s.NumVHeads*s.HeadDimV))
	}
	kvKeys := make([]string, 0, len(s.KV))
	for key := range s.KV {
		kvKeys = append(kvKeys, key)
	}
	sort.Strings(kvKeys)         // the file's bytes stay deterministic
	for _, key := range kvKeys { // SetKV replaces a value already set
		w.SetKV(s.Arch+"."+key, s.KV[key])
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x6d656d7261))
	for _, ts := range s.tensors() {
		if s.Omit[ts.name] {
			continue
		}
		shape := ts.shape
		if sh, ok := s.Shape[ts.name]; ok {
			shape = sh
		}
		typ := gguf.TypeF32
		if ts.kind == KindMatrix && s.Type != nil {
			typ = s.Type(ts.name)
		}
		if ft, ok := s.Force[ts.name]; ok {
			typ = ft
		}
		data, err := RandomTensor(rng, typ, shape, ts.kind)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", ts.name, err)
		}
		if s.NaN[ts.name] {
			if typ != gguf.TypeF32 {
				return fmt.Errorf("tensor %s: NaN fills F32 tensors, not %v", ts.name, typ)
			}
			for i := 0; i < len(data); i += 4 {
				binary.LittleEndian.PutUint32(data[i:], 0x7fc00000)
			}
		}
		w.AddTensorBytes(ts.name, typ, shape, data)
	}
	names := make([]string, 0, len(s.Extra))
	for name := range s.Extra {
		names = append(names, name)
	}
	sort.Strings(names) // the file's bytes stay deterministic
	for _, name := range names {
		data, err := RandomTensor(rng, gguf.TypeF32, s.Extra[name], KindNorm)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		w.AddTensorBytes(name, gguf.TypeF32, s.Extra[name], data)
	}
	return w.Write()
}

// RandomTensor returns random data of type typ and ggml shape: matrices with
// entries of size ~1/sqrt(row length) (activations keep their scale),
// norms near 1, ssm_a negative. Quantised types gguf cannot produce get
// random blocks whose f16 scale fields are set so each block has about the
// target RMS; other types get random bytes (for tests that expect rejection).
func RandomTensor(rng *rand.Rand, typ gguf.Type, shape []uint64, kind Kind) ([]byte, error) {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	row := int(shape[0])
	vals := make([]float32, n)
	std := float32(1 / math.Sqrt(float64(row)))
	for i := range vals {
		u := rng.Float32()*2 - 1 // uniform [-1, 1): std 1/sqrt(3)
		switch kind {
		case KindMatrix:
			vals[i] = u * std * 1.7
		case KindNorm:
			vals[i] = 1 + 0.2*u
		case KindSmall:
			vals[i] = 0.5 * u
		case KindA:
			vals[i] = -(0.05 + rng.Float32()) // −exp(A_log) with A in (0.05, 1.05)
		case KindConv:
			vals[i] = 0.5 * u
		}
	}
	nb, err := gguf.RowBytes(typ, int64(n))
	if err != nil {
		return nil, err
	}
	out := make([]byte, nb)
	if gguf.CanQuantize(typ) {
		return out, gguf.Quantize(typ, vals, out)
	}
	return out, randomBlocks(rng, typ, out, std)
}

// scaleFields gives the byte offsets of the f16 scale fields (d and, where
// present, dmin/m) in a block; each format's values are linear in them.
func scaleFields(t gguf.Type) []int {
	switch t {
	case gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS:
		return []int{0}
	case gguf.TypeQ4_1, gguf.TypeQ5_1, gguf.TypeQ4_K, gguf.TypeQ5_K:
		return []int{0, 2}
	case gguf.TypeQ2_K:
		return []int{80, 82}
	case gguf.TypeQ3_K:
		return []int{108}
	case gguf.TypeQ6_K:
		return []int{208}
	}
	return nil
}

func randomBlocks(rng *rand.Rand, t gguf.Type, out []byte, target float32) error {
	fields := scaleFields(t)
	if fields == nil {
		// A type the loader should reject: any bytes will do.
		for i := range out {
			out[i] = byte(rng.Uint32())
		}
		return nil
	}
	bs, bb := t.BlockSize(), t.BlockBytes()
	buf := make([]float32, bs)
	one := gguf.F32ToF16(1)
	for b := 0; b < len(out)/bb; b++ {
		blk := out[b*bb : (b+1)*bb]
		for i := range blk {
			blk[i] = byte(rng.Uint32())
		}
		for _, off := range fields {
			binary.LittleEndian.PutUint16(blk[off:], one)
		}
		if err := gguf.Dequantize(t, blk, buf); err != nil {
			return err
		}
		var ss float64
		for _, v := range buf {
			ss += float64(v) * float64(v)
		}
		rms := math.Sqrt(ss / float64(bs))
		if rms == 0 {
			rms = 1
		}
		scale := float64(target) / rms * (0.5 + rng.Float64())
		h := gguf.F32ToF16(float32(scale))
		for _, off := range fields {
			binary.LittleEndian.PutUint16(blk[off:], h)
		}
	}
	return nil
}

// AllTypes assigns the supported matrix types in turn to the matrices of a
// spec (by name, deterministically), so one model exercises every kernel.
func AllTypes(types []gguf.Type) func(string) gguf.Type {
	seen := map[string]gguf.Type{}
	next := 0
	return func(name string) gguf.Type {
		if t, ok := seen[name]; ok {
			return t
		}
		t := types[next%len(types)]
		next++
		seen[name] = t
		return t
	}
}

// KQuantMag returns, per weight of a matrix of type typ (GGUF bytes data,
// dequantised deq), a bound on |a·q| + |m| for the K-quants, whose values
// are a·q − m and whose matvecs sum a·Σq·x and m·Σx apart: |w| + 2·M, with
// M the largest offset the weight's superblock can subtract (Q4_K/Q5_K:
// 63·|dmin|; Q6_K: m = 32·d·sc ≤ 32·128·|d|; gguf/dequant.go's layouts).
// For other types it is |w|.
func KQuantMag(typ gguf.Type, data []byte, deq []float32) []float64 {
	mag := make([]float64, len(deq))
	for i, x := range deq {
		mag[i] = math.Abs(float64(x))
	}
	var bb, off int
	var mmax float64
	switch typ {
	case gguf.TypeQ4_K:
		bb, off, mmax = 144, 2, 63
	case gguf.TypeQ5_K:
		bb, off, mmax = 176, 2, 63
	case gguf.TypeQ6_K:
		bb, off, mmax = 210, 208, 32*128
	default:
		return mag
	}
	for sb := range len(data) / bb {
		m := mmax * math.Abs(float64(gguf.F16ToF32(binary.LittleEndian.Uint16(data[sb*bb+off:]))))
		for i := 256 * sb; i < 256*(sb+1) && i < len(mag); i++ {
			mag[i] += 2 * m
		}
	}
	return mag
}

// Open opens the GGUF file at path and loads its model, failing t on any
// error; the file stays open until t ends.
func Open(t testing.TB, path string) *model.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Load writes s into t's temporary directory and opens it (Open).
func Load(t testing.TB, s Spec) *model.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	return Open(t, path)
}
