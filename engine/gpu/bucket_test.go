package gpu

import (
	"strings"
	"testing"

	"github.com/memra-ai/memra/kernels"
)

// TestBucketKey checks the bucket geometry by hand-worked cases: ceil(t/64)
// splits, capped at AttnSplitBlocksPerSM·SMs/n_kv (2·132/2 = 132 for two KV
// heads on 132 SMs, over either cache), and fa_vec when the head dim holds
// whole vectors of 8 values.
func TestBucketKey(t *testing.T) {
	if kernels.AttnSplitBlocksPerSM != 2 {
		t.Fatalf("the cases below are worked out for 2 split blocks an SM, not %d", kernels.AttnSplitBlocksPerSM)
	}
	for _, c := range []struct {
		tKV, dh, nkv int
		sms          int
		vec          bool
		splits       int
	}{
		{1, 256, 2, 132, true, 1},
		{64, 256, 2, 132, true, 1},
		{65, 256, 2, 132, true, 2},
		{8384, 256, 2, 132, true, 131},  // ceil(8384/64) = 131, under the cap
		{8448, 256, 2, 132, true, 132},  // 2·132/2 = 132: the cap
		{12672, 256, 2, 132, true, 132}, // past the cap the bucket stays
		{32768, 256, 4, 132, true, 66},  // 2·132/4
		{100, 72, 2, 132, true, 2},      // 72 = 9 vectors of 8 (f16 or e4m3)
		{100, 68, 2, 132, false, 2},     // 68 is not whole vectors
		{100000, 128, 64, 20, true, 1},  // more KV heads than SMs: at least one split
	} {
		vec, n := BucketKey(c.tKV, c.dh, c.nkv, c.sms)
		if vec != c.vec || n != c.splits {
			t.Errorf("BucketKey(%d, %d, %d, %d) = (%v, %d), want (%v, %d)", c.tKV, c.dh, c.nkv, c.sms, vec, n, c.vec, c.splits)
		}
	}
}

// TestAttnSplitTable checks that the generated per-bucket table has exactly
// one variant for every split kernel the spec builds, so every bucket of
// every supported head dim and KV type has a kernel to capture.
func TestAttnSplitTable(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range AttnSplitVariants() {
		name, err := kernels.AttnSplitName(v.HeadDim, v.FP8 == 1, v.Vec == 1, v.MMA == 1)
		if err != nil {
			t.Fatalf("variant %+v: %v", v, err)
		}
		if seen[name] {
			t.Fatalf("variant %+v: %s twice", v, name)
		}
		seen[name] = true
	}
	n := 0
	for _, k := range kernels.Spec() {
		if k.Family == "attn_split" {
			n++
			if !seen[k.Name] {
				t.Errorf("spec kernel %s has no variant in the table", k.Name)
			}
		}
	}
	if n != len(seen) || n == 0 {
		t.Fatalf("table has %d variants, spec %d split kernels", len(seen), n)
	}
}

// TestSplitHeads: short contexts spread a KV head's q heads over blocks as
// far as one wave allows (9B: 16 q / 4 KV heads, head dim 256; 0.8B: 8 / 2;
// 132 SMs: G 4 and a wave of 2·132 = 264 blocks; the rule is also checked
// with a wave of 3·132 = 396 and G 8); long ones keep whole groups.
// Expected values worked out by hand from the rule in splitHeads' comment.
func TestSplitHeads(t *testing.T) {
	for _, c := range []struct{ ns, nHead, nKV, g, wave, want int }{
		{17, 16, 4, 4, 264, 2},  // 9B 1k: 272 blocks of 1 head do not fit, 136 of 2 do
		{33, 16, 4, 4, 264, 2},  // 9B 2k: 264 of 2
		{65, 16, 4, 4, 264, 4},  // 9B 4k: 520 of 2 do not; whole groups, 260
		{66, 16, 4, 4, 264, 4},  // 9B at the split cap: 264
		{17, 8, 2, 4, 264, 1},   // 0.8B 1k: 136 of 1
		{33, 8, 2, 4, 264, 1},   // 0.8B 2k: 264 of 1
		{65, 8, 2, 4, 264, 2},   // 0.8B 4k: 520 of 1 do not, 260 of 2
		{132, 8, 2, 4, 264, 4},  // 0.8B at the cap
		{17, 16, 4, 4, 396, 1},  // 9B 1k, wave 396: 272 blocks of 1 head fit
		{33, 16, 4, 4, 396, 2},  // 9B 2k, wave 396: 528 of 1 do not, 264 of 2 do
		{99, 16, 4, 4, 396, 4},  // 9B at a cap of 99: 396
		{30, 24, 2, 8, 396, 2},  // G 8, group 12: 720 of 1 do not, 360 of 2 do
		{198, 24, 2, 8, 396, 8}, // nothing fits: G's 8
		{4, 24, 2, 4, 264, 1},   // group 12: 96 of 1
		{30, 24, 2, 4, 264, 3},  // 720 of 1 and 360 of 2 do not, 240 of 3 do
		{132, 24, 2, 4, 264, 4}, // nothing fits: G's 4, as the kernel allows
		{16, 4, 4, 4, 264, 1},   // no GQA: one head per group
	} {
		if got := splitHeads(c.ns, c.nHead, c.nKV, c.g, c.wave); got != c.want {
			t.Errorf("splitHeads(%d splits, %d/%d heads, G %d, wave %d) = %d, want %d", c.ns, c.nHead, c.nKV, c.g, c.wave, got, c.want)
		}
	}
}

// TestSplitHeadsBounds: attn_split's merge holds at most G heads per block,
// so hpb must be in [1, min(G, group)] for every bucket a model can reach.
func TestSplitHeadsBounds(t *testing.T) {
	for _, wave := range []int{1, 16, 132, splitWave(132)} {
		for _, hd := range [][2]int{{1, 1}, {4, 1}, {8, 2}, {16, 4}, {24, 2}, {64, 4}, {40, 8}} {
			for _, g := range []int{2, 4, 8} {
				for ns := 1; ns <= maxSplits(wave, hd[1]); ns++ {
					group := hd[0] / hd[1]
					if h := splitHeads(ns, hd[0], hd[1], g, wave); h < 1 || h > min(g, group) {
						t.Fatalf("splitHeads(%d, %d/%d heads, G %d, wave %d) = %d, outside [1, %d]", ns, hd[0], hd[1], g, wave, h, min(g, group))
					}
				}
			}
		}
	}
}

// TestPrepInSplit checks which buckets prepare the token inside the split
// launch: over an f16 cache with the vector CUDA-core splits where a split
// block serves one q head (splitGeom's hpb), never where either part is
// omitted. Shapes: the 0.8B and 9B synth presets' attention (8 and 16 q
// heads over 2 and 4 KV heads, head dim 256) on an H100's or H200's 132 SMs,
// where run474 measured the rule's sides (perf.md step 143).
func TestPrepInSplit(t *testing.T) {
	model := func(nHead, nKV int, fp8 bool, omit stepOmit, mma string) *Model {
		g := &Model{hopper: true, sms: 132, omit: omit, attnMMA: mma}
		g.cfg.NHead, g.cfg.NHeadKV, g.cfg.HeadDimK = nHead, nKV, 256
		g.opt.KVFP8 = fp8
		g.maxSplits = maxSplits(splitWave(g.sms), nKV)
		return g
	}
	vec := func(n int) Bucket { return Bucket{FAVec: true, NSplits: n} }
	for _, c := range []struct {
		name       string
		nHead, nKV int
		fp8        bool
		omit       stepOmit
		mma        string // MEMRA_ATTN_MMA
		b          Bucket
		want       bool
		wantHPB    int
	}{
		{"0.8B at 64", 8, 2, false, stepOmit{}, "", vec(1), true, 1},
		{"0.8B at 1k", 8, 2, false, stepOmit{}, "", vec(17), true, 1},
		{"0.8B at 2k", 8, 2, false, stepOmit{}, "", vec(33), true, 1},
		{"0.8B past 2k", 8, 2, false, stepOmit{}, "", vec(34), false, 2},
		{"0.8B at 4k", 8, 2, false, stepOmit{}, "", vec(65), false, 2},
		{"0.8B at the cap", 8, 2, false, stepOmit{}, "", vec(132), false, 4},
		{"9B at 64", 16, 4, false, stepOmit{}, "", vec(1), true, 1},
		{"9B at 1k", 16, 4, false, stepOmit{}, "", vec(17), false, 2},
		{"0.8B at 1k, e4m3", 8, 2, true, stepOmit{}, "", vec(17), false, 1},
		{"0.8B at 1k, scalar", 8, 2, false, stepOmit{}, "", Bucket{NSplits: 17}, false, 1},
		{"0.8B at 1k, attn-prep omitted", 8, 2, false, stepOmit{attnPrep: true}, "", vec(17), false, 1},
		{"0.8B at 1k, attn-split omitted", 8, 2, false, stepOmit{attnSplit: true}, "", vec(17), false, 1},
		{"0.8B at 1k, tensor-core splits", 8, 2, false, stepOmit{}, mmaAll, vec(17), false, 1},
	} {
		g := model(c.nHead, c.nKV, c.fp8, c.omit, c.mma)
		if hpb, _ := g.splitGeom(c.b); hpb != c.wantHPB {
			t.Errorf("%s: %d q heads a split block, want %d", c.name, hpb, c.wantHPB)
		}
		if got := g.prepInSplit(c.b); got != c.want {
			t.Errorf("%s, bucket %v: prepInSplit %v, want %v", c.name, c.b, got, c.want)
		}
	}
}

// TestAttnSplitMMA checks which buckets take the tensor-core split: by
// default head dim 256's vector buckets at the split cap over an FP8 cache
// only; MEMRA_ATTN_MMA's values override it, never outside head dim 256's
// vector layout (the only one attention_mma.cu is built for).
func TestAttnSplitMMA(t *testing.T) {
	// The host passes the vector kernels' G as hpb; the tensor-core split
	// holds 4 q heads (attention_mma.cu MEMRA_AMMA_G).
	if g := kernels.AttnHeadsPerBlock(256, true); g != 4 {
		t.Fatalf("AttnHeadsPerBlock(256, vec) = %d, the tensor-core split holds 4 q heads a block", g)
	}
	model := func(dh int, fp8 bool, env string) *Model {
		g := &Model{attnMMA: env, maxSplits: 66, hopper: true}
		g.cfg.HeadDimK = dh
		g.opt.KVFP8 = fp8
		return g
	}
	below, capped := Bucket{FAVec: true, NSplits: 65}, Bucket{FAVec: true, NSplits: 66}
	for _, c := range []struct {
		dh   int
		fp8  bool
		env  string
		b    Bucket
		want bool
	}{
		{256, true, "", capped, true},
		{256, true, "", below, false},
		{256, false, "", capped, false},
		{128, true, "", Bucket{FAVec: true, NSplits: 66}, false},
		{256, true, "", Bucket{FAVec: false, NSplits: 66}, false},
		{256, true, "0", capped, false},
		{256, false, "1", below, true},
		{256, false, "cap", capped, true},
		{256, false, "cap", below, false},
		{128, false, "1", below, false},
	} {
		if got := model(c.dh, c.fp8, c.env).attnSplitMMA(c.b); got != c.want {
			t.Errorf("head dim %d, fp8 %v, MEMRA_ATTN_MMA=%q, bucket %v: %v, want %v", c.dh, c.fp8, c.env, c.b, got, c.want)
		}
	}
	// Before Hopper the default leaves it off (its e4m3 decode is not measured there).
	pre := model(256, true, "")
	pre.hopper = false
	if pre.attnSplitMMA(capped) {
		t.Error("the default rule took the tensor-core split before sm_90")
	}
	for _, v := range []string{"", "0", "1", "cap"} {
		t.Setenv("MEMRA_ATTN_MMA", v)
		if got, err := attnMMAFromEnv(); err != nil || got != v {
			t.Errorf("MEMRA_ATTN_MMA=%q: %q, %v", v, got, err)
		}
	}
	for _, v := range []string{"true", "2", "CAP"} {
		t.Setenv("MEMRA_ATTN_MMA", v)
		if _, err := attnMMAFromEnv(); err == nil || !strings.Contains(err.Error(), "MEMRA_ATTN_MMA") {
			t.Errorf("MEMRA_ATTN_MMA=%q: error %v, want one naming the variable", v, err)
		}
	}
}

// TestOffByDefaultEnv: MEMRA_KV_FP8 and MEMRA_FULL_LOGITS are 1, 0 or
// unset; anything else is an error naming them (before, "yes" and "true"
// meant off without a word).
func TestOffByDefaultEnv(t *testing.T) {
	for name, read := range map[string]func() (bool, error){"MEMRA_KV_FP8": KVFP8FromEnv, "MEMRA_FULL_LOGITS": FullLogitsFromEnv} {
		for v, want := range map[string]bool{"": false, "0": false, "1": true} {
			t.Setenv(name, v)
			if got, err := read(); err != nil || got != want {
				t.Errorf("%s=%q: %v, %v; want %v", name, v, got, err, want)
			}
		}
		for _, v := range []string{"yes", "true", "2", " 1"} {
			t.Setenv(name, v)
			if _, err := read(); err == nil || !strings.Contains(err.Error(), name+"=") || !strings.Contains(err.Error(), "or 0 or unset") {
				t.Errorf("%s=%q: %v", name, v, err)
			}
		}
	}
	t.Setenv("MEMRA_KV_FP8", "yes")
	if _, err := KVFP8FromEnv(); err == nil || !strings.Contains(err.Error(), "want 1 (an FP8 e4m3 KV cache) or 0 or unset") {
		t.Errorf("MEMRA_KV_FP8=yes: %v", err)
	}
}
