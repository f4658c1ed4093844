package gpu

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestGPUKernelMatvecMix: every matvec_mix kernel gives each part, bit for
// bit, what the part's own kernel gives launched alone (itself checked
// against the CPU by TestGPUKernelMatvec), on random weights and inputs,
// with a block a unit and with a few blocks looping over the units, in
// both store and accumulate modes, with and without the fused norm; and it
// writes no row outside the parts'.
func TestGPUKernelMatvecMix(t *testing.T) {
	v := ktGPU(t)
	for i, sh := range []struct{ rowsA, rowsB, cols int }{
		{1024, 2080, 1024}, // the 0.8B's Gated DeltaNet qkv beside gate|beta|alpha, scaled down
		{512, 4608, 1024},  // the 0.8B's attention v beside q|k
		{37, 1003, 256},    // partial units in both parts
		{2050, 33, 2304},
		{8192, 4160, 4096}, // the 9B's Gated DeltaNet input projections
	} {
		for _, mk := range kernels.MatvecMixKernels() {
			pa, pb := mk.Parts()
			va, vb := variantOf(pa), variantOf(pb)
			fn, err := v.e.Function(v.mod, mk.Name)
			ktMust(t, err)
			static, err := v.e.FuncAttribute(fn, cuda.FuncSharedSizeBytes)
			ktMust(t, err)
			if need := mk.Shared(sh.cols); need > v.optin-static {
				t.Logf("%s at %d columns: needs %d bytes of shared memory, this GPU allows it %d", mk.Name, sh.cols, need, v.optin-static)
				continue
			}
			ktMust(t, v.e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, mk.Shared(sh.cols)))
			r := ktRand(uint64(7000 + 100*i + pb.GgmlType))
			wa := ktTensor(t, "a", gguf.Type(pa.GgmlType), ktUniform(r, sh.rowsA*sh.cols, -1, 1), sh.cols, sh.rowsA)
			wb := ktTensor(t, "b", gguf.Type(pb.GgmlType), ktUniform(r, sh.rowsB*sh.cols, -1, 1), sh.cols, sh.rowsB)
			dwa, _ := ktWeights(t, v, wa, 0, false)
			dwb, _ := ktWeights(t, v, wb, 0, false)
			dx := v.alloc(t, sh.cols*4)
			ktPut(t, v, dx, ktUniform(r, sh.cols, -1, 1))
			dnw := v.alloc(t, sh.cols*4)
			ktPut(t, v, dnw, ktUniform(r, sh.cols, 0.5, 1.5))
			rows := sh.rowsA + sh.rowsB
			y0 := ktUniform(r, rows+2, -4, 4)
			dy := v.alloc(t, (rows+2)*4) // A's rows, a guard, B's rows, a guard
			ya, yb := dy, dy.Add(uint64(sh.rowsA+1)*4)
			ua, ub := matvecUnits(va, sh.rowsA), matvecUnits(vb, sh.rowsB)
			for _, grid := range [][2]int{{ua, ub}, {min(2, ua), min(3, ub)}} {
				for _, mode := range []int32{mvStore, mvAccumulate} {
					for _, xnorm := range []int32{0, 1} {
						norm := cuda.DevPtr(0)
						if xnorm == 1 {
							norm = dnw
						}
						fill := func() {
							v.poison(t, dy, rows+2, ktNaN)
							if mode == mvAccumulate {
								ktPut(t, v, dy, y0)
							}
						}
						fill()
						ktMust(t, v.k.Matvec(va, ya, dwa, 0, dx, int32(sh.rowsA), int32(sh.cols), mode, norm, xnorm, 1e-6, ua))
						ktMust(t, v.k.Matvec(vb, yb, dwb, 0, dx, int32(sh.rowsB), int32(sh.cols), mode, norm, xnorm, 1e-6, ub))
						want := ktGet[float32](t, v, dy, rows+2)
						fill()
						mv := MatvecMixVariant{TypeA: pa.GgmlType, WideA: va.Wide, TypeB: pb.GgmlType, WideB: vb.Wide}
						ktMust(t, v.k.MatvecMix(mv, ya, dwa, int32(sh.rowsA), int32(grid[0]), yb, dwb, int32(sh.rowsB), dx, int32(sh.cols),
							mode, norm, xnorm, 1e-6, grid[0]+grid[1]))
						got := ktGet[float32](t, v, dy, rows+2)
						for row := range want {
							if math.Float32bits(got[row]) != math.Float32bits(want[row]) {
								t.Errorf("%s %d+%d×%d grid %v mode %d xnorm %d: row %d (of %d, %d; guards at %d and %d) mixed %g, alone %g",
									mk.Name, sh.rowsA, sh.rowsB, sh.cols, grid, mode, xnorm, row, sh.rowsA, sh.rowsB, sh.rowsA, rows+1, got[row], want[row])
								break
							}
						}
					}
				}
			}
		}
	}
}

// q4kmMix types a model as llama-quantize's Q4_K_M does where it spends
// more bits: attn_qkv, attn_v, the down projections and the output in
// Q6_K, the rest Q4_K. A Gated DeltaNet layer's input projections are then
// qkv (Q6_K) and gate|beta|alpha (Q4_K), an attention layer's q|k (Q4_K)
// and v (Q6_K): each set one mixed launch (mix.go).
func q4kmMix(name string) gguf.Type {
	switch {
	case strings.Contains(name, "attn_qkv"), strings.Contains(name, "attn_v."), strings.Contains(name, "ffn_down"), name == "output.weight":
		return gguf.TypeQ6_K
	}
	return gguf.TypeQ4_K
}

// q4kmSpec is the tiny model typed by q4kmMix, with 16 value heads so that
// beta and alpha are whole 16-row tiles and fuse with gate.
func q4kmSpec(seed uint64) modeltest.Spec {
	s := gpuTinySpec(gguf.TypeQ4_K, false, seed)
	s.NumVHeads = 16
	s.Type = q4kmMix
	return s
}

// mixedGroups counts g's groups that launch as one.
func mixedGroups(g *Model) int {
	n := 0
	for _, L := range g.ls {
		for _, grp := range []mvGroup{L.qkvAttn, L.gdnIn} {
			if grp.mix.on() {
				n++
			}
		}
	}
	return n
}

// TestGPUMixedLaunchEqualsSeparate: a Q4_K_M-typed model loads with every
// layer's input projections as one mixed launch, and gives at every eager
// step the logits, bit for bit, of the same model with MEMRA_MIX=0 (a
// launch for each type), and graph tokens equal to its eager ones.
func TestGPUMixedLaunchEqualsSeparate(t *testing.T) {
	e := decodeEngine(t)
	m := modeltest.Load(t, q4kmSpec(31))
	mixed := loadModel(t, e, m, Options{})
	if n := mixedGroups(mixed); n != len(m.Layers) {
		t.Fatalf("%d of %d layers' input projections launch as one", n, len(m.Layers))
	}
	t.Setenv("MEMRA_MIX", "0")
	apart := loadModel(t, e, m, Options{})
	if n := mixedGroups(apart); n != 0 {
		t.Fatalf("MEMRA_MIX=0: %d groups still mixed", n)
	}
	caches := make([]*Cache, 2)
	for i, g := range []*Model{mixed, apart} {
		cc, err := g.NewCache(256)
		ktMust(t, err)
		t.Cleanup(func() { cc.Close() })
		caches[i] = cc
	}
	tok := int32(17)
	for step := range 40 {
		want, err := apart.DecodeStep(caches[1], tok)
		ktMust(t, err)
		got, err := mixed.DecodeStep(caches[0], tok)
		ktMust(t, err)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("step %d: logit %d mixed %g, apart %g", step, i, got[i], want[i])
			}
		}
		tok = argmax(want)
	}
	prompt := []int32{5, 900, 17, 42}
	eager := eagerStream(t, mixed, prompt, 100, nil)
	gs := mixed.NewGraphDecodeState()
	defer gs.Close()
	graph, err := mixed.GenerateGraph(gs, prompt, 100)
	ktMust(t, err)
	if !slices.Equal(graph, eager) {
		t.Fatalf("graph tokens %v, eager %v", graph, eager)
	}
	t.Logf("%d mixed launches a step; 40 eager steps bit-identical to the separate launches; 100 graph tokens == eager (%d nodes a graph)",
		mixedGroups(mixed), gs.Nodes)
}
