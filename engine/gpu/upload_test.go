package gpu

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/ktile"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestSplit checks the split device layout on hand-built blocks: q8_0's
// block b has its f16 d at bytes 0-1 and 32 quants after it. The f16 lands at
// s[2b:2b+2], the rest, in order, at w[b·payload:], and unpack restores the
// GGUF bytes.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		typ         gguf.Type
		block, side int
	}{{gguf.TypeQ8_0, 34, 0}} {
		l, ok := splitOf(tc.typ)
		if !ok || l.block != tc.block || l.side != tc.side {
			t.Fatalf("%v: splitOf = %+v, %v", tc.typ, l, ok)
		}
		const n = 3
		src := make([]byte, n*l.block)
		var wantW, wantS []byte
		for b := range n {
			blk := src[b*l.block : (b+1)*l.block]
			for j := range blk {
				blk[j] = byte(7*b + j + 1)
			}
			wantS = append(wantS, blk[tc.side], blk[tc.side+1])
			wantW = append(wantW, blk[:tc.side]...)
			wantW = append(wantW, blk[tc.side+2:]...)
		}
		w, s := make([]byte, l.payload()*n), make([]byte, 2*n)
		l.repack(w, s, src)
		if !bytes.Equal(s, wantS) || !bytes.Equal(w, wantW) {
			t.Fatalf("%v: repack gave side % x / payload % x…, want % x / % x…", tc.typ, s, w[:8], wantS, wantW[:8])
		}
		if wb, sb := l.rowBytes(2*l.values, false); wb != 2*l.payload() || sb != 4 {
			t.Fatalf("%v: rowBytes = %d, %d", tc.typ, wb, sb)
		}
		back := make([]byte, len(src))
		l.unpack(back, w, s)
		if !bytes.Equal(back, src) {
			t.Fatalf("%v: unpack(repack(x)) != x", tc.typ)
		}
	}
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeBF16, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K} {
		if _, ok := splitOf(typ); ok {
			t.Errorf("%v is split; its blocks keep 16-byte alignment or are tiled", typ)
		}
	}
}

// TestLaneOrder checks the lane-ordered q8_0 scales against how
// matvec_q8_0_wide reads them (matvec.cu): lane c0 of the 128 that split a
// row reads chunks c0, c0 + 128, ... (16 quants each, block c/2), and for
// trip t the scale at (c0/2)·tp + t of its row; a trip of two chunks (t
// even, both in the row) takes both scales in one 4-byte load, so that
// index must be even there. Every block's scale must be where its reader
// looks, the padding zero, the stride what rowBytes says, and Q8PlainOrder
// Q8LaneOrder's inverse. Widths: one trip (plain order), the 0.8B and 9B
// widths (3,584 pads), odd trip counts, and a width below one pair per lane.
func TestLaneOrder(t *testing.T) {
	l, _ := splitOf(gguf.TypeQ8_0)
	// The strides the layout promises, in f16s: plain where a pair has one
	// trip (≤ 64 blocks), else 64 pairs × the trips rounded up to even.
	wantStride := map[int]int{32: 1, 1024: 32, 2048: 64, 2080: 128, 3584: 128, 4096: 128, 6144: 256, 8192: 256, 12288: 384}
	for _, cols := range []int{32, 1024, 2048, 2080, 3584, 4096, 6144, 8192, 12288} {
		nb := cols / 32
		plain := make([]byte, 2*nb)
		for b := range nb {
			plain[2*b], plain[2*b+1] = byte(b), byte(b>>8)|0x80 // never zero: padding is
		}
		_, sb := l.rowBytes(cols, true)
		lane := make([]byte, sb)
		for i := range lane {
			lane[i] = 0xee // Q8LaneOrder must clear what it does not fill
		}
		kernels.Q8LaneOrder(lane, plain, cols)
		tp, stride := kernels.Q8LaneLayout(cols)
		if stride != wantStride[cols] {
			t.Fatalf("cols %d: stride %d f16s, want %d", cols, stride, wantStride[cols])
		}
		if sb != 2*stride || stride < nb {
			t.Fatalf("cols %d: rowBytes side %d, layout stride %d, %d blocks", cols, sb, stride, nb)
		}
		const lanes = 2 * kernels.Q8LanePairs // KW·32 of the wide kernel
		seen := make([]bool, stride)
		for c0 := range lanes {
			chunks := 0
			for c := c0; c < 2*nb; c += lanes {
				chunks++
			}
			for tr := 0; tr < chunks; tr++ {
				c := c0 + lanes*tr
				idx := c0/2*tp + tr
				if idx >= stride {
					t.Fatalf("cols %d lane %d trip %d: index %d past the row's %d", cols, c0, tr, idx, stride)
				}
				if got, want := lane[2*idx:2*idx+2], plain[c/2*2:c/2*2+2]; !bytes.Equal(got, want) {
					t.Fatalf("cols %d lane %d trip %d: scale % x, want block %d's % x", cols, c0, tr, got, c/2, want)
				}
				if tr%2 == 0 && tr+1 < chunks && idx%2 != 0 {
					t.Fatalf("cols %d lane %d trip %d: a two-trip word at odd index %d", cols, c0, tr, idx)
				}
				seen[idx] = true
			}
		}
		for i, ok := range seen {
			if !ok && (lane[2*i] != 0 || lane[2*i+1] != 0) {
				t.Fatalf("cols %d: padding at %d is % x", cols, i, lane[2*i:2*i+2])
			}
		}
		back := make([]byte, 2*nb)
		kernels.Q8PlainOrder(back, lane, cols)
		if !bytes.Equal(back, plain) {
			t.Fatalf("cols %d: kernels.Q8PlainOrder(kernels.Q8LaneOrder(s)) != s", cols)
		}
		if tp == 1 && !bytes.Equal(lane, plain) {
			t.Fatalf("cols %d: one trip, yet not the plain order", cols)
		}
	}
}

// TestLaneScalesKernel: the engine stores lane order exactly for the
// matrices the kernel that reads it runs (the wide q8_0 one), and an
// embedding-sized q8_0 table kept plain takes the plain kernel.
func TestLaneScalesKernel(t *testing.T) {
	for _, mk := range kernels.MatvecKernels() {
		if mk.LaneScales() != (mk.GgmlType == int(gguf.TypeQ8_0) && mk.Wide) {
			t.Errorf("%s: LaneScales %v", mk.Name, mk.LaneScales())
		}
	}
	for _, sh := range [][2]int{{16, 1024}, {4096, 1024}, {5120, 1024}, {5120, 6144}, {5121, 6144}, {248320, 1024}} {
		rows, cols := sh[0], sh[1]
		lane := laneScales(gguf.TypeQ8_0, rows, cols)
		d := dtensor{typ: gguf.TypeQ8_0, rows: rows, cols: cols, laneScales: lane}
		if d.wide() != MatvecWide(gguf.TypeQ8_0, rows, cols) {
			t.Errorf("%d × %d: wide %v, MatvecWide %v", rows, cols, d.wide(), MatvecWide(gguf.TypeQ8_0, rows, cols))
		}
		d.laneScales = false // a table's plain scales
		if d.wide() {
			t.Errorf("%d × %d with plain scales takes the wide kernel, which reads lane order", rows, cols)
		}
	}
	if laneScales(gguf.TypeBF16, 16, 1024) {
		t.Error("bf16 has no scales to order")
	}
	// The wave form takes the 4,096-row matrices (step 57), the wide one the
	// 0.8B's 1,024-row ones and, past 4,096 rows, the 27B's 5,120-row ones
	// of long rows (step 95); the plain one the rest: the 0.8B's and 2B's
	// fused 5,120-row attention q|k|v (1,024 and 2,048 columns) and the
	// 9B's 10,240- and 12,352-row matrices, which lost on the wide kernel.
	for _, c := range [][3]int{
		{1024, 3584, 1}, {2048, 4096, 1}, {2049, 4096, 2}, {4096, 4096, 2}, {4096, 12288, 2},
		{4097, 6144, 1}, {5120, 6144, 1}, {5120, 17408, 1}, {5121, 17408, 0},
		{5120, 1024, 0}, {5120, 2048, 0}, {5120, 4096, 0}, {10240, 4096, 0}, {12352, 4096, 0},
	} {
		rows, cols, want := c[0], c[1], c[2]
		d := dtensor{typ: gguf.TypeQ8_0, rows: rows, cols: cols, laneScales: laneScales(gguf.TypeQ8_0, rows, cols)}
		if got := d.wideKey(); got != want {
			t.Errorf("q8_0 %d × %d: wide key %d, want %d", rows, cols, got, want)
		}
	}
	// Q4_K's wave form takes the 4,096- and 5,120-row matrices of long rows
	// only (steps 74 and 95); every K-quant has q8_0's bound past 4,096 rows
	// (the 27B's 5,120 rows of 6,144 and 17,408 columns wide, steps 95 and
	// 96; the 0.8B and 2B's 5,120-row q|k|v plain, measured for q8_0 only);
	// Q5_K and Q6_K have no wave form; bf16's stop at 2,048.
	for _, c := range []struct {
		typ             gguf.Type
		rows, cols, key int
	}{
		{gguf.TypeQ4_K, 4096, 12288, 2}, {gguf.TypeQ4_K, 4096, 4096, 1}, {gguf.TypeQ4_K, 1024, 12288, 1},
		{gguf.TypeQ4_K, 5120, 17408, 2}, {gguf.TypeQ4_K, 5120, 6144, 1}, {gguf.TypeQ4_K, 5121, 17408, 0},
		{gguf.TypeQ4_K, 5120, 1024, 0}, {gguf.TypeQ4_K, 5120, 2048, 0},
		{gguf.TypeQ6_K, 4096, 12288, 1}, {gguf.TypeQ5_K, 4096, 12288, 1},
		{gguf.TypeQ6_K, 5120, 17408, 1}, {gguf.TypeQ6_K, 5120, 6144, 1}, {gguf.TypeQ6_K, 5121, 17408, 0}, {gguf.TypeQ6_K, 5120, 2048, 0},
		{gguf.TypeQ5_K, 5120, 17408, 1}, {gguf.TypeQ5_K, 5120, 6144, 1}, {gguf.TypeQ5_K, 5121, 17408, 0}, {gguf.TypeQ5_K, 5120, 1024, 0},
		{gguf.TypeBF16, 2048, 6144, 1}, {gguf.TypeBF16, 5120, 17408, 0},
	} {
		d := dtensor{typ: c.typ, rows: c.rows, cols: c.cols}
		if got := d.wideKey(); got != c.key {
			t.Errorf("%v %d × %d: wide key %d, want %d", c.typ, c.rows, c.cols, got, c.key)
		}
	}
}

// TestTiledShapesKeys: a tensor-core matrix is recorded under the kernel its
// wide key picks, and under the plain one,
// so that matvecGrids allows exactly those kernels its shared memory (run165's
// kernel test failed at launch where its harness had not allowed the wave
// kernel; this checks the engine's side).
func TestTiledShapesKeys(t *testing.T) {
	for _, c := range []struct {
		typ        gguf.Type
		rows, cols int
		keys       []int
	}{
		{gguf.TypeQ4_K, 4096, 12288, []int{0, 2}},
		{gguf.TypeQ4_K, 4096, 4096, []int{0, 1}},
		{gguf.TypeQ4_K, 1024, 12288, []int{0, 1}},
		{gguf.TypeQ4_K, 8192, 12288, []int{0}},
		{gguf.TypeQ6_K, 4096, 12288, []int{0, 1}},
		{gguf.TypeQ5_K, 4096, 12288, []int{0, 1}},
	} {
		ts := tiledShapes{}
		ts.add(c.typ, c.rows, c.cols, "m")
		var got []int
		for k := range 3 {
			if _, ok := ts[MatvecVariant{GgmlType: int(c.typ), Wide: k}][c.cols]; ok {
				got = append(got, k)
			}
		}
		if !slices.Equal(got, c.keys) {
			t.Errorf("%v %d × %d: recorded under wide keys %v, want %v", c.typ, c.rows, c.cols, got, c.keys)
		}
		d := dtensor{typ: c.typ, rows: c.rows, cols: c.cols}
		if k := d.wideKey(); !slices.Contains(got, k) {
			t.Errorf("%v %d × %d: runs wide key %d, not recorded", c.typ, c.rows, c.cols, k)
		}
	}
}

// TestTiledLaunchesFused: in a Q4_K model 8,448 columns wide, q (2,048
// rows), k and v (512) and gate and up (1,536) each take the wide kernel,
// but Load fuses them into 3,072-row matrices, which take its wave form
// (MatvecWave: Q4_K past 2,048 rows and 8,192 columns). tiledLaunches must
// record the wave kernel at that width, so that matvecGrids allows it the
// 72,736 bytes of shared memory it needs (a launch gets 48 KiB unasked);
// recorded from the tensors alone, it was not, and the first step's
// launch of the fused matrix failed.
func TestTiledLaunchesFused(t *testing.T) {
	const cols = 8448 // 33 superblocks
	q4 := func(name string, in, out int) *model.Tensor {
		return &model.Tensor{Name: name, Type: gguf.TypeQ4_K, Shape: []int{in, out}}
	}
	f32 := func(name string, n int) *model.Tensor {
		return &model.Tensor{Name: name, Type: gguf.TypeF32, Shape: []int{n}}
	}
	m := &model.Model{
		TokenEmbd:  q4("token_embd.weight", cols, 320),
		OutputNorm: f32("output_norm.weight", cols),
		Layers: []model.Layer{{
			Kind:     model.LayerAttention,
			AttnNorm: f32("blk.0.attn_norm.weight", cols), FFNNorm: f32("blk.0.ffn_norm.weight", cols),
			AttnQ: q4("blk.0.attn_q.weight", cols, 2048), AttnK: q4("blk.0.attn_k.weight", cols, 512),
			AttnV: q4("blk.0.attn_v.weight", cols, 512), AttnOutput: q4("blk.0.attn_output.weight", 2048, cols),
			AttnQNorm: f32("blk.0.attn_q_norm.weight", 256), AttnKNorm: f32("blk.0.attn_k_norm.weight", 256),
			FFNGate: q4("blk.0.ffn_gate.weight", cols, 1536), FFNUp: q4("blk.0.ffn_up.weight", cols, 1536),
			FFNDown: q4("blk.0.ffn_down.weight", 1536, cols),
		}},
	}
	m.Output = m.TokenEmbd
	wave := MatvecVariant{GgmlType: int(gguf.TypeQ4_K), Wide: 2}
	for _, rows := range []int{2048, 1536, 512} {
		if k := matvecKey(gguf.TypeQ4_K, rows, cols); k != 1 {
			t.Fatalf("%d × %d: wide key %d; the test wants parts on the wide kernel (1)", rows, cols, k)
		}
	}
	if k := matvecKey(gguf.TypeQ4_K, 3072, cols); k != 2 {
		t.Fatalf("3072 × %d: wide key %d; the test wants the fused matrices on the wave form (2)", cols, k)
	}
	ts := tiledLaunches(m)
	name, ok := ts[wave][cols]
	if !ok {
		t.Fatalf("the wave kernel is not recorded at %d columns (recorded: %v)", cols, ts)
	}
	if name != "blk.0.ffn_gate.weight|up" {
		t.Errorf("recorded as %q, want the fused gate|up (the first fused matrix Load uploads)", name)
	}

	// Parts that do not fuse (up of another type) record only their own
	// kernels: q|k|v alone now takes the wave form.
	m.Layers[0].FFNUp.Type = gguf.TypeQ6_K
	if name := tiledLaunches(m)[wave][cols]; name != "blk.0.attn_q.weight+" {
		t.Errorf("with gate and up apart: wave kernel recorded as %q, want the fused q|k|v", name)
	}
	m.Layers[0].AttnK.Type = gguf.TypeQ6_K
	if name, ok := tiledLaunches(m)[wave][cols]; ok {
		t.Errorf("with nothing fused: the wave kernel is recorded (as %q), which no launch runs", name)
	}
	// v of another type: q|k still fuse, 2,560 rows on the wave form.
	m.Layers[0].AttnK.Type, m.Layers[0].AttnV.Type = gguf.TypeQ4_K, gguf.TypeQ6_K
	if name := tiledLaunches(m)[wave][cols]; name != "blk.0.attn_q.weight+" {
		t.Errorf("with v apart: wave kernel recorded as %q, want the fused q|k", name)
	}
}

// TestFusionRuns: which of the matrices that read one input Load uploads
// as one matrix (fusion.runs): runs of consecutive parts of one device type
// and row length, a tiled part that is not whole tiles only last in its
// run, and the FFN's pair whole or not at all.
func TestFusionRuns(t *testing.T) {
	const cols = 1024
	mat := func(typ gguf.Type, rows int) *model.Tensor {
		return &model.Tensor{Name: "m", Type: typ, Shape: []int{cols, rows}}
	}
	Q4, Q5, Q6, Q8, Q50 := gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_0, gguf.TypeQ5_0
	for _, c := range []struct {
		name  string
		pair  bool
		parts []*model.Tensor
		want  [][]int
	}{
		{"one type", false, []*model.Tensor{mat(Q4, 8192), mat(Q4, 4096), mat(Q4, 32), mat(Q4, 32)}, [][]int{{0, 1, 2, 3}}},
		// A llama.cpp Q4_K_M Gated DeltaNet layer: attn_qkv Q6_K where
		// use_more_bits, Q5_K in files from before March 2026.
		{"q4_k_m gdn", false, []*model.Tensor{mat(Q6, 8192), mat(Q4, 4096), mat(Q4, 32), mat(Q4, 32)}, [][]int{{0}, {1, 2, 3}}},
		{"old q4_k_m gdn", false, []*model.Tensor{mat(Q5, 8192), mat(Q4, 4096), mat(Q4, 32), mat(Q4, 32)}, [][]int{{0}, {1, 2, 3}}},
		// Its attention layers where attn_v is Q6_K.
		{"q4_k_m attention", false, []*model.Tensor{mat(Q4, 8192), mat(Q4, 1024), mat(Q6, 1024)}, [][]int{{0, 1}, {2}}},
		{"last apart", false, []*model.Tensor{mat(Q4, 1024), mat(Q4, 512), mat(Q4, 32), mat(Q8, 32)}, [][]int{{0, 1, 2}, {3}}},
		{"middle apart", false, []*model.Tensor{mat(Q4, 1024), mat(Q5, 512), mat(Q4, 32), mat(Q4, 32)}, [][]int{{0}, {1}, {2, 3}}},
		// beta's 4 rows are not a whole tile (16): it ends its run.
		{"part tile", false, []*model.Tensor{mat(Q4, 1024), mat(Q4, 512), mat(Q4, 4), mat(Q4, 4)}, [][]int{{0, 1, 2}, {3}}},
		// Row-major types have no tile rule; Q5_0 is Q8_0 on the device.
		{"untiled", false, []*model.Tensor{mat(Q4, 1024), mat(Q6, 512), mat(Q8, 4), mat(Q50, 4)}, [][]int{{0}, {1}, {2, 3}}},
		{"pair", true, []*model.Tensor{mat(Q4, 3584), mat(Q4, 3584)}, [][]int{{0, 1}}},
		{"pair apart", true, []*model.Tensor{mat(Q4, 3584), mat(Q6, 3584)}, [][]int{{0}, {1}}},
	} {
		f := fusion{pair: c.pair, parts: c.parts}
		if got := f.runs(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: runs %v, want %v", c.name, got, c.want)
		}
	}
}

// TestContiguous: rows of one backing array in order come back as one slice;
// reordered or foreign rows are refused (they must be staged).
func TestContiguous(t *testing.T) {
	data := make([]byte, 40)
	other := make([]byte, 40)
	rows := func(src ...[]byte) func(int) []byte { return func(i int) []byte { return src[i] } }
	if run, ok := contiguous(rows(data[0:10], data[10:20], data[20:30]), 0, 3, 10); !ok || len(run) != 30 {
		t.Fatalf("in-order rows: ok=%v len=%d", ok, len(run))
	}
	if _, ok := contiguous(rows(data[10:20], data[0:10]), 0, 2, 10); ok {
		t.Fatal("reversed rows accepted")
	}
	if _, ok := contiguous(rows(data[0:10], other[10:20], data[20:30]), 0, 3, 10); ok {
		t.Fatal("a foreign middle row accepted")
	}
}

// TestSupportedTypes: a model typed like a mixed K-quant file passes the
// GPU's load check, and so do one with the types Load recodes and an IQ4_XS
// one; one Q2_K
// matrix (which has no kernel and no exact wider form) fails it with an
// error naming the tensor, its type and what to do.
func TestSupportedTypes(t *testing.T) {
	s := gpuTinySpec(gguf.TypeQ4_K, false, 3)
	s.Type = recodeMix
	if err := supported(modeltest.Load(t, s)); err != nil {
		t.Fatalf("model of recoded types: %v", err)
	}
	s.Type = kMix
	if err := supported(modeltest.Load(t, s)); err != nil {
		t.Fatalf("mixed K-quant model: %v", err)
	}
	s.Type = func(string) gguf.Type { return gguf.TypeIQ4_NL }
	if err := supported(modeltest.Load(t, s)); err != nil {
		t.Fatalf("IQ4_NL model: %v", err)
	}
	for _, typ := range []gguf.Type{gguf.TypeIQ4_XS, gguf.TypeQ4_0} {
		s.Type = func(string) gguf.Type { return typ }
		if err := supported(modeltest.Load(t, s)); err != nil {
			t.Fatalf("%v model: %v", typ, err)
		}
	}
	s.Type = func(name string) gguf.Type {
		if name == "blk.1.ffn_up.weight" {
			return gguf.TypeQ2_K
		}
		return kMix(name)
	}
	err := supported(modeltest.Load(t, s))
	if err == nil {
		t.Fatal("a Q2_K matrix was accepted")
	}
	for _, want := range []string{"blk.1.ffn_up.weight is Q2_K", "Q6_K, IQ4_XS, Q4_0 and IQ4_NL, and Q5_0 as Q8_0", "--device cpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestSupportedDims: the GPU's load check refuses a model whose dimensions
// the kernels are not built for, naming the key, its value and what the
// kernels take: an attention head dim but 64, 128 and 256 (attention.cu's
// splits, attn_prep.cu's 256-thread blocks), a Gated DeltaNet K or V head
// dim but 128 (gdn.cu's state [H_v][128][128]). Those the kernels take pass,
// and the Gated DeltaNet dims of a qwen35 file with no recurrent layer, which
// no kernel reads, do not matter.
func TestSupportedDims(t *testing.T) {
	qwen3 := func(dh int) modeltest.Spec {
		s := modeltest.TinyQwen3()
		s.HeadDim, s.NRot = dh, dh
		return s
	}
	qwen35 := func(state, dv int) modeltest.Spec {
		s := gpuTinySpec(gguf.TypeF32, false, 3)
		s.StateSize, s.HeadDimV = state, dv
		return s
	}
	allAttention := modeltest.TinyQwen35() // head dim 64, state 32, V head dim 64
	allAttention.Interval = 1
	for _, c := range []struct {
		name string
		s    modeltest.Spec
		want []string // nil: accepted
	}{
		{"qwen3 head dim 64", qwen3(64), nil},
		{"qwen3 head dim 128", qwen3(128), nil},
		{"qwen35 head dim 256, Gated DeltaNet 128", qwen35(128, 128), nil},
		{"qwen35 every layer attention", allAttention, nil},
		{"qwen3 head dim 96", qwen3(96), []string{"qwen3.attention.key_length", "head_dim 96", "[64 128 256]", "--device cpu"}},
		{"qwen3 head dim 32", qwen3(32), []string{"head_dim 32", "[64 128 256]"}},
		{"qwen35 state 64", qwen35(64, 128), []string{"K head dim 64", "qwen35.ssm.state_size", "built for 128", "--device cpu"}},
		{"qwen35 V head dim 64", qwen35(128, 64), []string{"V head dim 64", "ssm.inner_size 256 / ssm.time_step_rank 4", "built for 128"}},
	} {
		err := supported(modeltest.Load(t, c.s))
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != nil && err == nil:
			t.Errorf("%s: accepted", c.name)
		case c.want != nil:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not say %q", c.name, err, w)
				}
			}
		}
	}
}

// TestRowsViewSplit: a view of rows [first, first+n) of a split tensor
// starts first rows into both arrays (payload and side), an unsplit one
// first GGUF rows in, and a tiled (K-quant) one first/16 tile rows in.
func TestRowsViewSplit(t *testing.T) {
	const cols = 512 // two K-quant superblocks, 16 q8_0 blocks
	for _, tc := range []struct {
		typ          gguf.Type
		wRow, sRow   uint64 // device bytes per row in W and S
		unsplitBytes uint64
		lane         bool
	}{
		{gguf.TypeQ8_0, cols, cols / 32 * 2, 0, false},
		{gguf.TypeQ8_0, cols, cols / 32 * 2, 0, true}, // 16 blocks: one trip a lane, the plain stride
		{gguf.TypeBF16, 2 * cols, 0, 2 * cols, false},
	} {
		d := dtensor{name: "w", typ: tc.typ, rows: 40, cols: cols, ptr: 1 << 20, scales: 1 << 30, laneScales: tc.lane}
		v := d.rowsView("w[7:]", 7, 5)
		if v.rows != 5 || v.cols != cols || v.typ != tc.typ {
			t.Fatalf("%v: view %+v", tc.typ, v)
		}
		if tc.unsplitBytes != 0 {
			if v.ptr != d.ptr.Add(7*tc.unsplitBytes) {
				t.Errorf("%v: ptr %#x, want %#x", tc.typ, v.ptr, d.ptr.Add(7*tc.unsplitBytes))
			}
			continue
		}
		if v.ptr != d.ptr.Add(7*tc.wRow) || v.scales != d.scales.Add(7*tc.sRow) || v.laneScales != tc.lane {
			t.Errorf("%v: ptr %#x scales %#x lane %v, want %#x %#x %v", tc.typ, v.ptr, v.scales, v.laneScales, d.ptr.Add(7*tc.wRow), d.scales.Add(7*tc.sRow), tc.lane)
		}
	}
	// 3,584 columns (112 blocks) in lane order: two trips a pair, 128 f16s a row.
	d := dtensor{name: "w", typ: gguf.TypeQ8_0, rows: 40, cols: 3584, ptr: 1 << 20, scales: 1 << 30, laneScales: true}
	if v := d.rowsView("w[7:]", 7, 5); v.ptr != d.ptr.Add(7*3584) || v.scales != d.scales.Add(7*128*2) {
		t.Errorf("lane order, 3584 columns: ptr %#x scales %#x", v.ptr, v.scales)
	}
	for typ, tile := range map[gguf.Type]uint64{gguf.TypeQ4_K: 2368, gguf.TypeQ5_K: 2880, gguf.TypeQ6_K: 3360} {
		d := dtensor{name: "w", typ: typ, rows: 40, cols: cols, ptr: 1 << 20}
		v := d.rowsView("w[32:]", 32, 8)
		if want := d.ptr.Add(2 * 2 * tile); v.ptr != want || v.rows != 8 || v.cols != cols {
			t.Errorf("%v: view %+v, want ptr %#x", typ, v, want)
		}
	}
}

// TestMatvecShared: the grid caps (matvecGrids, matvec) look occupancy up
// by kernels.MatvecKernel.Shared, the launchers compute the shared memory
// from the spec's expression; they must agree for every kernel, or a cap
// would be measured for a launch that never happens.
func TestMatvecShared(t *testing.T) {
	geom := map[string]func(rows, cols, mode, xnorm, blocks int) ([3]int, int){
		"matvec_f32": geomMatvecF32, "matvec_f16": geomMatvecF16, "matvec_f16_wide": geomMatvecF16Wide,
		"matvec_bf16": geomMatvecBF16, "matvec_bf16_wide": geomMatvecBF16Wide, "matvec_q8_0": geomMatvecQ8_0,
		"matvec_q8_0_wide": geomMatvecQ8_0Wide, "matvec_q8_0_wave": geomMatvecQ8_0Wave, "matvec_q4_k": geomMatvecQ4K, "matvec_q4_k_wide": geomMatvecQ4KWide, "matvec_q4_k_wave": geomMatvecQ4KWave,
		"matvec_q5_k": geomMatvecQ5K, "matvec_q5_k_wide": geomMatvecQ5KWide, "matvec_q6_k": geomMatvecQ6K, "matvec_q6_k_wide": geomMatvecQ6KWide,
		"matvec_q4_k_lean": geomMatvecQ4KLean, "matvec_q4_k_wide_lean": geomMatvecQ4KWideLean, "matvec_q5_k_lean": geomMatvecQ5KLean,
		"matvec_q5_k_wide_lean": geomMatvecQ5KWideLean, "matvec_q6_k_lean": geomMatvecQ6KLean, "matvec_q6_k_wide_lean": geomMatvecQ6KWideLean,
		"matvec_q3_k": geomMatvecQ3K, "matvec_q3_k_wide": geomMatvecQ3KWide, "matvec_q3_k_lean": geomMatvecQ3KLean,
		"matvec_q3_k_wide_lean": geomMatvecQ3KWideLean, "matvec_iq4_xs": geomMatvecIQ4XS, "matvec_iq4_xs_wide": geomMatvecIQ4XSWide,
		"matvec_iq4_xs_lean": geomMatvecIQ4XSLean, "matvec_iq4_xs_wide_lean": geomMatvecIQ4XSWideLean,
		"matvec_q4_0": geomMatvecQ4_0, "matvec_q4_0_wide": geomMatvecQ4_0Wide, "matvec_q4_0_lean": geomMatvecQ4_0Lean,
		"matvec_q4_0_wide_lean": geomMatvecQ4_0WideLean, "matvec_iq4_nl": geomMatvecIQ4NL, "matvec_iq4_nl_wide": geomMatvecIQ4NLWide,
		"matvec_iq4_nl_lean": geomMatvecIQ4NLLean, "matvec_iq4_nl_wide_lean": geomMatvecIQ4NLWideLean,
	}
	for _, mk := range kernels.MatvecKernels() {
		f, ok := geom[mk.Name]
		if !ok {
			t.Errorf("%s: no launcher geometry listed here", mk.Name)
			continue
		}
		for _, cols := range []int{1024, 4096, 12288} {
			for _, xnorm := range []bool{false, true} {
				if _, sh := f(100, cols, 0, b2i(xnorm), 7); sh != mk.Shared(cols, xnorm) {
					t.Errorf("%s cols %d xnorm %v: launcher %d bytes, MatvecKernel.Shared %d", mk.Name, cols, xnorm, sh, mk.Shared(cols, xnorm))
				}
			}
		}
	}
}

// TestHostCountsMatchLaunchGrids: the host sizes the argmax partials
// (argmaxParts) and the top-k passes (topKBlocks) by the blocks those
// kernels launch, which the launchers compute from the spec's grids: a count
// below the grid would let the kernels write past the buffers.
func TestHostCountsMatchLaunchGrids(t *testing.T) {
	for _, n := range []int{1, 4095, 4096, 4097, 8191, 8192, 8193, 151936, 248320} {
		if g, _ := geomArgMaxPartial(n); argmaxParts(n) != g[0] {
			t.Errorf("n %d: argmaxParts %d, argmax_partial's grid %d blocks", n, argmaxParts(n), g[0])
		}
		if g, _ := geomTopKSelect(n); topKBlocks(n) != g[0] {
			t.Errorf("n %d: topKBlocks %d, topk_select's grid %d blocks", n, topKBlocks(n), g[0])
		}
	}
}

// TestStageTiles: staged through chunks of a few tile rows (a matrix of
// several chunks, the last one partial and its last tile padded), the bytes
// that reach the device are ktile's layout of the whole matrix, each chunk
// at its offset, and progress counts every GGUF byte once.
func TestStageTiles(t *testing.T) {
	const rows, cols = 16*7 + 5, 512
	rb := cols / 256 * 144
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]byte, rows*rb)
	for i := range src {
		src[i] = byte(r.IntN(256))
	}
	want := ktile.Q4K.Tile(src, rows, cols)
	got := make([]byte, len(want))
	for i := range got {
		got[i] = 0xAA // what the device held before
	}
	var stage staging
	var sent, done int64
	tileRow := cols / 256 * ktile.Q4K.Bytes
	err := stageTiles(ktile.Q4K, rows, cols, func(i int) []byte { return src[i*rb : (i+1)*rb] }, rb, 3*tileRow, &stage,
		func(off uint64, b []byte) error {
			if off%uint64(3*tileRow) != 0 || int(off)+len(b) > len(got) {
				t.Fatalf("chunk at %d, %d bytes: not on a 3-tile-row boundary inside %d bytes", off, len(b), len(got))
			}
			// The next chunk is tiled meanwhile: it must not be this buffer.
			before := bytes.Clone(b)
			time.Sleep(2 * time.Millisecond)
			if !bytes.Equal(b, before) {
				t.Fatalf("chunk at %d changed while it was being sent", off)
			}
			copy(got[off:], b)
			sent++
			return nil
		}, func(n int64) { done += n })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the staged chunks differ from ktile.Q4K.Tile of the whole matrix")
	}
	if sent != 3 || done != int64(len(src)) {
		t.Errorf("%d chunks, progress %d bytes; want 3 chunks, %d bytes", sent, done, len(src))
	}

	// A failed send stops the upload with its error, after the chunk being
	// tiled is done (nothing writes the buffers after the return), and the
	// same buffers serve the next upload.
	boom := errors.New("copy failed")
	calls := 0
	err = stageTiles(ktile.Q4K, rows, cols, func(i int) []byte { return src[i*rb : (i+1)*rb] }, rb, 3*tileRow, &stage,
		func(uint64, []byte) error {
			if calls++; calls == 2 {
				return boom
			}
			return nil
		}, func(int64) {})
	if !errors.Is(err, boom) || calls != 2 {
		t.Errorf("send failing at chunk 2: %v after %d calls", err, calls)
	}
}

// TestMatvecNeedsAlignedInput: the tensor-core matvec reads x and the norm
// weight 16 bytes at a time; a pointer that is not 16-byte aligned is an
// error naming the matrix before anything is launched.
func TestMatvecNeedsAlignedInput(t *testing.T) {
	g := &Model{}
	w := dtensor{name: "blk.0.ffn_down.weight", typ: gguf.TypeQ4_K, rows: 16, cols: 256}
	for _, c := range []struct{ x, norm cuda.DevPtr }{{0x1004, 0}, {0x1000, 0x2008}} {
		err := g.matvec(0, w, c.x, mvStore, c.norm)
		if err == nil || !strings.Contains(err.Error(), w.name) || !strings.Contains(err.Error(), "16-byte aligned") {
			t.Errorf("x %#x norm %#x: %v", c.x, c.norm, err)
		}
	}
}

// BenchmarkStageTiles is a K-quant upload on the host: a 9B gate|up-sized
// Q6_K matrix (24576 × 4096) tiled through the staging buffers, with send a
// copy of each chunk into host memory (as a synchronous copy from pageable
// memory goes through a host copy first). SetBytes: GGUF bytes.
func BenchmarkStageTiles(b *testing.B) {
	const rows, cols = 24576, 4096
	l := ktile.Q6K
	rb := cols / 256 * l.BlockBytes
	src := make([]byte, rows*rb)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range src {
		src[i] = byte(r.IntN(256))
	}
	dst := make([]byte, l.Size(rows, cols))
	var stage staging
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		err := stageTiles(l, rows, cols, func(i int) []byte { return src[i*rb : (i+1)*rb] }, rb, stageBytes, &stage,
			func(off uint64, c []byte) error { copy(dst[off:], c); return nil }, func(int64) {})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestDeviceType: Q4_0 and IQ4_NL keep their type on rows of whole
// 256-column tiles (their kernels') and are recoded as Q8_0 on others, which
// Fallbacks words as a row length their kernels do not take; Q5_0 is always
// recoded; other types keep theirs.
func TestDeviceType(t *testing.T) {
	for _, c := range []struct {
		typ  gguf.Type
		cols int
		want gguf.Type
	}{
		{gguf.TypeQ4_0, 256, gguf.TypeQ4_0}, {gguf.TypeQ4_0, 4096, gguf.TypeQ4_0}, {gguf.TypeQ4_0, 288, gguf.TypeQ8_0},
		{gguf.TypeIQ4_NL, 1024, gguf.TypeIQ4_NL}, {gguf.TypeIQ4_NL, 64, gguf.TypeQ8_0},
		{gguf.TypeQ5_0, 4096, gguf.TypeQ8_0}, {gguf.TypeQ4_K, 4096, gguf.TypeQ4_K}, {gguf.TypeBF16, 100, gguf.TypeBF16},
	} {
		if got := deviceType(c.typ, c.cols); got != c.want {
			t.Errorf("deviceType(%v, %d) = %v, want %v", c.typ, c.cols, got, c.want)
		}
	}
	var g Model
	g.recoded.note(&model.Tensor{Name: "blk.0.ffn_down.weight", Type: gguf.TypeQ4_0, Shape: []int{64, 2}, Data: make([]byte, 2*2*18)})
	f := g.Fallbacks()
	if len(f) != 1 || !strings.Contains(f[0], "blk.0.ffn_down.weight (Q4_0) is stored and read as Q8_0") ||
		!strings.Contains(f[0], "Q4_0 kernels take rows of whole 256-column tiles") {
		t.Errorf("Fallbacks %q: want a line naming the matrix, Q8_0 and the row length", f)
	}
}

// TestRecodedRows: recoded gives each row as gguf.Recode writes it in the
// device type, in a buffer of its own (the tilers keep no row, but may run
// in parallel), and reports a row it cannot recode once, naming the row,
// which comes back zero.
func TestRecodedRows(t *testing.T) {
	const rows, cols = 5, 512
	r := rand.New(rand.NewPCG(7, 8))
	rb := cols / 32 * 22
	src := make([]byte, rows*rb)
	for i := range src {
		src[i] = byte(r.IntN(256))
	}
	rowOf := func(i int) []byte { return src[i*rb : (i+1)*rb] }
	var fails []error
	want := make([]byte, cols/32*34)
	rec := recoded(gguf.TypeQ5_0, len(want), rowOf, func(err error) { fails = append(fails, err) })
	for i := range rows {
		if err := gguf.Recode(gguf.TypeQ8_0, want, gguf.TypeQ5_0, rowOf(i)); err != nil {
			t.Fatal(err)
		}
		got := rec(i)
		if !bytes.Equal(got, want) {
			t.Fatalf("row %d differs from gguf.Recode's", i)
		}
		if &got[0] == &rec(i)[0] {
			t.Fatalf("row %d: two calls share a buffer", i)
		}
	}
	if len(fails) != 0 {
		t.Fatalf("rows of the right size failed: %v", fails)
	}
	short := recoded(gguf.TypeQ5_0, len(want), func(i int) []byte { return src[:rb-1] }, func(err error) { fails = append(fails, err) })
	if row := short(3); !bytes.Equal(row, make([]byte, len(want))) {
		t.Error("a row that did not recode is not zero")
	}
	short(4)
	if len(fails) != 1 || !strings.Contains(fails[0].Error(), "row 3") {
		t.Errorf("a short row: failures %v, want one naming row 3", fails)
	}
}

// TestRecodedLayout: the device sees a recoded model as a file of the wider
// types: its step reads what such a file's model.WeightBytes counts (and a
// model of the GPU's own types what its file does), parts recoded to one
// type fuse (recodeMix's FFN gate Q5_0 with up Q8_0, and q|k|v of Q5_0 and
// Q8_0), and the tensor-core kernels are recorded under the tiled types' own
// types only.
func TestRecodedLayout(t *testing.T) {
	s := gpuTinySpec(gguf.TypeQ4_K, false, 3)
	s.Type = recodeMix
	m := modeltest.Load(t, s)
	wide := s
	wide.Type = func(name string) gguf.Type { return deviceType(recodeMix(name), ktile.Cols) } // gpuTinySpec's rows are whole tiles
	mw := modeltest.Load(t, wide)
	if got, want := deviceStepBytes(m), uint64(mw.WeightBytes()); got != want {
		t.Errorf("recoded model: the step reads %d bytes, want %d (the wider file's)", got, want)
	}
	if got := deviceStepBytes(m); got <= uint64(m.WeightBytes()) {
		t.Errorf("recoded model: the step reads %d bytes, no more than its file's %d", got, m.WeightBytes())
	}
	if got, want := deviceStepBytes(mw), uint64(mw.WeightBytes()); got != want {
		t.Errorf("a model of the GPU's own types: the step reads %d bytes, want its file's %d", got, want)
	}
	var attn, gdn *model.Layer
	for i := range m.Layers {
		if L := &m.Layers[i]; L.Kind == model.LayerAttention {
			attn = L
		} else {
			gdn = L
		}
	}
	if attn == nil || gdn == nil {
		t.Fatal("the spec has not both kinds of layer")
	}
	if gdn.SSMOut.Type != gguf.TypeQ4_0 || deviceType(gdn.SSMOut.Type, gdn.SSMOut.Cols()) != gguf.TypeQ4_0 {
		t.Errorf("ssm_out %v: want Q4_0, on its own kernels", gdn.SSMOut.Type)
	}
	if !pairable(gdn.FFNGate, gdn.FFNUp) {
		t.Errorf("FFN gate %v and up %v (both Q8_0 on the device) do not pair", gdn.FFNGate.Type, gdn.FFNUp.Type)
	}
	if !fusable(attn.AttnQ, attn.AttnK, attn.AttnV) {
		t.Errorf("q %v, k %v, v %v (all Q8_0 on the device) do not fuse", attn.AttnQ.Type, attn.AttnK.Type, attn.AttnV.Type)
	}
	if fusable(gdn.AttnQKV, gdn.AttnGate, gdn.SSMBeta, gdn.SSMAlpha) {
		t.Error("the recurrent input projections (Q3_K, Q6_K, Q8_0, Q8_0 on the device) fuse")
	}
	ts := tiledLaunches(m)
	if len(ts) == 0 {
		t.Fatal("no tensor-core kernel recorded")
	}
	for v := range ts {
		if typ := gguf.Type(v.GgmlType); typ != gguf.TypeQ3_K && typ != gguf.TypeQ6_K && typ != gguf.TypeQ4_0 {
			t.Errorf("kernel %+v recorded; the model's tiled matrices are all Q3_K, Q6_K or Q4_0", v)
		}
	}
	var g Model
	for _, tn := range m.Tensors() {
		if deviceType(tn.Type, tn.Cols()) != tn.Type {
			g.recoded.note(tn)
		}
	}
	f := g.Fallbacks()
	if len(f) != 1 {
		t.Fatalf("fallbacks %q, want a line for Q5_0", f)
	}
	for _, l := range f {
		t.Log(l)
	}
	for i, want := range []string{"token_embd.weight and ", " more Q5_0 matrices are stored and read as Q8_0, which holds their values exactly",
		"the CUDA backend has no Q5_0 kernel"} {
		if i == 0 && !strings.HasPrefix(f[0], want) || !strings.Contains(f[0], want) {
			t.Errorf("%q does not say %q", f[0], want)
		}
	}
}
