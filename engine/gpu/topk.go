package gpu

import (
	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/kernels"
)

// topKBlocks is how many topk_select blocks a pass over n pairs launches.
func topKBlocks(n int) int { return (n + kernels.TopKSlice - 1) / kernels.TopKSlice }

// topKScratchPairs is the size, in pairs, of each of the two buffers that
// hold the survivors between passes over n logits: the first pass's output,
// the largest.
func topKScratchPairs(n int) int { return topKBlocks(n) * kernels.TopKMax }

// topK launches the top-k passes over logits [n] f32: topk_select until one
// block is left, which writes top ([TopKMax] f32 values, then [TopKMax]
// int32 ids, best first). scratch holds two buffers of topKScratchPairs(n)
// pairs, [pairs] f32 then [pairs] int32 each, used in turn. A 248k
// vocabulary takes two passes (61 blocks, then one over their 3,904
// survivors).
func topK(k *Kernels, top, scratch, logits cuda.DevPtr, n int) error {
	pairs := uint64(topKScratchPairs(n))
	bufs := [2]cuda.DevPtr{scratch, scratch.Add(8 * pairs)}
	inV, inI := logits, cuda.DevPtr(0)
	for pass := 0; ; pass++ {
		out, room := bufs[pass%2], pairs
		last := topKBlocks(n) == 1
		if last {
			out, room = top, kernels.TopKMax
		}
		outI := out.Add(4 * room)
		if err := k.TopKSelect(out, outI, inV, inI, int32(n)); err != nil {
			return err
		}
		if last {
			return nil
		}
		inV, inI, n = out, outI, topKBlocks(n)*kernels.TopKMax
	}
}
