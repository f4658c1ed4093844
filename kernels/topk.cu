// topk.cu: the k most likely tokens on the device, for sampling.
//
// Why it looks like this: top-k sampling (the CLI's default, k = 40) reads
// only the k largest logits, so a sampled step can send back k ids and
// values (512 bytes at k = 64) instead of the vocabulary's logits (1 MB at
// 248k) and the host's pass over them. Each block sorts one slice of
// MEMRA_TOPK_SLICE (value, id) pairs in shared memory with a bitonic
// network, a fixed sequence of compare-exchanges, and keeps its first
// MEMRA_TOPK_MAX; the same kernel over the blocks' survivors (one block up
// to 64 x 4096 = 262,144 logits, another pass beyond) leaves the answer.
// The order is total and is the host's (engine/sample topK): value
// descending, NaN after every number, equal values (and NaNs) by lower id;
// slots past the end (id -1) come last. So the result is the host's top k,
// bit for bit, whatever the block count.
#include "common.cuh"

// The network needs a power-of-two slice, and the first MEMRA_TOPK_MAX
// places must be written by one thread each.
static_assert((MEMRA_TOPK_SLICE & (MEMRA_TOPK_SLICE - 1)) == 0, "top-k slice must be a power of two");
static_assert(MEMRA_TOPK_MAX <= MEMRA_TOPK_SLICE && MEMRA_TOPK_MAX <= MEMRA_TOPK_THREADS, "top-k survivors per block");

// Does (va, ia) come before (vb, ib)?
__device__ __forceinline__ bool memra_topk_before(float va, int ia, float vb, int ib) {
    if (ia < 0 || ib < 0) return ib < 0 && ia >= 0;
    const bool na = isnan(va), nb = isnan(vb);
    if (na != nb) return nb;
    if (!na && va != vb) return va > vb;
    return ia < ib;
}

// out_v, out_i: [gridDim.x][MEMRA_TOPK_MAX] f32, int32: each slice's best in
// order (id -1 past the slice's end); in_v: [n] f32; in_i: [n] int32 ids, or
// null for ids 0..n-1 (the logits themselves).
extern "C" __global__ void __launch_bounds__(MEMRA_TOPK_THREADS)
topk_sort(float* out_v, int* out_i, const float* in_v, const int* in_i, int n) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ float sv[MEMRA_TOPK_SLICE];
    __shared__ int si[MEMRA_TOPK_SLICE];
    const int base = blockIdx.x * MEMRA_TOPK_SLICE;
    for (int t = threadIdx.x; t < MEMRA_TOPK_SLICE; t += MEMRA_TOPK_THREADS) {
        const int g = base + t;
        const bool in = g < n;
        sv[t] = in ? in_v[g] : 0.0f;
        si[t] = in ? (in_i ? in_i[g] : g) : -1;
    }
    __syncthreads();
    // Bitonic sort into "before" order: stage (k, j) compares i and i + j
    // for every i with bit j clear, ascending where bit k of i is clear.
    for (int k = 2; k <= MEMRA_TOPK_SLICE; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = threadIdx.x; t < MEMRA_TOPK_SLICE / 2; t += MEMRA_TOPK_THREADS) {
                const int i = 2 * t - (t & (j - 1)), p = i + j;
                const float a = sv[i], b = sv[p];
                const int ia = si[i], ib = si[p];
                const bool up = (i & k) == 0;
                if (up ? memra_topk_before(b, ib, a, ia) : memra_topk_before(a, ia, b, ib)) {
                    sv[i] = b;
                    sv[p] = a;
                    si[i] = ib;
                    si[p] = ia;
                }
            }
            __syncthreads();
        }
    }
    if (threadIdx.x < MEMRA_TOPK_MAX) {
        out_v[blockIdx.x * MEMRA_TOPK_MAX + threadIdx.x] = sv[threadIdx.x];
        out_i[blockIdx.x * MEMRA_TOPK_MAX + threadIdx.x] = si[threadIdx.x];
    }
}
