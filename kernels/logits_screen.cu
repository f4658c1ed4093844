// logits_screen.cu: greedy decode's argmax through an 8-bit copy of the
// logits matrix, exact to the bit.
//
// Why it looks like this: the logits matrix is the largest a step reads
// (a third of the 0.8B bf16 step's bytes), yet a greedy step needs only the
// index of its largest product. matvec_q8_0 on a q8_0 copy of it gives
// every a_r within b_r = c_r * |x'|_1 of the logit the 16-bit kernel
// computes: c_r (engine/gpu screen.go) is the row's largest rounding of a
// weight into the copy plus both sums' worst float rounding, |x'|_1 bounds
// the input's 1-norm from above. So no row whose a_r + b_r falls short of
// the largest a_s - b_s can win, and the rows that can (the candidates) get
// their logits summed here exactly as matvec_bf16/_f16 sums them: a lane's
// loads kw*32 + lane + j*128 in order through memra_mv_dot, each warp's
// butterfly, then warps kw = 0..3 added to 0 in order (memra_mv_rows with
// KW = 4). The candidates' best by argmax_partial's order (larger value,
// then lower index; NaN never wins) goes to its partials, which
// argmax_final reduces as before: the token is the full logits' argmax.
// Bounds are rounded outward (__fadd_ru, __fsub_rd, __fmul_ru); a row
// whose bound is not finite (an input or weight that is not, a sum that
// overflowed) is a candidate that raises no lower bound.
//
// Two launches, because the candidates need the largest lower bound of the
// whole vocabulary: logits_screen_bound reduces each argmax chunk's lower
// bounds, logits_screen_verify reads all chunks' and sums its own chunk's
// candidates. Both normalise x in shared memory as the matvecs do
// (memra_mv_input), so they see the x' the products saw.
//
// A sampled step needs the top k = MEMRA_TOPK_MAX logits, values and order,
// not one. Any T that at least k rows' lower bounds reach will do as its
// threshold: each of those rows' logits is at least T, so is every logit
// of the top k, and so is the upper bound of every row among them. Each
// bound block keeps its chunk's m largest lower bounds (m from
// memra_screen_top_m: 2k or more over all the blocks, so that their union
// nearly always holds the k largest of all), and T is the k-th largest of
// that union, which k rows reach: at most the k-th largest lower bound,
// mostly equal to it. With T finite, k candidates have finite logits, so
// the rows that rank among the top k (NaN ones included: a NaN logit has
// no finite bound) are all candidates with their own values; with T = -Inf
// every row is a candidate. So the top k of the candidates' exact logits
// is the full logits' top k, and logits_screen_top selects it itself
// rather than writing a vocabulary of logits for topk_select's two
// launches: each block keeps its candidates' best k (topk_select's order
// and radix select), and the block that finishes last merges the blocks'
// and writes the top k as topk_select's last pass would, bit for bit.
#include "common.cuh"

static_assert(MEMRA_ARGMAX_THREADS == MEMRA_MV_THREADS, "memra_argmax_block reduces the verify block's threads");

// x' in xs (shared memory, cols floats) when the matvecs fused the norm,
// else x itself (the step's xn), and its 1-norm rounded up: a sum of cols
// non-negative floats in any order is within (cols-1)*2^-24 of the true
// one (relative), so the factor 1 + (cols+32)*2^-23 (exact in float:
// cols + 32 < 2^23) covers it.
// big: where c*n1 reaches it, the row counts as unbounded (memra_screen_bounds).
// (Returned by value: through pointers the values went to the stack.)
struct memra_screen_x {
    const float* xp;
    float n1, big;
};

__device__ __forceinline__ memra_screen_x memra_screen_input(float* xs, const float* x, const float* norm_w, int xnorm, float eps, int cols) {
    const float* xp = x;
    if (xnorm) {
        memra_mv_input(xs, x, norm_w, cols, eps);
        xp = xs;
    }
    __shared__ float red[MEMRA_MV_THREADS / 32];
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += MEMRA_MV_THREADS) s += fabsf(xp[i]);
    const float tot = memra_block_sum<MEMRA_MV_THREADS>(s, red);
    return memra_screen_x{xp, __fmul_ru(tot, 1.0f + (float)(cols + 32) * 0x1p-23f), (float)(2 * cols + 32) * 0x1p102f};
}

// Row r's bounds [lo, hi] on its exact logit from the copy's a and the
// row's c: b = c*n1 plus 2^-100 for sums whose terms fell below float's
// normal range (an absolute error of at most 2^-150 a rounding, far fewer
// than 2^50 of them). Not finite: the whole line, so the row stays a
// candidate and raises no lower bound. The bound holds while the 16-bit
// sum does not overflow, which c*n1 < big = (2*cols + 32)*2^102 ensures:
// c >= (2*cols + 32)*2^-24 * max|w| (engine/gpu screen.go's gamma), so
// max|w| * |x'|_1 < 2^126, and no partial sum reaches float's range (a
// copy's sum could cancel back to a finite a where the row's is +Inf).
// Past it, the whole line too.
struct memra_screen_span {
    float lo, hi;
};

__device__ __forceinline__ memra_screen_span memra_screen_bounds(float a, float c, float n1, float big) {
    const float cn = __fmul_ru(c, n1);
    const float b = __fadd_ru(cn, 0x1p-100f);
    const float lo = __fsub_rd(a, b), hi = __fadd_ru(a, b);
    // Finite lo and hi need finite a and b, but not the other way round;
    // cn < big is false for NaN too.
    if (cn < big && isfinite(a) && isfinite(lo) && isfinite(hi)) return memra_screen_span{lo, hi};
    return memra_screen_span{-INFINITY, INFINITY};
}

// A thread's rows of its block's chunk of R*256 rows: start + threadIdx.x
// + j*256, j < R; their a and c loaded all at once (the chunk in one round
// trip, not R of them). Rows past n read as unbounded (a = NaN): they raise
// no lower bound, and the verify leaves them out. The bound and greedy
// verify blocks take argmax chunks (R = MEMRA_SCREEN_ROWS); the top
// kernel's blocks a quarter of one (MEMRA_SCREEN_TOP_CHUNK), so that its
// few hundred candidates' sums spread over four times the SMs.
#define MEMRA_SCREEN_ROWS (MEMRA_ARGMAX_CHUNK / MEMRA_MV_THREADS)
static_assert(MEMRA_SCREEN_TOP_CHUNK % MEMRA_MV_THREADS == 0 && MEMRA_SCREEN_TOP_CHUNK <= MEMRA_ARGMAX_CHUNK, "a thread's rows fit one mask");

template <int R>
struct memra_screen_rows {
    float a[R], c[R];
};

template <int R>
__device__ __forceinline__ void memra_screen_load(memra_screen_rows<R>& t, const float* a, const float* c, int n) {
    const int start = blockIdx.x * R * MEMRA_MV_THREADS + threadIdx.x;
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int r = start + j * MEMRA_MV_THREADS;
        t.a[j] = r < n ? __ldcg(a + r) : __int_as_float(0x7fffffff);
        t.c[j] = r < n ? __ldg(c + r) : INFINITY;
    }
}

// m, the lower bounds each bound block keeps for a sampled step's
// threshold: at least 2k over the blocks, at most k a block.
__device__ __forceinline__ int memra_screen_top_m(int n) {
    const int blocks = memra_argmax_parts(n);
    return min(MEMRA_TOPK_MAX, (2 * MEMRA_TOPK_MAX + blocks - 1) / blocks);
}

// The block's m largest of the threads' l (lower bounds: never NaN), in
// order, into top[0..m): m rounds of the block's largest (value, then
// lower thread) among the values not yet taken, the winner's taken.
__device__ __forceinline__ void memra_screen_block_top(float* top, const float (&l)[MEMRA_SCREEN_ROWS], int m) {
    __shared__ unsigned long long red[MEMRA_MV_THREADS / 32];
    const unsigned int me = MEMRA_MV_THREADS - 1 - threadIdx.x; // larger: lower thread
    unsigned int taken = 0;
    for (int i = 0; i < m; i++) {
        int jj = -1;
        float v = -INFINITY;
#pragma unroll
        for (int j = 0; j < MEMRA_SCREEN_ROWS; j++) {
            if (!((taken >> j) & 1u) && (jj < 0 || l[j] > v)) {
                v = l[j];
                jj = j;
            }
        }
        // The value's order in the key's high half (its bits, flipped so that
        // the unsigned order is the float one), the thread in the low.
        const unsigned int b = __float_as_uint(v);
        unsigned long long k = (unsigned long long)((b & 0x80000000u) ? ~b : (b | 0x80000000u)) << 32 | me;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) k = max(k, __shfl_xor_sync(MEMRA_FULL_MASK, k, off));
        if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = k;
        __syncthreads();
        k = red[0];
#pragma unroll
        for (int w = 1; w < MEMRA_MV_THREADS / 32; w++) k = max(k, red[w]);
        __syncthreads();
        if ((unsigned int)k == me && jj >= 0) taken |= 1u << jj;
        if (threadIdx.x == 0) {
            const unsigned int o = (unsigned int)(k >> 32);
            top[i] = __uint_as_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
        }
    }
}

// part_lo: [(n+8191)/8192] f32, chunk p's largest lower bound; part_top:
// null, or [(n+8191)/8192][m] f32 (m = memra_screen_top_m(n)) that gets
// chunk p's m largest, for a sampled step's threshold; a: [n] f32
// (matvec_q8_0 of the copy on x'); c: [n] f32; x: [cols] f32.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
logits_screen_bound(float* part_lo, float* part_top, const float* a, const float* c, const float* x, const float* norm_w, int xnorm,
                    float eps, int n, int cols) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_screen_rows<MEMRA_SCREEN_ROWS> t;
    memra_screen_load(t, a, c, n);
    const memra_screen_x in = memra_screen_input(memra_xs, x, norm_w, xnorm, eps, cols);
    float l[MEMRA_SCREEN_ROWS];
    float best = -INFINITY;
#pragma unroll
    for (int j = 0; j < MEMRA_SCREEN_ROWS; j++) {
        l[j] = memra_screen_bounds(t.a[j], t.c[j], in.n1, in.big).lo;
        best = fmaxf(best, l[j]);
    }
    __shared__ float red[MEMRA_MV_THREADS / 32];
    best = memra_block_max<MEMRA_MV_THREADS>(best, red);
    if (threadIdx.x == 0) part_lo[blockIdx.x] = best;
    if (part_top) {
        const int m = memra_screen_top_m(n);
        memra_screen_block_top(part_top + (long long)blockIdx.x * m, l, m);
    }
}

// The k-th largest of the bound blocks' part_top (u = blocks * m values),
// or -Inf where u < k: each value's rank (larger values, then equal ones
// at lower indices, before it) found by one thread, every thread of the
// block getting the value of rank k-1. The values are staged in shared
// memory where they fit (u <= 2 * 256 up to a 3M vocabulary).
__device__ __forceinline__ float memra_screen_kth(const float* part_top, int n) {
    constexpr int STAGE = 2 * MEMRA_MV_THREADS;
    const int u = memra_argmax_parts(n) * memra_screen_top_m(n);
    __shared__ float kth, vs[STAGE];
    const float* v = part_top;
    if (u <= STAGE) {
        for (int i = threadIdx.x; i < u; i += MEMRA_MV_THREADS) vs[i] = __ldcg(part_top + i);
        v = vs;
    }
    if (threadIdx.x == 0) kth = -INFINITY;
    __syncthreads();
    if (u >= MEMRA_TOPK_MAX) {
        for (int i = threadIdx.x; i < u; i += MEMRA_MV_THREADS) {
            const float vi = v[i];
            int rank = 0;
            for (int j = 0; j < u; j++) rank += v[j] > vi || (v[j] == vi && j < i);
            if (rank == MEMRA_TOPK_MAX - 1) kth = vi;
        }
    }
    __syncthreads();
    return kth;
}

// Row r's logit as memra_mv_rows<16-bit KIND, R, KW = 4> sums it on the
// 16-byte path (XG: x in global memory, as there without the fused norm),
// every lane of the warp returning it.
template <int KIND, bool XG>
__device__ __forceinline__ float memra_screen_exact(const void* W, long long r, const float* x, int cols) {
    constexpr int KW = 4;
    const uint4* row = reinterpret_cast<const uint4*>(reinterpret_cast<const unsigned char*>(W) + r * (long long)cols * 2);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const int lane = threadIdx.x & 31, nv = cols / 8;
    float s = 0.0f;
#pragma unroll 1
    for (int kw = 0; kw < KW; kw++) {
        float acc = 0.0f;
        for (int v = kw * 32 + lane; v < nv; v += KW * 32) acc = memra_mv_dot<KIND, XG>(memra_ldg16(row + v), x4 + 2 * v, 0.0f, acc);
        s += memra_warp_sum(acc);
    }
    return s;
}

// A sampled step's top k from the top kernel's blocks, each thread holding
// R rows (start + threadIdx.x + j*256), those with bit j of mine
// candidates with their exact logits v[j]. Each block appends its
// candidates' best min(k, count) to list ([blocks*k] f32 values, then
// [blocks*k] int32 ids) at the place it reserves in done[1]; the last
// block to count itself into done[0] merges the list, 256*R at a time
// with the best k so far, writes top ([k] f32 values, then [k] int32 ids)
// best first, value 0 and id -1 past the candidates (fewer than k only
// where n < k), as topk_select's last pass writes it, and sets done back
// to 0 for the next launch. The keys are topk_select's and no two alike,
// so the blocks' timing moves pairs in the list but changes no choice.
template <int R>
__device__ __forceinline__ void memra_screen_top_merge(float* top, float* list, int* done, unsigned int mine, const float (&v)[R]) {
    constexpr int K = MEMRA_TOPK_MAX, T = MEMRA_MV_THREADS;
    float* list_v = list;
    int* list_i = reinterpret_cast<int*>(list + (long long)gridDim.x * K);
    __shared__ int count, kept, at0, last;
    __shared__ __align__(16) unsigned long long kk[K];
    __shared__ float kv[K];
    __shared__ int ki[K];
    if (threadIdx.x == 0) count = kept = 0;
    __syncthreads();
    const int start = blockIdx.x * R * T + threadIdx.x;
    unsigned long long key[R];
#pragma unroll
    for (int j = 0; j < R; j++) key[j] = (mine >> j) & 1 ? memra_topk_key(v[j], start + j * T, 0) : 0ull;
    if (mine) atomicAdd(&count, __popc(mine));
    __syncthreads();
    const int cands = count;
    // More than k: the best k (a candidate's key is above 0 and its own).
    const unsigned long long bound = cands > K ? memra_topk_boundary<T, R>(key) : 1ull;
    if (threadIdx.x == 0) at0 = atomicAdd(done + 1, min(cands, K));
    __syncthreads();
#pragma unroll
    for (int j = 0; j < R; j++) {
        if (key[j] >= bound) {
            const int at = at0 + atomicAdd(&kept, 1);
            list_v[at] = v[j];
            list_i[at] = start + j * T;
        }
    }
    // The block's pairs visible before its count (the last block reads them).
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1) == (int)gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const int total = __ldcg(done + 1);
    int held = 0; // the best k so far, in kk, kv, ki
    for (int q0 = 0; q0 < total; q0 += R * T) {
        // Each thread's R pairs of the list and, below held, one of the best so far.
        unsigned long long mk[R + 1];
        float mv[R + 1];
        int mi[R + 1];
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int q = q0 + threadIdx.x + j * T;
            const bool in = q < total;
            mv[j] = in ? __ldcg(list_v + q) : 0.0f;
            mi[j] = in ? __ldcg(list_i + q) : -1;
            mk[j] = in ? memra_topk_key(mv[j], mi[j], 0) : 0ull;
        }
        const bool mine_held = (int)threadIdx.x < held;
        mk[R] = mine_held ? kk[threadIdx.x] : 0ull;
        mv[R] = mine_held ? kv[threadIdx.x] : 0.0f;
        mi[R] = mine_held ? ki[threadIdx.x] : -1;
        const int pairs = min(total - q0, R * T) + held;
        const unsigned long long b = pairs > K ? memra_topk_boundary<T, R + 1>(mk) : 1ull;
        __syncthreads(); // every thread has read the best so far
        if (threadIdx.x == 0) kept = 0;
        __syncthreads();
        memra_topk_keep<R + 1>(&kept, kk, kv, ki, mk, mv, mi, b);
        __syncthreads();
        held = min(pairs, K);
    }
    __syncthreads(); // every thread has read total before done is reset
    memra_topk_place(top, reinterpret_cast<int*>(top + K), kk, kv, ki, held);
    if (threadIdx.x == 0) done[0] = done[1] = 0;
}

// Each warp takes its 32 threads' rows j at a time (j = 0..31); their
// candidates, one by one, get the whole warp's exact sum, into exact when
// it is not null (the tests'). TOP (a sampled step's screen): the
// threshold is the k-th largest of the bound blocks' part_top in lim, a
// row that is no candidate gets -Inf in exact, and the block's candidates
// and their logits go to memra_screen_top_merge; else (greedy) it is the
// largest of the chunks' lower bounds in lim, and the candidates' argmax
// goes to the partials.
template <int KIND, bool TOP>
__device__ __forceinline__ void memra_screen_verify(float* part_val, int* part_idx, float* exact, float* top, float* list, int* done,
                                                    const float* a, const float* c, const float* lim, const void* W, const float* x,
                                                    const float* norm_w, int xnorm, float eps, int n, int cols) {
    constexpr int R = (TOP ? MEMRA_SCREEN_TOP_CHUNK : MEMRA_ARGMAX_CHUNK) / MEMRA_MV_THREADS;
    memra_screen_rows<R> t;
    memra_screen_load(t, a, c, n);
    float thr;
    if (TOP) {
        thr = memra_screen_kth(lim, n);
    } else {
        const int parts = memra_argmax_parts(n);
        thr = -INFINITY;
        for (int p = threadIdx.x & 31; p < parts; p += 32) thr = fmaxf(thr, __ldcg(lim + p));
        thr = memra_warp_max(thr);
    }
    const memra_screen_x in = memra_screen_input(memra_xs, x, norm_w, xnorm, eps, cols);
    const float* xp = in.xp;
    unsigned int mine = 0; // bit j: row j of this thread's is a candidate
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int r = blockIdx.x * R * MEMRA_MV_THREADS + threadIdx.x + j * MEMRA_MV_THREADS;
        const bool cand = r < n && memra_screen_bounds(t.a[j], t.c[j], in.n1, in.big).hi >= thr;
        mine |= (unsigned int)cand << j;
        if (TOP && exact && r < n && !cand) exact[r] = -INFINITY;
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    // The candidates' rows asked of the L2 at once: each sum below then
    // waits on the L2, not on HBM, at each of its four warps' steps. TOP's
    // threads hold fewer rows and more candidates: all of a warp's asked
    // for before its first sum; the greedy verify's a j at a time.
    auto prefetch = [&](int j) {
        const int base = blockIdx.x * R * MEMRA_MV_THREADS + j * MEMRA_MV_THREADS + warp * 32;
        for (unsigned int p = __ballot_sync(MEMRA_FULL_MASK, (mine >> j) & 1); p; p &= p - 1) {
            const unsigned char* row = reinterpret_cast<const unsigned char*>(W) + (long long)(base + __ffs(p) - 1) * cols * 2;
            for (int off = lane * 128; off < cols * 2; off += 32 * 128) memra_prefetch_l2(row + off);
        }
    };
    if (TOP) {
        for (int j = 0; j < R; j++) prefetch(j);
    }
    __shared__ float sums[TOP ? R * MEMRA_MV_THREADS : 1]; // TOP: the block's candidates' logits, row by row
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    for (int j = 0; j < R; j++) {
        const int base = blockIdx.x * R * MEMRA_MV_THREADS + j * MEMRA_MV_THREADS + warp * 32;
        if (!TOP) prefetch(j);
        for (unsigned int m = __ballot_sync(MEMRA_FULL_MASK, (mine >> j) & 1); m; m &= m - 1) {
            const int rr = base + __ffs(m) - 1;
            const float v = xnorm ? memra_screen_exact<KIND, false>(W, rr, xp, cols) : memra_screen_exact<KIND, true>(W, rr, xp, cols);
            if (exact && lane == 0) exact[rr] = v;
            if (TOP) {
                if (lane == 0) sums[j * MEMRA_MV_THREADS + warp * 32 + __ffs(m) - 1] = v;
            } else if (memra_better(v, rr, bv, bi)) {
                bv = v;
                bi = rr;
            }
        }
    }
    if (TOP) {
        __syncthreads();
        float v[R];
#pragma unroll
        for (int j = 0; j < R; j++) v[j] = sums[j * MEMRA_MV_THREADS + threadIdx.x];
        memra_screen_top_merge<R>(top, list, done, mine, v);
    } else {
        memra_argmax_put(part_val, part_idx, bv, bi);
    }
}

// part_val, part_idx: argmax_partial's, for argmax_final; exact: null, or
// [n] f32 that gets each candidate's logit (the tests'); part_lo:
// logits_screen_bound's; W: [n][cols] bf16 or f16, the logits matrix;
// cols % 32 == 0, W and x 16-byte aligned (the 16-byte path).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
logits_screen_verify_bf16(float* part_val, int* part_idx, float* exact, const float* a, const float* c, const float* part_lo,
                          const void* W, const float* x, const float* norm_w, int xnorm, float eps, int n, int cols) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_screen_verify<MEMRA_MV_BF16, false>(part_val, part_idx, exact, nullptr, nullptr, nullptr, a, c, part_lo, W, x, norm_w, xnorm, eps, n,
                                              cols);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
logits_screen_verify_f16(float* part_val, int* part_idx, float* exact, const float* a, const float* c, const float* part_lo,
                         const void* W, const float* x, const float* norm_w, int xnorm, float eps, int n, int cols) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_screen_verify<MEMRA_MV_F16, false>(part_val, part_idx, exact, nullptr, nullptr, nullptr, a, c, part_lo, W, x, norm_w, xnorm, eps, n,
                                             cols);
}

// top: [k] f32 values, then [k] int32 ids: the full logits' top k =
// MEMRA_TOPK_MAX, as topk_select over them writes it; list: [blocks*k]
// f32, then [blocks*k] int32 (blocks = gridDim.x), the blocks' best; done:
// [2] int32, zero before the launch and after it; exact: null, or [n] f32
// that gets each row's exact logit where its upper bound reaches the
// threshold, else -Inf (the tests'); part_top: logits_screen_bound's, whose
// k-th largest is the threshold.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
logits_screen_top_bf16(float* top, float* list, int* done, float* exact, const float* a, const float* c, const float* part_top, const void* W,
                       const float* x, const float* norm_w, int xnorm, float eps, int n, int cols) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_screen_verify<MEMRA_MV_BF16, true>(nullptr, nullptr, exact, top, list, done, a, c, part_top, W, x, norm_w, xnorm, eps, n, cols);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
logits_screen_top_f16(float* top, float* list, int* done, float* exact, const float* a, const float* c, const float* part_top, const void* W,
                      const float* x, const float* norm_w, int xnorm, float eps, int n, int cols) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_screen_verify<MEMRA_MV_F16, true>(nullptr, nullptr, exact, top, list, done, a, c, part_top, W, x, norm_w, xnorm, eps, n, cols);
}
