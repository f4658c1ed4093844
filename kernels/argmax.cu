// argmax.cu: greedy token selection on the device.
//
// Why it looks like this: the captured decode graph must hand back only a
// 4-byte token and feed it to the next step without the host, so argmax runs
// on the device, writes the token into the device counters and ends the
// step there (memra_counters, see common.cuh). Two passes keep it deterministic
// and wide: argmax_partial gives each block a fixed chunk of 8192 logits, and
// argmax_final (one block) reduces the partials in a fixed tree.
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

// part_val: [(n+8191)/8192] f32; part_idx: same, int32; logits: [n] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ARGMAX_THREADS)
argmax_partial(float* part_val, int* part_idx, const float* logits, int n) {
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
    memra_argmax_put(part_val, part_idx, bv, bi);
}

// out: [1] int32 (the token, MEMRA_NO_TOKEN when every logit is NaN); ring:
// null, or the host's ring of tokens (memra_end_step); ctr: null or one
// memra_counters, which then gets token = the winner and pos, t_kv and step
// one higher (the end of a device-counter step: one launch fewer than a
// kernel of its own); part_*: from argmax_partial with the same n
extern "C" __global__ void __launch_bounds__(MEMRA_ARGMAX_THREADS)
argmax_final(int* out, int* ring, int* ctr, const float* part_val, const int* part_idx, int n) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int parts = memra_argmax_parts(n);
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    for (int p = threadIdx.x; p < parts; p += MEMRA_ARGMAX_THREADS) {
        if (memra_better(part_val[p], part_idx[p], bv, bi)) {
            bv = part_val[p];
            bi = part_idx[p];
        }
    }
    memra_argmax_block(&bv, &bi);
    if (threadIdx.x == 0) {
        memra_end_step(out, ring, ctr, (bi == 0x7fffffff) ? MEMRA_NO_TOKEN : bi);
    }
}
