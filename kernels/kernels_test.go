package kernels

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/kernels/internal/kbuild"
)

func TestManifestMatchesSources(t *testing.T) {
	m, err := Manifest()
	if err != nil {
		t.Fatal(err)
	}
	cur, err := kbuild.HashSources(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range kbuild.Stale(m, cur, "kernels") {
		t.Error(msg)
	}
	if !slices.Equal(m.Flags, kbuild.Flags()) {
		t.Errorf("fatbin built with flags %q, the builder now uses %q; run go tool mage cuda:kernels on a machine with nvcc",
			m.Flags, kbuild.Flags())
	}
	for _, f := range m.Flags {
		if strings.Contains(f, "fast-math") || strings.Contains(f, "fast_math") {
			t.Errorf("fatbin built with %s: expf/sqrtf/division must stay accurate", f)
		}
	}
}

func TestFatbinMatchesManifest(t *testing.T) {
	m, err := Manifest()
	if err != nil {
		t.Fatal(err)
	}
	fb := Fatbin()
	if len(fb) != m.FatbinBytes || kbuild.Sum(fb) != m.Fatbin {
		t.Fatalf("memra.fatbin (%d bytes, sha256 %s) is not the one the manifest records (%d bytes, %s); rebuild both together",
			len(fb), kbuild.Sum(fb), m.FatbinBytes, m.Fatbin)
	}
	// A fatbin container starts with the magic 0xBA55ED50 (little endian).
	if len(fb) < 16 || binary.LittleEndian.Uint32(fb) != 0xBA55ED50 {
		t.Fatalf("memra.fatbin does not start with the fatbin magic")
	}
}

// The built fatbin holds exactly the spec's kernels, and the hot ones
// (matvec, attention, delta rule) neither spill nor use a stack frame at sm_90.
func TestManifestKernels(t *testing.T) {
	m, err := Manifest()
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]bool{}
	rotates := map[string]bool{"rope_neox": true, "attn_prep_f16": true, "attn_prep_fp8": true, "attn_prep_f16_chunk": true, "attn_prep_fp8_chunk": true,
		"attn_prep_split_f16_d64": true, "attn_prep_split_f16_d128": true, "attn_prep_split_f16_d256": true}
	for _, k := range Spec() {
		spec[k.Name] = true
		info, ok := m.Kernels[k.Name]
		if !ok {
			t.Errorf("%s is in Spec() but not in the built fatbin; run go tool mage cuda:kernels", k.Name)
			continue
		}
		if info.SpillStores != 0 || info.SpillLoads != 0 {
			t.Errorf("%s spills at %s: %+v", k.Name, kbuild.ReportArch, info)
		}
		if info.SASSInstructions == 0 {
			t.Errorf("%s has no %s listing in the manifest; run go tool mage cuda:kernels", k.Name, kbuild.ReportArch)
		}
		// The rotating kernels keep a stack frame: float64 sincos's slow
		// argument reduction (memra_rope_cs).
		if info.StackBytes != 0 && !rotates[k.Name] {
			t.Errorf("%s uses a %d-byte stack frame at %s", k.Name, info.StackBytes, kbuild.ReportArch)
		}
	}
	for name := range m.Kernels {
		if !spec[name] {
			t.Errorf("the fatbin has kernel %s that Spec() does not list", name)
		}
	}
}

// TestAttnSplitResidency: the host sizes attention grids for
// AttnSplitBlocksPerSM blocks an SM, which holds only where every vector
// split kernel's registers (attn_prep_split's too) allow it (65,536 registers an SM, allocated per
// warp in units of 256); the tensor-core splits must fit exactly
// AttnSplitMMABlocksPerSM, which the docs' wave counts assume. The block
// size itself is checked against each kernel's __launch_bounds__ by
// TestSpecMatchesSources.
func TestAttnSplitResidency(t *testing.T) {
	m, ks := attnSplitKernels(t, true)
	for _, k := range ks {
		regs := m.Kernels[k.Name].Registers
		perWarp := (regs*32 + 255) / 256 * 256
		threads := k.Block[0]
		blocks := 65536 / (perWarp * threads / 32)
		if k.Variant["mma"] == 1 {
			if blocks != AttnSplitMMABlocksPerSM {
				t.Errorf("%s: %d registers fit %d blocks of %d threads an SM, AttnSplitMMABlocksPerSM says %d", k.Name, regs, blocks, threads, AttnSplitMMABlocksPerSM)
			}
			continue
		}
		if blocks < AttnSplitBlocksPerSM {
			t.Errorf("%s: %d registers fit %d blocks of %d threads an SM, the host assumes %d", k.Name, regs, blocks, threads, AttnSplitBlocksPerSM)
		}
	}
}

// TestAttnSplitShared: the host's G (AttnHeadsPerBlock) and block size
// (AttnSplitThreads) are the kernels' own, as their static shared memory
// shows: sm_ms [NH][G][2], sm_acc [NH][G][head_dim] and sm_q [G][head_dim]
// floats, NH the warps the merge buffers hold (half of them;
// attention.cu memra_attn_split). A G or warp count that drifted on either
// side changes the build's bytes.
//
// The tensor-core splits (attention_mma.cu) hold G = 4 q heads in every warp
// and stage q as f16 hi and lo rows of 36 uint4s (32 and 4 of padding):
// sm_q [2G][36] uint4, sm_red [G+1][NW], sm_sc [G], sm_ms [NW][G][2] and
// sm_acc [NW][G][head_dim] floats.
func TestAttnSplitShared(t *testing.T) {
	m, ks := attnSplitKernels(t, false)
	for _, k := range ks {
		d, vec := k.Variant["head_dim"], k.Variant["vec"] == 1
		g := AttnHeadsPerBlock(d, vec)
		nw := AttnSplitThreads / 32
		nh := nw / 2
		want := 4 * (nh*g*2 + nh*g*d + g*d)
		if k.Variant["mma"] == 1 {
			const g, qrow = 4, 36
			want = 16*2*g*qrow + 4*((g+1)*nw+g+nw*g*2+nw*g*d)
		}
		if got := m.Kernels[k.Name].SharedBytes; got != want {
			t.Errorf("%s: %d bytes of static shared memory, want %d for G %d and %d warps", k.Name, got, want, g, nw)
		}
	}
}

// attnSplitKernels returns the build's manifest and the spec's attention
// split kernels (the vector ones only, attn_prep_split's among them, with
// vecOnly); none is a failure.
func attnSplitKernels(t *testing.T, vecOnly bool) (ManifestInfo, []Kernel) {
	t.Helper()
	m, err := Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var ks []Kernel
	for _, k := range Spec() {
		vecSplit := k.Family == "attn_split" && k.Variant["vec"] == 1 || k.Family == "attn_prep_split"
		if vecOnly && vecSplit || !vecOnly && k.Family == "attn_split" {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		t.Fatalf("no attn_split kernel (vector only: %v) in Spec()", vecOnly)
	}
	return m, ks
}
