// topk.cu: the k most likely tokens on the device, for sampling.
//
// Why it looks like this: top-k sampling (the CLI's default, k = 40) reads
// only the k largest logits, so a sampled step needs k ids and values (512
// bytes at k = 64), not the vocabulary's logits (1 MB at 248k). Each block
// takes one slice of MEMRA_TOPK_SLICE (value, id) pairs and keeps its first
// MEMRA_TOPK_MAX in order; the same kernel over the blocks' survivors (one
// block up to 64 x 4096 = 262,144 logits, another pass beyond) leaves the
// answer. The order is total and is the host's (engine/sample TopK): value
// descending, NaN after every number, equal values (and NaNs) by lower id;
// slots past the end (id -1) come last. So the result is the host's top k,
// bit for bit, whatever the block count.
//
// A block selects, then sorts only what it keeps: every pair gets a 64-bit
// key, larger meaning earlier in that order and no two alike (the value's
// order-preserving bits above, the id's complement or the empty slot's index
// below), and a radix select over the key's bytes from the top finds the
// MEMRA_TOPK_MAX-th largest: a 256-bin histogram of one byte per round
// (lanes with the same byte add once, __match_any_sync), one warp's scan of
// it, and the round ends as soon as the bin at the boundary holds exactly
// what is still wanted (usually after three bytes; at most eight). The kept
// pairs then go to the place their rank says. A bitonic sort of the whole
// slice took 48 us a pass, instruction-bound in its 78 compare stages
// (docs/perf.md step 52).
#include "common.cuh"

static_assert(MEMRA_TOPK_SLICE % MEMRA_TOPK_THREADS == 0, "a thread holds a whole number of the slice's pairs");
static_assert(MEMRA_TOPK_MAX <= MEMRA_TOPK_THREADS, "one thread places each kept pair");

// The rank key of (v, id) at slice slot s: empty slots (id < 0) lowest and
// each its own (the slot), NaNs next, then numbers by value (-0 as +0);
// ties by lower id, whose complement fills the low half.
__device__ __forceinline__ unsigned long long memra_topk_key(float v, int id, int s) {
    if (id < 0) return (unsigned long long)s;
    unsigned int hi = 1u; // NaN
    if (!isnan(v)) {
        unsigned int b = __float_as_uint(v);
        if (b == 0x80000000u) b = 0u;
        hi = (b & 0x80000000u) ? ~b : (b | 0x80000000u); // -Inf: 0x007fffff, above 1
    }
    return ((unsigned long long)hi << 32) | (unsigned long long)(~(unsigned int)id);
}

// The smallest of a block's MEMRA_TOPK_MAX largest keys, its threads
// holding PER each: a radix select over the key's bytes from the top. The
// keys above zero must differ; zeros (left out) may repeat, and so long as
// more than MEMRA_TOPK_MAX keys are not zero the boundary is one of those,
// and exactly MEMRA_TOPK_MAX keys reach it. Every thread of the block
// calls it (barriers inside) and gets the same boundary.
template <int THREADS, int PER>
__device__ __forceinline__ unsigned long long memra_topk_boundary(const unsigned long long (&key)[PER]) {
    __shared__ __align__(16) int hist[256];
    __shared__ int pick_digit, pick_above, pick_count;
    const int lane = threadIdx.x & 31;
    // prefix holds the chosen bytes above byte p, need how many keys under
    // that prefix are still wanted.
    unsigned long long prefix = 0, mask = 0;
    int need = MEMRA_TOPK_MAX;
    for (int p = 7; p >= 0; p--) {
        for (int b = threadIdx.x; b < 256; b += THREADS) hist[b] = 0;
        __syncthreads();
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const bool cand = (key[j] & mask) == prefix;
            const unsigned int d = (unsigned int)(key[j] >> (8 * p)) & 255u;
            const unsigned int peers = __match_any_sync(MEMRA_FULL_MASK, cand ? d : 0xffffffffu);
            if (cand && lane == __ffs(peers) - 1) atomicAdd(&hist[d], __popc(peers));
        }
        __syncthreads();
        if (threadIdx.x < 32) {
            // Lane l holds bins 8l..8l+7; above = keys in higher bins.
            int h[8], own = 0;
#pragma unroll
            for (int b = 0; b < 8; b++) {
                h[b] = hist[8 * lane + b];
                own += h[b];
            }
            int above = own; // inclusive suffix sum over lanes l..31, then exclusive
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const int x = __shfl_down_sync(MEMRA_FULL_MASK, above, o);
                if (lane + o < 32) above += x;
            }
            above -= own;
#pragma unroll
            for (int b = 7; b >= 0; b--) {
                if (above < need && above + h[b] >= need) {
                    pick_digit = 8 * lane + b;
                    pick_above = above;
                    pick_count = h[b];
                }
                above += h[b];
            }
        }
        __syncthreads();
        const int d = pick_digit;
        need -= pick_above;
        prefix |= (unsigned long long)d << (8 * p);
        mask |= 255ull << (8 * p);
        if (pick_count == need) break; // the whole bin is wanted: keys >= prefix are the top
    }
    return prefix;
}

// Stages the keys at or above the boundary b, with their values and ids, in
// kk, kv, ki, in any order; *kept (0 before, shared) ends as their count.
// With keys that differ at most MEMRA_TOPK_MAX reach a boundary from
// memra_topk_boundary; more only where ids repeat, which no caller passes
// and which the check keeps inside the arrays.
template <int PER>
__device__ __forceinline__ void memra_topk_keep(int* kept, unsigned long long* kk, float* kv, int* ki,
                                                const unsigned long long (&key)[PER], const float (&val)[PER],
                                                const int (&id)[PER], unsigned long long b) {
#pragma unroll
    for (int j = 0; j < PER; j++) {
        if (key[j] >= b) {
            const int at = atomicAdd(kept, 1);
            if (at >= MEMRA_TOPK_MAX) continue;
            kk[at] = key[j];
            kv[at] = val[j];
            ki[at] = id[j];
        }
    }
}

// Writes the held pairs staged by memra_topk_keep to out_v, out_i in key
// order, best first (a pair's place is how many held keys beat it: the
// keys differ), and value 0, id -1 for an empty slot and past the held
// ones. Threads 0..MEMRA_TOPK_MAX-1 each place one.
__device__ __forceinline__ void memra_topk_place(float* out_v, int* out_i, const unsigned long long* kk,
                                                 const float* kv, const int* ki, int held) {
    if (threadIdx.x >= MEMRA_TOPK_MAX) return;
    int rank = threadIdx.x;
    bool full = false;
    if (rank < held) {
        const unsigned long long mine = kk[threadIdx.x];
        rank = 0;
        for (int j = 0; j < held; j++) rank += kk[j] > mine;
        full = ki[threadIdx.x] >= 0;
    }
    out_v[rank] = full ? kv[threadIdx.x] : 0.0f;
    out_i[rank] = full ? ki[threadIdx.x] : -1;
}

// out_v, out_i: [gridDim.x][MEMRA_TOPK_MAX] f32, int32: each slice's best in
// order (value 0, id -1 past the slice's end); in_v: [n] f32; in_i: [n]
// int32 ids, or null for ids 0..n-1 (the logits themselves).
extern "C" __global__ void __launch_bounds__(MEMRA_TOPK_THREADS)
topk_select(float* out_v, int* out_i, const float* in_v, const int* in_i, int n) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    constexpr int PER = MEMRA_TOPK_SLICE / MEMRA_TOPK_THREADS;
    __shared__ int kept;
    __shared__ __align__(16) unsigned long long kk[MEMRA_TOPK_MAX];
    __shared__ float kv[MEMRA_TOPK_MAX];
    __shared__ int ki[MEMRA_TOPK_MAX];
    const int base = blockIdx.x * MEMRA_TOPK_SLICE;
    unsigned long long key[PER];
    float val[PER];
    int id[PER];
#pragma unroll
    for (int j = 0; j < PER; j++) {
        const int s = threadIdx.x + j * MEMRA_TOPK_THREADS, g = base + s;
        const bool in = g < n;
        val[j] = in ? in_v[g] : 0.0f;
        id[j] = in ? (in_i ? in_i[g] : g) : -1;
        key[j] = memra_topk_key(val[j], id[j], s);
    }
    const unsigned long long prefix = memra_topk_boundary<MEMRA_TOPK_THREADS, PER>(key);
    // Exactly MEMRA_TOPK_MAX keys reach the boundary (the keys differ).
    if (threadIdx.x == 0) kept = 0;
    __syncthreads();
    memra_topk_keep<PER>(&kept, kk, kv, ki, key, val, id, prefix);
    __syncthreads();
    memra_topk_place(out_v + blockIdx.x * MEMRA_TOPK_MAX, out_i + blockIdx.x * MEMRA_TOPK_MAX, kk, kv, ki, MEMRA_TOPK_MAX);
}
