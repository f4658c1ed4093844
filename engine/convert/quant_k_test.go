package convert

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

func TestParseFileType(t *testing.T) {
	for _, c := range []struct {
		s  string
		ft FileType
	}{
		{"f32", 0}, {"f16", 1}, {"bf16", 32}, {"q8_0", 7},
		// llama.cpp's LLAMA_FTYPE_MOSTLY_Q4_0 and Q5_0.
		{"q4_0", 2}, {"Q5_0", 8},
		// llama.cpp's LLAMA_FTYPE_MOSTLY_Q3_K_S, Q4_K_S, Q5_K_S and Q6_K.
		{"q3_k", 11}, {"q4_k", 14}, {"Q5_K", 16}, {"q6_K", 18},
		// llama.cpp's LLAMA_FTYPE_MOSTLY_IQ4_NL and IQ4_XS.
		{"iq4_nl", 25}, {"IQ4_XS", 30},
		// llama.cpp's LLAMA_FTYPE_MOSTLY_Q3_K_M, Q3_K_L, Q4_K_M and Q5_K_M.
		{"q3_k_m", 12}, {"Q3_K_L", 13}, {"q4_k_m", 15}, {"q5_K_M", 17},
	} {
		ft, err := ParseFileType(c.s)
		if err != nil || ft != c.ft {
			t.Errorf("ParseFileType(%q) = %d, %v; want %d", c.s, ft, err, c.ft)
		}
		if got := ft.String(); got != strings.ToLower(c.s) {
			t.Errorf("%d.String() = %q, want %q", ft, got, strings.ToLower(c.s))
		}
	}
	_, err := ParseFileType("q4_k_s")
	if err == nil || !strings.Contains(err.Error(), "q4_k_m") || !strings.Contains(err.Error(), "q8_0") {
		t.Errorf("q4_k_s: %v", err)
	}
	// Usage text lists the types from the largest to the smallest, a
	// K mix before its base type.
	want := "f32 f16 bf16 q8_0 q6_k q5_k_m q5_k q4_k_m q4_k q3_k_l q3_k_m q3_k q5_0 q4_0 iq4_nl iq4_xs"
	if got := strings.Join(FileTypeNames(), " "); got != want {
		t.Errorf("FileTypeNames() = %s, want %s", got, want)
	}
}

// kDims: a Qwen3.5 model whose matrices mostly have rows of 256 or 512, so
// the K-quants apply; attn_output's rows are 128 (Q8_0 fallback).
func kDims() tinyDims {
	return tinyDims{arch: ArchQwen35, embd: 256, ff: 512, vocab: 40, layers: 2, heads: 2, kvHeads: 1, headDim: 64,
		hk: 2, hv: 4, dk: 32, dv: 64, conv: 4, interval: 2}
}

// TestConvertKQuant converts a checkpoint with each K type (and the block
// types Q5_0, Q4_0, IQ4_NL and IQ4_XS) and checks every tensor's type
// against the rule (K type or IQ4_XS for 2-D weights with rows of 256,
// Q8_0, or IQ4_NL for IQ4_XS, for other rows of 32; Q5_0, Q4_0 and IQ4_NL
// for rows of 32; else F16; F32 for norms, conv and 1-D tensors) and its
// bytes against gguf.Quantize of the same tensor converted to F32: the
// converter must quantise exactly the values it would otherwise store.
func TestConvertKQuant(t *testing.T) {
	d := kDims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 11, DTypeF32))
	ref, _ := convertDir(t, dir, Options{Type: FileF32})
	for _, c := range []struct {
		ft    FileType
		typ   gguf.Type
		block uint64    // the row multiple typ needs
		fall  gguf.Type // for rows of 32 but not of block
		rel   float64   // RMS error bound relative to the values' RMS
		n     int       // tensors that get typ
	}{
		// Sub-blocks of 32 normals span ≈4.1σ on average, so a step of
		// range/15 ≈ 0.27σ and uniform rounding error ≈ 0.27σ/√12 ≈ 0.08σ;
		// range/31 gives ≈ 0.04σ; Q6_K's amax/31 over 16 normals (≈2σ)
		// ≈ 0.065σ, error ≈ 0.02σ; Q3_K's amax/4 ≈ 0.5σ, error ≈ 0.15σ.
		// Q4_0's amax/8 over 32 normals (≈2.5σ) ≈ 0.31σ, error ≈ 0.09σ;
		// Q5_0's amax/16 half that. IQ4_NL and IQ4_XS measure ≈0.075σ
		// on normals (gguf's TestQuantizeIQ4VersusQ4), about Q4_K's.
		// Bounds with ≈25% headroom.
		// token_embd, output, per layer ffn ×3 and attn_q/k/v or
		// attn_qkv, attn_gate, ssm_alpha, ssm_beta, ssm_out have rows of
		// 256 (16 tensors); attn_output, rows of 128, takes only the
		// block types.
		{FileQ3_K, gguf.TypeQ3_K, 256, gguf.TypeQ8_0, 0.19, 16},
		{FileQ4_K, gguf.TypeQ4_K, 256, gguf.TypeQ8_0, 0.1, 16},
		{FileQ5_K, gguf.TypeQ5_K, 256, gguf.TypeQ8_0, 0.05, 16},
		{FileQ6_K, gguf.TypeQ6_K, 256, gguf.TypeQ8_0, 0.025, 16},
		{FileQ5_0, gguf.TypeQ5_0, 32, 0, 0.06, 17},
		{FileQ4_0, gguf.TypeQ4_0, 32, 0, 0.12, 17},
		{FileIQ4_NL, gguf.TypeIQ4_NL, 32, 0, 0.1, 17},
		{FileIQ4_XS, gguf.TypeIQ4_XS, 256, gguf.TypeIQ4_NL, 0.1, 16},
	} {
		t.Run(c.ft.String(), func(t *testing.T) {
			f, _ := convertDir(t, dir, Options{Type: c.ft})
			if ft, err := f.Uint32("general.file_type"); err != nil || FileType(ft) != c.ft {
				t.Errorf("general.file_type = %d, %v; want %d", ft, err, c.ft)
			}
			nK, worst := 0, 0.0
			for _, ti := range f.Tensors {
				want := gguf.TypeF32
				switch {
				case len(ti.Shape) < 2 || strings.HasSuffix(ti.Name, "norm.weight") || strings.HasSuffix(ti.Name, "ssm_conv1d.weight") || !strings.HasSuffix(ti.Name, ".weight"):
				case ti.Shape[0]%c.block == 0:
					want = c.typ
				case ti.Shape[0]%32 == 0:
					want = c.fall
				default:
					want = gguf.TypeF16
				}
				if ti.Type != want {
					t.Errorf("%s %v: type %v, want %v", ti.Name, ti.Shape, ti.Type, want)
					continue
				}
				x, got := sameAsQuantized(t, ref, f, ti.Name, want)
				if want != c.typ {
					continue
				}
				nK++
				y := make([]float32, len(x))
				if err := gguf.Dequantize(want, got, y); err != nil {
					t.Fatal(err)
				}
				var se, sx float64
				for i := range x {
					e := float64(y[i] - x[i])
					se += e * e
					sx += float64(x[i]) * float64(x[i])
				}
				r := math.Sqrt(se / sx)
				if r > c.rel {
					t.Errorf("%s: relative RMS error %.3g > %.3g", ti.Name, r, c.rel)
				}
				worst = max(worst, r)
			}
			t.Logf("%d %v tensors, largest relative RMS error %.4f (bound %g)", nK, c.typ, worst, c.rel)
			if nK != c.n {
				t.Errorf("%d tensors of %v, want %d", nK, c.typ, c.n)
			}
		})
	}
}

// sameAsQuantized checks that tensor name of f holds the bytes of
// gguf.Quantize(typ) of the same tensor in ref, f's F32 conversion (the
// converter must quantise exactly the values it would otherwise store),
// and returns both: ref's values and f's bytes.
func sameAsQuantized(t *testing.T, ref, f *gguf.File, name string, typ gguf.Type) ([]float32, []byte) {
	t.Helper()
	x := readF32Tensor(t, ref, name)
	got, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := gguf.RowBytes(typ, int64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	enc := make([]byte, n)
	if err := gguf.Quantize(typ, x, enc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, enc) {
		t.Errorf("%s: %v bytes differ from gguf.Quantize of the F32 conversion", name, typ)
	}
	return x, got
}

// TestSynthKQuant: synth writes K-quant (and Q5_0, Q4_0, IQ4_NL, IQ4_XS)
// matrices that decode to its uniform value range (up to the quantisation
// error).
func TestSynthKQuant(t *testing.T) {
	e := &Entry{Name: "blk.0.ffn_up.weight", Shape: []uint64{512, 6}, Role: "matrix"}
	lo, hi := valueRange(e)
	for _, typ := range []gguf.Type{gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ5_0, gguf.TypeQ4_0,
		gguf.TypeIQ4_NL, gguf.TypeIQ4_XS} {
		t.Run(typ.String(), func(t *testing.T) {
			var buf bytes.Buffer
			if err := synthTensor(&buf, e, typ, 1, 2, func(int64) {}); err != nil {
				t.Fatal(err)
			}
			y := make([]float32, 512*6)
			if err := gguf.Dequantize(typ, buf.Bytes(), y); err != nil {
				t.Fatal(err)
			}
			// A sub-block's step is at most (hi − lo)/15; the values decode
			// within about half a step plus the 6-bit scale rounding of
			// their range, well inside a full step. Q3_K's and Q4_0's
			// coarser steps put a block's extreme on the grid's end (up to
			// Q3_K's scale rounding) and clamp the other side inwards, so
			// they stay inside too. IQ4_NL's and IQ4_XS's errors are within
			// 14/127 of a block's largest magnitude, under (hi − lo)/15
			// for a range about 0.
			step := (hi - lo) / 15
			var sum float64
			for i, v := range y {
				if v < lo-step || v > hi+step {
					t.Fatalf("value %d = %g outside [%g, %g]", i, v, lo, hi)
				}
				sum += float64(v)
			}
			if m := sum / float64(len(y)); math.Abs(m) > float64(hi-lo)/20 {
				t.Errorf("mean %g, want about 0", m)
			}
		})
	}
}

// TestTensorTypeK: the K types' and IQ4_XS's fallback for rows that are
// not whole superblocks, Q5_0's, Q4_0's and IQ4_NL's for rows not of whole
// blocks, and the tensors that stay F32 whatever the file type.
func TestTensorTypeK(t *testing.T) {
	spec, _ := PresetSpec("tiny")
	for _, c := range []struct {
		name  string
		shape []uint64
		ft    FileType
		want  gguf.Type
	}{
		{"blk.0.ffn_up.weight", []uint64{512, 4}, FileQ4_K, gguf.TypeQ4_K},
		{"blk.0.ffn_up.weight", []uint64{256, 4}, FileQ5_K, gguf.TypeQ5_K},
		{"blk.0.ffn_up.weight", []uint64{768, 4}, FileQ6_K, gguf.TypeQ6_K},
		{"blk.0.ffn_up.weight", []uint64{384, 4}, FileQ4_K, gguf.TypeQ8_0}, // 384 = 12·32, not 256·k
		{"blk.0.ffn_up.weight", []uint64{384, 4}, FileQ6_K, gguf.TypeQ8_0},
		{"blk.0.ffn_up.weight", []uint64{300, 4}, FileQ5_K, gguf.TypeF16},
		{"blk.0.ffn_up.weight", []uint64{512, 4}, FileQ3_K, gguf.TypeQ3_K},
		{"blk.0.ffn_up.weight", []uint64{384, 4}, FileQ3_K, gguf.TypeQ8_0},
		{"blk.0.ffn_up.weight", []uint64{300, 4}, FileQ3_K, gguf.TypeF16},
		// Q5_0 and Q4_0 need rows of 32 only, else F16 (as Q8_0).
		{"blk.0.ffn_up.weight", []uint64{384, 4}, FileQ5_0, gguf.TypeQ5_0},
		{"blk.0.ffn_up.weight", []uint64{96, 4}, FileQ4_0, gguf.TypeQ4_0},
		{"blk.0.ffn_up.weight", []uint64{300, 4}, FileQ5_0, gguf.TypeF16},
		{"blk.0.ffn_up.weight", []uint64{48, 4}, FileQ4_0, gguf.TypeF16},
		// IQ4_NL as Q4_0; IQ4_XS needs rows of 256, else IQ4_NL (llama.cpp's
		// fallback), else F16.
		{"blk.0.ffn_up.weight", []uint64{96, 4}, FileIQ4_NL, gguf.TypeIQ4_NL},
		{"blk.0.ffn_up.weight", []uint64{48, 4}, FileIQ4_NL, gguf.TypeF16},
		{"blk.0.ffn_up.weight", []uint64{512, 4}, FileIQ4_XS, gguf.TypeIQ4_XS},
		{"blk.0.ffn_up.weight", []uint64{384, 4}, FileIQ4_XS, gguf.TypeIQ4_NL},
		{"blk.0.ffn_up.weight", []uint64{300, 4}, FileIQ4_XS, gguf.TypeF16},
		{"blk.0.attn_norm.weight", []uint64{512}, FileIQ4_XS, gguf.TypeF32},
		{"blk.0.attn_norm.weight", []uint64{512}, FileQ4_0, gguf.TypeF32},
		{"blk.0.ssm_conv1d.weight", []uint64{256, 4}, FileQ3_K, gguf.TypeF32},
		{"blk.0.attn_norm.weight", []uint64{512}, FileQ4_K, gguf.TypeF32},
		{"blk.0.attn_q_norm.weight", []uint64{256, 2}, FileQ4_K, gguf.TypeF32},
		{"blk.0.ssm_conv1d.weight", []uint64{256, 4}, FileQ6_K, gguf.TypeF32},
		{"blk.0.ssm_a", []uint64{256, 2}, FileQ4_K, gguf.TypeF32},
	} {
		e := &Entry{Name: c.name, Shape: c.shape}
		if got := TensorType(spec, e, c.ft); got != c.want {
			t.Errorf("%s %v %v: %v, want %v", c.name, c.shape, c.ft, got, c.want)
		}
	}
}

// TestQuantizeRowsSplit: the row-parallel quantisation writes the same
// bytes as one gguf.Quantize call over the whole chunk, for every type.
func TestQuantizeRowsSplit(t *testing.T) {
	const rows, cols = 37, 512
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, typ := range []gguf.Type{gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ5_0, gguf.TypeQ4_0,
		gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS} {
		nb, err := gguf.RowBytes(typ, int64(len(x)))
		if err != nil {
			t.Fatal(err)
		}
		want, got := make([]byte, nb), make([]byte, nb)
		if err := gguf.Quantize(typ, x, want); err != nil {
			t.Fatal(err)
		}
		if err := quantizeRows(typ, x, got, rows); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%v: row-parallel bytes differ from one Quantize call", typ)
		}
	}
}
