package gpu

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/convert"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestMatvecKeyBoundaries pins the kernel choice at each bound of the rules
// in MatvecWide and MatvecWave's comments, worked out by hand: f16 and bf16
// wide up to 2,048 rows; q8_0 and the K-quants wide up to 4,096 rows, or
// 5,120 with more than 4,096 columns; the wave form for q8_0 of 2,049 to
// 4,096 rows and for wide Q4_K past 2,048 rows and 8,192 columns; other
// types plain. Key 0 plain, 1 wide, 2 wave.
func TestMatvecKeyBoundaries(t *testing.T) {
	for _, c := range []struct {
		typ        gguf.Type
		rows, cols int
		key        int
	}{
		{gguf.TypeBF16, 2048, 1024, 1},
		{gguf.TypeBF16, 2049, 1024, 0},
		{gguf.TypeBF16, 2049, 20000, 0}, // no long-row exception for f16/bf16
		{gguf.TypeF16, 2048, 8192, 1},
		{gguf.TypeF16, 2049, 8192, 0},

		{gguf.TypeQ8_0, 2048, 1024, 1}, // wide, below the wave
		{gguf.TypeQ8_0, 2049, 1024, 2},
		{gguf.TypeQ8_0, 4096, 1024, 2},
		{gguf.TypeQ8_0, 4096, 12288, 2},
		{gguf.TypeQ8_0, 4097, 4096, 0}, // past 4,096 rows, 4,096 columns are not long
		{gguf.TypeQ8_0, 4097, 4097, 1}, // long rows: wide, but no wave past 4,096
		{gguf.TypeQ8_0, 5120, 6144, 1},
		{gguf.TypeQ8_0, 5121, 6144, 0},
		{gguf.TypeQ8_0, 5120, 1024, 0},

		{gguf.TypeQ4_K, 2048, 12288, 1}, // the wave starts past 2,048 rows
		{gguf.TypeQ4_K, 2049, 8192, 1},  // and past 8,192 columns
		{gguf.TypeQ4_K, 2049, 8193, 2},
		{gguf.TypeQ4_K, 4096, 12288, 2},
		{gguf.TypeQ4_K, 4096, 4096, 1},
		{gguf.TypeQ4_K, 5120, 12288, 2}, // wide by its long rows, so the wave
		{gguf.TypeQ4_K, 5120, 4096, 0},
		{gguf.TypeQ4_K, 5121, 12288, 0},

		{gguf.TypeQ5_K, 4096, 12288, 1}, // no wave form for Q5_K and Q6_K
		{gguf.TypeQ5_K, 5120, 4097, 1},
		{gguf.TypeQ5_K, 5120, 4096, 0},
		{gguf.TypeQ6_K, 2049, 9000, 1},
		{gguf.TypeQ6_K, 4097, 17408, 1},
		{gguf.TypeQ6_K, 5121, 17408, 0},

		{gguf.TypeF32, 16, 16, 0},
		{gguf.TypeQ5_0, 1024, 1024, 0}, // no kernel of its own (stored as Q8_0)
	} {
		if got := matvecKey(c.typ, c.rows, c.cols); got != c.key {
			t.Errorf("matvecKey(%v, %d × %d) = %d, want %d", c.typ, c.rows, c.cols, got, c.key)
		}
		if w := MatvecWide(c.typ, c.rows, c.cols); w != (c.key > 0) {
			t.Errorf("MatvecWide(%v, %d × %d) = %v, want %v", c.typ, c.rows, c.cols, w, c.key > 0)
		}
		if w := MatvecWave(c.typ, c.rows, c.cols); w != (c.key == 2) {
			t.Errorf("MatvecWave(%v, %d × %d) = %v, want %v", c.typ, c.rows, c.cols, w, c.key == 2)
		}
	}
}

// TestMatvecUnits: every variant the spec builds finds its own kernel, and
// its grid is ceil(rows / RowsPerBlock) units (1 row: 1; R rows: 1; R+1:
// 2; 3R: 3); a variant without a kernel finds none and asks one unit.
func TestMatvecUnits(t *testing.T) {
	for _, mk := range kernels.MatvecKernels() {
		v := variantOf(mk)
		if got, ok := matvecKernel(v); !ok || got.Name != mk.Name {
			t.Errorf("variant %+v: kernel %q (%v), want %s", v, got.Name, ok, mk.Name)
		}
		r := mk.RowsPerBlock
		for rows, want := range map[int]int{1: 1, r: 1, r + 1: 2, 3 * r: 3} {
			if got := matvecUnits(v, rows); got != want {
				t.Errorf("%s (%d rows a unit): %d rows in %d units, want %d", mk.Name, r, rows, got, want)
			}
		}
	}
	none := MatvecVariant{GgmlType: int(gguf.TypeQ5_0), Wide: 0}
	if _, ok := matvecKernel(none); ok {
		t.Errorf("q5_0 has a matvec kernel")
	}
	if got := matvecUnits(none, 4096); got != 1 {
		t.Errorf("units without a kernel: %d, want 1", got)
	}
}

// TestKVSizes: a cached K or V element is 2 bytes of f16 or 1 of e4m3, and
// a vector of head dim 256 moves 512 bytes, or 256 + its 4-byte scale.
func TestKVSizes(t *testing.T) {
	for _, c := range []struct {
		fp8       bool
		elem, vec uint64
	}{{false, 2, 512}, {true, 1, 260}} {
		g := &Model{}
		g.cfg.HeadDimK = 256
		g.opt.KVFP8 = c.fp8
		if e, v := g.kvElemBytes(), g.kvVecBytes(); e != c.elem || v != c.vec {
			t.Errorf("fp8 %v: element %d, vector %d bytes; want %d, %d", c.fp8, e, v, c.elem, c.vec)
		}
	}
}

// TestAlign: sizes round up to whole 256-byte units.
func TestAlign(t *testing.T) {
	for n, want := range map[uint64]uint64{0: 0, 1: 256, 255: 256, 256: 256, 257: 512, 1000: 1024} {
		if got := align(n); got != want {
			t.Errorf("align(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestL2HoldPaysBound: the hold pays from 1.4% of the weights on: 14 bytes
// of 1,000 do, 14 of 1,001 do not.
func TestL2HoldPaysBound(t *testing.T) {
	if !l2HoldPays(14, 1000) || !l2HoldPays(14_000_000, 1_000_000_000) || l2HoldPays(14, 1001) || l2HoldPays(13_999_999, 1_000_000_000) {
		t.Error("l2HoldPays does not turn at 1.4%")
	}
}

// TestBatchKernelPerVariant: every matvec_batch variant the launchers
// dispatch on finds its own kernel in the spec's table, type, width and
// where it reads its inputs (staged, laid) alike, so that the host sizes a launch's shared memory and grid
// for the kernel it launches.
func TestBatchKernelPerVariant(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range MatvecBatchVariants() {
		bk, ok := batchKernel(v)
		if !ok {
			t.Errorf("%+v: no kernel", v)
			continue
		}
		if bk.GgmlType != v.GgmlType || b2i(bk.Wide) != v.Wide || b2i(bk.Staged) != v.Staged || b2i(bk.Laid) != v.Laid {
			t.Errorf("%+v: found %s (type %d wide %v staged %v laid %v)", v, bk.Name, bk.GgmlType, bk.Wide, bk.Staged, bk.Laid)
		}
		if seen[bk.Name] {
			t.Errorf("%+v: %s already found for another variant", v, bk.Name)
		}
		seen[bk.Name] = true
	}
	if len(seen) != len(kernels.MatvecBatchKernels()) {
		t.Errorf("%d kernels found for the variants, the table has %d", len(seen), len(kernels.MatvecBatchKernels()))
	}
}

// roomFor is the mvRoom of a GPU that allows a block optin bytes of shared
// memory, with each tensor-core kernel's static arrays as ptxas reports
// them for sm_90 in the manifest (the same code on every architecture).
func roomFor(t *testing.T, optin int) mvRoom {
	t.Helper()
	man, err := kernels.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	r := mvRoom{}
	for _, mk := range kernels.MatvecKernels() {
		if mk.TensorCore {
			info, ok := man.Kernels[mk.Name]
			if !ok {
				t.Fatalf("%s: not in the manifest", mk.Name)
			}
			r[variantOf(mk)] = optin - info.SharedBytes
		}
	}
	return r
}

// Shared memory a block may take with its opt-in: sm_90 (H100, H200), sm_80
// (A100), and sm_86 and sm_89 (RTX 3090 and 4090, A10, L4, L40S), from
// NVIDIA's CUDA C++ Programming Guide's table of compute capabilities (227,
// 163 and 99 KiB).
const (
	optinSM90 = 227 << 10
	optinSM80 = 163 << 10
	optinSM89 = 99 << 10
)

// TestMatvecLeanRoom: at every row length of the synth presets' matrices
// (convert.Plan; tiny to 27B), every K-quant kernel a matrix may take runs
// as itself on sm_90 and sm_80, so the other forms change nothing on the
// H100, H200 and A100, and runs as itself or a form with fewer slots on
// sm_86 and sm_89,
// so that every preset loads there; the 9B's 12,288 and the 27B's 17,408
// columns do need the lean forms there (the 9B's Q6_K down projection
// 104,448 bytes in the usual kernel), and the 2B's 6,144-column Q4_K down
// projection takes the wave form (2 slots; the wide kernel's 4 need
// 101,696 bytes).
func TestMatvecLeanRoom(t *testing.T) {
	h200, a100, ada := roomFor(t, optinSM90), roomFor(t, optinSM80), roomFor(t, optinSM89)
	leanAt := map[int]bool{}
	other := map[string]bool{}
	for _, preset := range convert.Presets() {
		s, err := convert.PresetSpec(preset)
		if err != nil {
			t.Fatal(err)
		}
		es, err := convert.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		widths := map[int]bool{}
		for _, e := range es {
			if len(e.Shape) == 2 && e.Shape[0]%256 == 0 {
				widths[int(e.Shape[0])] = true
			}
		}
		for cols := range widths {
			for _, typ := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K} {
				for key := range 3 {
					if _, ok := matvecKernel(MatvecVariant{GgmlType: int(typ), Wide: key}); !ok {
						continue
					}
					for arch, r := range map[string]mvRoom{"sm_90": h200, "sm_80": a100} {
						if v, ok := r.variant(typ, key, cols); !ok || v != (MatvecVariant{GgmlType: int(typ), Wide: key}) {
							t.Errorf("%s: %v key %d at %d columns on %s: %+v (fits: %v), want the usual kernel", preset, typ, key, cols, arch, v, ok)
						}
					}
					v, ok := ada.variant(typ, key, cols)
					if !ok {
						t.Errorf("%s: %v key %d at %d columns on sm_89: no kernel fits", preset, typ, key, cols)
					}
					if v.Lean != 0 {
						leanAt[cols] = true
					}
					if v.Wide != key || v.Lean != 0 {
						mk, _ := matvecKernel(v)
						other[fmt.Sprintf("%v key %d at %d columns: %s", typ, key, cols, mk.Name)] = true
					}
				}
			}
		}
	}
	for _, cols := range []int{12288, 17408} {
		if !leanAt[cols] {
			t.Errorf("%d columns never take a lean kernel on sm_89", cols)
		}
	}
	if v, _ := ada.variant(gguf.TypeQ6_K, 1, 12288); v.Lean != 1 {
		t.Errorf("the 9B Q6_K down projection on sm_89: %+v, want the lean form", v)
	}
	if v, _ := ada.variant(gguf.TypeQ4_K, 1, 6144); v != (MatvecVariant{GgmlType: int(gguf.TypeQ4_K), Wide: 2}) {
		t.Errorf("the 2B Q4_K down projection on sm_89: %+v, want the wave form", v)
	}
	for _, k := range slices.Sorted(maps.Keys(other)) {
		t.Logf("sm_89: %s", k)
	}
}

// TestMatvecRoomShapes: mvRoom.shapes moves a width the usual kernel has no
// room for to its lean form, keeps the others, and refuses one neither
// holds with an error naming the matrix, its width, both kernels, what they
// need and the limit.
func TestMatvecRoomShapes(t *testing.T) {
	r := roomFor(t, optinSM89)
	ts := tiledShapes{}
	ts.add(gguf.TypeQ6_K, 4096, 4096, "blk.0.ssm_out.weight")
	ts.add(gguf.TypeQ6_K, 4096, 12288, "blk.0.ffn_down.weight")
	got, err := r.shapes(ts, optinSM89)
	if err != nil {
		t.Fatal(err)
	}
	wide := MatvecVariant{GgmlType: int(gguf.TypeQ6_K), Wide: 1}
	lean := MatvecVariant{GgmlType: int(gguf.TypeQ6_K), Wide: 1, Lean: 1}
	if _, ok := got[wide][4096]; !ok {
		t.Errorf("4,096 columns left the wide kernel: %v", got)
	}
	if _, ok := got[wide][12288]; ok {
		t.Errorf("12,288 columns kept on the wide kernel: %v", got)
	}
	if name := got[lean][12288]; name != "blk.0.ffn_down.weight" {
		t.Errorf("12,288 columns on the lean form under %q: %v", name, got)
	}

	ts.add(gguf.TypeQ6_K, 4096, 40960, "blk.1.ffn_down.weight")
	_, err = r.shapes(ts, optinSM89)
	if err == nil {
		t.Fatal("40,960 columns accepted")
	}
	for _, want := range []string{"blk.1.ffn_down.weight", "40960 columns", "matvec_q6_k", "_lean", "allows 101376", "--device cpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestSharedLimitEnv: MEMRA_SHARED_LIMIT takes a byte count of at least
// sm_86's and sm_89's 99 KiB, and names itself when it holds anything else.
func TestSharedLimitEnv(t *testing.T) {
	for v, want := range map[string]int{"": 0, "101376": 101376, "163840": 163840} {
		t.Setenv("MEMRA_SHARED_LIMIT", v)
		if got, err := sharedLimitFromEnv(); err != nil || got != want {
			t.Errorf("MEMRA_SHARED_LIMIT=%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"99k", "-1", "0", "49152", "101375", "1e5"} {
		t.Setenv("MEMRA_SHARED_LIMIT", v)
		if _, err := sharedLimitFromEnv(); err == nil || !strings.Contains(err.Error(), "MEMRA_SHARED_LIMIT") {
			t.Errorf("MEMRA_SHARED_LIMIT=%q: error %v, want one naming the variable", v, err)
		}
		if err := CheckEnv(); err == nil {
			t.Errorf("MEMRA_SHARED_LIMIT=%q: CheckEnv accepts it", v)
		}
	}
}

// TestFallbacks: a model whose Q6_K down projections are 12,288 columns
// wide, on a GPU that allows 99 KiB a block, says that they run the lean
// kernel, naming the first, counting the rest, and giving the usual
// kernel's need (104,448 bytes dynamic and its static arrays) and the
// limit, the GPU's or MEMRA_SHARED_LIMIT's; with the H200's 227 KiB it
// says nothing.
func TestFallbacks(t *testing.T) {
	layer := func(i int) layerWeights {
		return layerWeights{
			ffnDown: dtensor{name: fmt.Sprintf("blk.%d.ffn_down.weight", i), ptr: 0x1000, typ: gguf.TypeQ6_K, rows: 4096, cols: 12288},
			ffnUp:   dtensor{name: fmt.Sprintf("blk.%d.ffn_up.weight", i), ptr: 0x2000, typ: gguf.TypeQ6_K, rows: 12288, cols: 4096},
		}
	}
	g := &Model{ls: []layerWeights{layer(0), layer(1), layer(2)},
		out: dtensor{name: "output.weight", ptr: 0x3000, typ: gguf.TypeQ6_K, rows: 248320, cols: 4096}}
	g.mvRoom, g.blockShared = roomFor(t, optinSM90), optinSM90
	if f := g.Fallbacks(); len(f) != 0 {
		t.Errorf("sm_90: %q", f)
	}
	g.mvRoom, g.blockShared = roomFor(t, optinSM89), optinSM89
	f := g.Fallbacks()
	if len(f) != 1 {
		t.Fatalf("sm_89: %d lines %q, want 1", len(f), f)
	}
	static := optinSM89 - g.mvRoom[MatvecVariant{GgmlType: int(gguf.TypeQ6_K), Wide: 1}]
	for _, want := range []string{"blk.0.ffn_down.weight and 2 more matrices of 12288 columns run matvec_q6_k_wide_lean",
		fmt.Sprintf("matvec_q6_k_wide needs %d bytes", 104448+static), "this GPU allows 101376"} {
		if !strings.Contains(f[0], want) {
			t.Errorf("%q does not say %q", f[0], want)
		}
	}
	// One matrix, the limit MEMRA_SHARED_LIMIT's.
	g.ls, g.sharedCapped = g.ls[:1], true
	f = g.Fallbacks()
	if len(f) != 1 {
		t.Fatalf("one layer: %d lines %q, want 1", len(f), f)
	}
	for _, want := range []string{"blk.0.ffn_down.weight (12288 columns) runs matvec_q6_k_wide_lean", "MEMRA_SHARED_LIMIT allows 101376"} {
		if !strings.Contains(f[0], want) {
			t.Errorf("%q does not say %q", f[0], want)
		}
	}
}
