// argmax.cu: greedy token selection on the device.
//
// Why it looks like this: the captured decode graph must hand back only a
// 4-byte token and feed it to the next step without the host, so argmax runs
// on the device, writes the token into the device counters and ends the
// step there (memra_counters, see common.cuh). Two passes keep it deterministic
// and wide: argmax_partial gives each block a fixed chunk of 8192 logits, and
// the block that finishes last reduces the partials in a fixed tree
// (memra_argmax_finish), so that the step's end costs no launch of its own:
// a graph node is ~1.2 us even with nothing to do (docs/perf.md step 136).
// Order: larger value wins; equal values -> lower index wins; NaN never wins
// (an all-NaN vector yields MEMRA_NO_TOKEN, and 0 in the counters: see
// memra_end_step). Both kernels derive the partial count from n, so they
// always agree.
#include "common.cuh"

// Is (v, i) better than (bv, bi)?
__device__ __forceinline__ bool memra_better(float v, int i, float bv, int bi) {
    return v > bv || (v == bv && i < bi);
}

// Block tree over MEMRA_ARGMAX_THREADS threads; thread 0 gets the winner.
__device__ __forceinline__ void memra_argmax_block(float* v, int* i) {
    __shared__ float sv[MEMRA_ARGMAX_THREADS / 32];
    __shared__ int si[MEMRA_ARGMAX_THREADS / 32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float ov = __shfl_xor_sync(MEMRA_FULL_MASK, *v, off);
        const int oi = __shfl_xor_sync(MEMRA_FULL_MASK, *i, off);
        if (memra_better(ov, oi, *v, *i)) {
            *v = ov;
            *i = oi;
        }
    }
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        sv[warp] = *v;
        si[warp] = *i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < MEMRA_ARGMAX_THREADS / 32; w++) {
            if (memra_better(sv[w], si[w], *v, *i)) {
                *v = sv[w];
                *i = si[w];
            }
        }
    }
}

// The partials a vocabulary of n takes: one an argmax chunk.
__device__ __forceinline__ int memra_argmax_parts(int n) { return (n + MEMRA_ARGMAX_CHUNK - 1) / MEMRA_ARGMAX_CHUNK; }

// The block's best (v, i) over its threads into its slot of the partials.
__device__ __forceinline__ void memra_argmax_put(float* part_val, int* part_idx, float v, int i) {
    memra_argmax_block(&v, &i);
    if (threadIdx.x == 0) {
        part_val[blockIdx.x] = v;
        part_idx[blockIdx.x] = i;
    }
}

// The partials' winner and the end of the step: out[0] gets the token
// (MEMRA_NO_TOKEN when every logit is NaN) and ctr, when not null, the
// end of a device-counter step (memra_end_step). One block runs it, the
// partials written by the blocks of its own grid (read from the L2).
__device__ __forceinline__ void memra_argmax_finish(int* out, int* ctr, const float* part_val, const int* part_idx, int n) {
    const int parts = memra_argmax_parts(n);
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    for (int p = threadIdx.x; p < parts; p += MEMRA_ARGMAX_THREADS) {
        const float v = __ldcg(part_val + p);
        const int i = __ldcg(part_idx + p);
        if (memra_better(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    memra_argmax_block(&bv, &bi);
    if (threadIdx.x == 0) {
        memra_end_step(out, ctr, (bi == 0x7fffffff) ? MEMRA_NO_TOKEN : bi);
    }
}

// memra_argmax_put, then, where out is not null, memra_argmax_finish by the
// block that finishes last (counted in done, which it sets back to 0 for
// the next launch).
__device__ __forceinline__ void memra_argmax_put_last(float* part_val, int* part_idx, float v, int i, int* out, int* ctr, int* done, int n) {
    memra_argmax_put(part_val, part_idx, v, i);
    if (!out) return;
    __shared__ int last;
    if (threadIdx.x == 0) {
        __threadfence(); // the partial visible before the count
        last = atomicAdd(done, 1) == (int)gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    memra_argmax_finish(out, ctr, part_val, part_idx, n);
    if (threadIdx.x == 0) *done = 0;
}

// part_val: [(n+8191)/8192] f32; part_idx: same, int32; logits: [n] f32;
// out: null (the partials only), or [1] int32 that gets the token, with
// ctr (null or one memra_counters) the end of a device-counter step and
// done ([1] int32, zero before and after) the blocks' count.
extern "C" __global__ void __launch_bounds__(MEMRA_ARGMAX_THREADS)
argmax_partial(float* part_val, int* part_idx, int* out, int* ctr, int* done, const float* logits, int n) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int start = blockIdx.x * MEMRA_ARGMAX_CHUNK;
    const int end = min(n, start + MEMRA_ARGMAX_CHUNK);
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    for (int i = start + threadIdx.x; i < end; i += MEMRA_ARGMAX_THREADS) {
        const float v = logits[i];
        if (memra_better(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    memra_argmax_put_last(part_val, part_idx, bv, bi, out, ctr, done, n);
}
