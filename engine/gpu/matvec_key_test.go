package gpu

import (
	"testing"

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
		{gguf.TypeQ4_0, 1024, 1024, 0},
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
		v := MatvecVariant{GgmlType: mk.GgmlType, Wide: mk.WideKey()}
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
	none := MatvecVariant{GgmlType: int(gguf.TypeQ4_0), Wide: 0}
	if _, ok := matvecKernel(none); ok {
		t.Errorf("q4_0 has a matvec kernel")
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
// staging alike, so that the host sizes a launch's shared memory and grid
// for the kernel it launches.
func TestBatchKernelPerVariant(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range MatvecBatchVariants() {
		bk, ok := batchKernel(v)
		if !ok {
			t.Errorf("%+v: no kernel", v)
			continue
		}
		if bk.GgmlType != v.GgmlType || b2i(bk.Wide) != v.Wide || b2i(bk.Staged) != v.Staged {
			t.Errorf("%+v: found %s (type %d wide %v staged %v)", v, bk.Name, bk.GgmlType, bk.Wide, bk.Staged)
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
