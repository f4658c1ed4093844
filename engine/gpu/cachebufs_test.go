package gpu

import (
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/kernels"
)

// TestCacheBufs: a cache's buffers for a small hybrid config, sizes worked
// out by hand from the config (not by the planner's formulas): 3 Gated
// DeltaNet layers and 1 attention layer, 2 KV heads of 256, C = 2·(2·128) +
// 512 = 1,024 conv channels, 4 V heads, 100 tokens. The KV comes first and
// the states and scratch after it, back to back, as the L2 window that
// covers them from the first non-KV buffer on assumes; a prompt chunk's
// buffers, where the model primes in chunks, come last, outside it.
func TestCacheBufs(t *testing.T) {
	var c model.Config
	c.NLayer, c.Kinds = 4, []model.LayerKind{model.LayerRecurrent, model.LayerRecurrent, model.LayerRecurrent, model.LayerAttention}
	c.NHead, c.NHeadKV, c.HeadDimK, c.AttnOutputGate = 4, 2, 256, true
	c.SSMGroupCount, c.SSMStateSize, c.SSMInnerSize, c.SSMNumVHeads, c.SSMConvKernel = 2, 128, 512, 4, 4
	c.NEmbd, c.NFF, c.NVocab = 64, 96, 1000
	// Scratch, in bytes: x 256, xn 256; qg (2·4·256 + 2·2·256 floats)
	// 12,288, q 4,096, attn 4,096, split partials 4·3·2·4 = 96 and
	// 4·3·256·4 = 12,288; qkv|z|b|a (1,024 + 512 + 8 floats) 6,176, y
	// 4,096, o 2,048, on 2,048; fg|fu 768, fh 384, logits 4,000, seen
	// 4,000, token 4: 56,900, plus the argmax partials, the top-k scratch
	// and the kernels' fixed-size records.
	fixed := uint64(56900) + 8*uint64(argmaxParts(1000)) + 16*uint64(topKScratchPairs(1000)) +
		kernels.CountersBytes + 8*kernels.TopKMax + kernels.DrawParamsBytes + kernels.PenaltyBytes
	// A chunk of 3 tokens, each field's copy rounded up to 64 floats: x and
	// xn 64 floats, qg|k|v 3,072, attn 1,024, qkv|z|b|a 1,544 → 1,600, the
	// conv output y 1,024, o and on 512 each, fg|fu 192, fh 96 → 128: 8,192
	// floats a token, 98,304 bytes; with attention's q 1,024, split partials 24 → 64
	// and 3,072: 12,352 floats, 148,224 bytes; and the prompt's ids, an
	// int32 a position of the cache's 100: 148,624.
	const chunk3 = 3*12352*4 + 100*4
	for _, tc := range []struct {
		fp8    bool
		kv     uint64
		tokens int
	}{
		{false, 2 * 2 * 100 * 256 * 2, 0},  // k and v, f16: 204,800
		{true, 2*2*100*256 + 2*2*100*4, 0}, // e4m3 and a f32 scale per head and token: 104,000
		{false, 2 * 2 * 100 * 256 * 2, 3},
	} {
		g := &Model{cfg: c, maxSplits: 3}
		g.opt.KVFP8 = tc.fp8
		var chunk uint64
		if tc.tokens > 0 {
			g.pf = &prefillPlan{tokens: tc.tokens}
			chunk = chunk3
		}
		cc := &Cache{g: g, capacity: 100}
		bufs := g.cacheBufs(cc)
		if len(cc.kv) != 1 || len(cc.gdn) != 3 {
			t.Fatalf("fp8 %v: %d KV and %d state layers, want 1 and 3", tc.fp8, len(cc.kv), len(cc.gdn))
		}
		var sum [4]uint64
		seen := map[any]bool{}
		last := bufKV
		for i, b := range bufs {
			sum[b.kind] += b.bytes
			if b.kind < last {
				t.Errorf("fp8 %v: buffer %d (%v) after one of kind %v", tc.fp8, i, b.kind, last)
			}
			last = b.kind
			if seen[b.p] {
				t.Errorf("fp8 %v: buffer %d's pointer is another buffer's too", tc.fp8, i)
			}
			seen[b.p] = true
		}
		// Per DeltaNet layer: the conv's last 3 inputs of 1,024 channels
		// (12,288) and 4 heads' 128 × 128 f32 states (262,144).
		if want := [4]uint64{tc.kv, 3 * (1024*3*4 + 4*128*128*4), fixed, chunk}; sum != want {
			t.Errorf("fp8 %v: KV, state, scratch bytes %v, want %v", tc.fp8, sum, want)
		}
	}
}
