package gpu

import (
	"fmt"

	"github.com/memra-ai/memra/kernels"
)

// splitKeys is the number of keys one flash-decoding split covers before the
// split count is capped: n_splits = ceil(t_kv / 64).
const splitKeys = 64

// Bucket is the attention launch geometry of one step: which split kernel
// variant runs (FAVec: vector K/V loads, 16 bytes of f16 or 8 of e4m3) and
// over how many splits. A graph captured for a bucket replays correctly for
// every t_kv in that bucket, because the kernels read the actual t_kv from
// the device counter and derive their key ranges from it and NSplits.
type Bucket struct {
	FAVec   bool
	NSplits int
}

func (b Bucket) String() string { return fmt.Sprintf("(%v, %d)", b.FAVec, b.NSplits) }

// splitWave is how many attention split blocks run at once on sms SMs: one
// wave, kernels.AttnSplitBlocksPerSM an SM.
func splitWave(sms int) int { return kernels.AttnSplitBlocksPerSM * sms }

// maxSplits caps n_splits so that one attention layer launches at most about
// one wave of split blocks (wave: splitWave): splits beyond that fill no idle
// SM but add partials for the combine to read. With the cap, contexts longer
// than maxSplits·64 keys stay in one bucket (chunks grow instead), so long
// generations stop re-capturing.
func maxSplits(wave, nKV int) int {
	if nKV < 1 {
		nKV = 1
	}
	return max(1, wave/nKV)
}

// splitHeads returns hpb, the q heads one attn_split block serves: the
// fewest (so the most blocks) whose grid still fits one wave (splitWave); at
// most g, the kernel's register budget, and the KV head's group, which is
// also what it returns when nothing fits. At short contexts the splits alone
// leave SMs idle (9B at 1k: 17 splits × 4 KV heads = 68 blocks of 4 q heads
// on 132 SMs); fewer heads per block put them to work, each block with a
// shorter chain. Past one wave a
// block waits for a slot, so beyond it whole groups read each K/V row once
// (perf.md step 33). A head's arithmetic does not depend on hpb.
func splitHeads(nSplits, nHead, nKV, g, wave int) int {
	nKV = max(1, nKV)
	group := max(1, nHead/nKV)
	top := max(1, min(g, group))
	for h := 1; h < top; h++ {
		if nKV*nSplits*((group+h-1)/h) <= wave {
			return h
		}
	}
	return top
}

// BucketKey returns (fa_vec, n_splits) for an attention step over tKV keys:
// the vector kernel when the head dim holds whole vectors of 8 values (a
// lane's 16-byte f16 or 8-byte e4m3 load), and ceil(tKV/64) splits capped by
// the SM count.
func BucketKey(tKV, headDim, nKVHeads, sms int) (faVec bool, nSplits int) {
	faVec = headDim%8 == 0
	nSplits = max(1, (tKV+splitKeys-1)/splitKeys)
	return faVec, min(nSplits, maxSplits(splitWave(sms), nKVHeads))
}

// BucketKey is the package BucketKey with this model's head dim, KV heads
// and GPU (the SMs it loaded with, g.sms, as splitGeom takes them).
func (g *Model) BucketKey(tKV int) Bucket {
	v, n := BucketKey(tKV, g.cfg.HeadDimK, g.cfg.NHeadKV, g.sms)
	return Bucket{FAVec: v, NSplits: n}
}
