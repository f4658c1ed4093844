package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestLaidColsOnlyWhatThePlanLays: the chunk's laid-out inputs (lx) are
// sized for the matrices the plan lays out, not for every matrix that has a
// laid kernel: a q8_0 model whose launches all stage or read global memory
// allocates none.
func TestLaidColsOnlyWhatThePlanLays(t *testing.T) {
	q8 := func(rows, cols int, scales uint64) dtensor {
		// Lane-order scales where the wide kernel runs it, as upload.go stores them.
		return dtensor{name: "w", ptr: 0x10000, scales: cuda.DevPtr(scales), typ: gguf.TypeQ8_0, rows: rows, cols: cols,
			laneScales: MatvecWide(gguf.TypeQ8_0, rows, cols)}
	}
	// stageMax 200,000 bytes: 8 tokens of 4,096 columns (131,072 bytes)
	// stage and of 12,288 (393,216) do not, as within the H100's and
	// H200's 227 KiB a block.
	plan := &prefillPlan{tokens: 8, stageMax: 200_000, sms: 132}
	for _, tc := range []struct {
		name string
		pf   *prefillPlan
		ws   []dtensor
		want int
	}{
		// 9B: gate|up 24576 × 4096 stages; down 4096 × 12288 is laid out.
		{"9b q8_0", plan, []dtensor{q8(24576, 4096, 0x20000), q8(4096, 12288, 0x20000)}, 12288},
		// 0.8B: gate|up 7168 × 1024 stages; down 1024 × 3584 takes one
		// unit a block (128 units on 132 SMs) and reads global memory.
		{"0.8b q8_0", plan, []dtensor{q8(7168, 1024, 0x20000), q8(1024, 3584, 0x20000)}, 0},
		// The rings read scales as 4-byte words: misaligned ones are not laid.
		{"misaligned scales", plan, []dtensor{q8(4096, 12288, 0x20002)}, 0},
		{"bf16", plan, []dtensor{{name: "w", ptr: 0x10000, typ: gguf.TypeBF16, rows: 4096, cols: 12288}}, 0},
		{"no plan", nil, []dtensor{q8(4096, 12288, 0x20000)}, 0},
	} {
		g := &Model{pf: tc.pf, ls: []layerWeights{{kind: model.LayerRecurrent, ffnDown: tc.ws[len(tc.ws)-1]}}}
		if len(tc.ws) > 1 {
			g.ls[0].ffnGateUp = tc.ws[0]
		}
		if got := g.laidCols(); got != tc.want {
			t.Errorf("%s: laidCols %d, want %d", tc.name, got, tc.want)
		}
		if tc.pf == nil {
			continue
		}
		var laid int
		for _, w := range g.ls[0].matrices() {
			if tc.pf.from(w) == fromLaid {
				laid++
			}
		}
		ch := &chunk{}
		hasLX := false
		for _, f := range g.chunkFields(ch) {
			if f.base == &ch.lx {
				hasLX = true
			}
		}
		if hasLX != (laid > 0) {
			t.Errorf("%s: %d laid launches, but the chunk's fields include lx: %v", tc.name, laid, hasLX)
		}
	}
}

// TestBatchKernelIndex: batchKernel finds, for every variant the spec
// builds, the kernel a search of kernels.MatvecBatchKernels in order
// finds first, none for a variant the spec lacks, and allocates nothing
// (a chunk calls it two or three times a launch).
func TestBatchKernelIndex(t *testing.T) {
	search := func(v MatvecBatchVariant) (kernels.MatvecBatchKernel, bool) {
		for _, bk := range kernels.MatvecBatchKernels() {
			if bk.GgmlType == v.GgmlType && b2i(bk.Wide) == v.Wide && b2i(bk.Staged) == v.Staged && b2i(bk.Laid) == v.Laid {
				return bk, true
			}
		}
		return kernels.MatvecBatchKernel{}, false
	}
	vs := MatvecBatchVariants()
	if len(vs) == 0 {
		t.Fatal("the spec builds no batch variant")
	}
	for _, v := range append(vs, MatvecBatchVariant{GgmlType: 9999}, MatvecBatchVariant{GgmlType: 8, Wide: 1, Staged: 1, Laid: 1}) {
		got, ok := batchKernel(v)
		want, wantOK := search(v)
		if ok != wantOK || got.Name != want.Name {
			t.Errorf("variant %+v: %q %v, want %q %v", v, got.Name, ok, want.Name, wantOK)
		}
	}
	if n := testing.AllocsPerRun(100, func() { batchKernel(vs[len(vs)-1]) }); n != 0 {
		t.Errorf("batchKernel allocates %v times a call", n)
	}
}

// TestMatvecKernelIndex: matvecKernel finds, for every variant the spec
// builds, the kernel a search of kernels.MatvecKernels in order finds
// first, none for a variant the spec lacks, and allocates nothing.
func TestMatvecKernelIndex(t *testing.T) {
	search := func(v MatvecVariant) (kernels.MatvecKernel, bool) {
		for _, mk := range kernels.MatvecKernels() {
			if mk.GgmlType == v.GgmlType && mk.WideKey() == v.Wide && b2i(mk.Lean) == v.Lean {
				return mk, true
			}
		}
		return kernels.MatvecKernel{}, false
	}
	vs := MatvecVariants()
	if len(vs) == 0 {
		t.Fatal("the spec builds no matvec variant")
	}
	for _, v := range append(vs, MatvecVariant{GgmlType: 9999}, MatvecVariant{GgmlType: 8, Wide: 2, Lean: 1}) {
		got, ok := matvecKernel(v)
		want, wantOK := search(v)
		if ok != wantOK || got != want {
			t.Errorf("variant %+v: %q %v, want %q %v", v, got.Name, ok, want.Name, wantOK)
		}
	}
	if n := testing.AllocsPerRun(100, func() { matvecKernel(vs[len(vs)-1]) }); n != 0 {
		t.Errorf("matvecKernel allocates %v times a call", n)
	}
}

// TestLoadRefusesPrefillChunk: a chunk length outside 2 to MaxPrefillChunk
// (0 asks for the default) is refused before Load touches the device, with
// the range in the error.
func TestLoadRefusesPrefillChunk(t *testing.T) {
	m := modeltest.Load(t, gpuTinySpec(gguf.TypeBF16, false, 3))
	for _, n := range []int{-1, 1, MaxPrefillChunk + 1} {
		_, err := Load(nil, m, Options{PrefillChunk: n}, nil)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a prefill chunk of %d tokens: give 2 to %d", n, MaxPrefillChunk)) {
			t.Errorf("PrefillChunk %d: %v", n, err)
		}
	}
}

// TestBatchBlocks: a launch's passes share the resident blocks, each pass
// at least one block and never more than its rows need (the 0.8B's 7168 ×
// 1024 bf16 at 16 rows a block on an H100's 132 resident blocks), and with
// the residents unknown every row's block.
func TestBatchBlocks(t *testing.T) {
	for _, c := range []struct{ rows, n, perBlock, resident, want int }{
		{7168, 1, 16, 132, 132},
		{7168, 8, 16, 132, 132},
		{7168, 9, 16, 132, 66},
		{7168, 32, 16, 132, 33},
		{7168, 32, 16, 0, 448},
		{1024, 32, 4, 264, 66},
		{40, 32, 16, 132, 3},     // fewer rows than a pass's share
		{7168, 32, 16, 2, 1},     // fewer residents than passes
		{7169, 8, 16, 1000, 449}, // a last block for the odd row
	} {
		if got := batchBlocks(c.rows, c.n, c.perBlock, c.resident); got != c.want {
			t.Errorf("batchBlocks(rows %d, n %d, %d a block, %d resident) = %d, want %d", c.rows, c.n, c.perBlock, c.resident, got, c.want)
		}
	}
}
