package gpu

import (
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
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
