package gpu

import "fmt"

// splitKeys is the number of keys one flash-decoding split covers before the
// split count is capped: n_splits = ceil(t_kv / 64).
const splitKeys = 64

// Bucket is the attention launch geometry of one step: which split kernel
// variant runs (FAVec: 16-byte K/V loads) and over how many splits. A graph
// captured for a bucket replays correctly for every t_kv in that bucket,
// because the kernels read the actual t_kv from the device counter and derive
// their key ranges from it and NSplits.
type Bucket struct {
	FAVec   bool
	NSplits int
}

func (b Bucket) String() string { return fmt.Sprintf("(%v, %d)", b.FAVec, b.NSplits) }

// maxSplits caps n_splits so that one attention layer launches at most about
// three blocks per SM: the vector split kernels hold 168 registers × 128
// threads, so three blocks fit on an SM, and splits beyond that fill no idle
// SM but add partials for the combine to read. With the cap, contexts longer
// than maxSplits·64 keys stay in one bucket (chunks grow instead), so long
// generations stop re-capturing.
func maxSplits(sms, nKV int) int {
	if nKV < 1 {
		nKV = 1
	}
	return max(1, 3*sms/nKV)
}

// splitHeads returns hpb, the q heads one attn_split block serves (at most
// g, the kernel's register budget, and at most the KV head's group): the
// most that still give every SM a block of the layer, or 1 when no choice
// does. At short contexts the splits alone leave SMs idle (9B at 1k: 16
// splits × 4 KV heads = 64 blocks on 132 SMs), and one head per block puts
// them to work with a quarter of the per-head chain each (perf.md step 33);
// where the splits fill the GPU, whole groups read each K/V row once. Of
// the choices with the same block count the smallest is taken (even tiles).
// A head's arithmetic does not depend on hpb.
func splitHeads(nSplits, nHead, nKV, g, sms int) int {
	nKV = max(1, nKV)
	group := max(1, nHead/nKV)
	hpb, blocks := 1, nKV*nSplits*group
	for h := 2; h <= min(g, group); h++ {
		if b := nKV * nSplits * ((group + h - 1) / h); b >= sms && b < blocks {
			hpb, blocks = h, b
		}
	}
	return hpb
}

// BucketKey returns (fa_vec, n_splits) for an attention step over tKV keys:
// the vector kernel when the head dim holds whole 16-byte loads (8 f16 or
// 16 e4m3 values per lane), and ceil(tKV/64) splits capped by the SM count.
func BucketKey(tKV, headDim, nKVHeads int, kvFP8 bool, sms int) (faVec bool, nSplits int) {
	per := 8
	if kvFP8 {
		per = 16
	}
	faVec = headDim%per == 0
	nSplits = max(1, (tKV+splitKeys-1)/splitKeys)
	return faVec, min(nSplits, maxSplits(sms, nKVHeads))
}

// BucketKey is the package BucketKey with this model's head dim, KV heads,
// KV type and GPU.
func (g *Model) BucketKey(tKV int) Bucket {
	v, n := BucketKey(tKV, g.cfg.HeadDimK, g.cfg.NHeadKV, g.opt.KVFP8, g.e.Info().SMs)
	return Bucket{FAVec: v, NSplits: n}
}
