// attention_mma.cu: attention.cu's flash-decoding split for head_dim 256 with
// both of its products on the tensor cores.
//
// Why it looks like this: past a few thousand keys the CUDA-core splits are
// bound by their work per key (~640 instructions a trip of 4 keys, perf.md
// steps 62-65), not by the cache's bytes, which over e4m3 are half f16's.
// Here a warp takes 8 keys a trip and runs the scores S = Q K^T as
// mma.m16n8k16 (A = the block's q heads, B = the 8 key rows as loaded) and
// the update O^T += V^T P^T as mma.m16n8k8 (A = 16 dims of the 8 value rows,
// B = the weights). f32's accuracy is kept as mma.cuh keeps it for x: q,
// scaled by a power of two per head into f16's range, and each weight,
// scaled likewise, are split into hi + lo f16 halves (22 significant bits);
// q's halves are A's rows h and h + 8, the weights' halves B's columns 2h and
// 2h + 1, so one product carries both and every sum is f32. Nothing is
// staged: a lane loads 16 bytes (8 dims) of a key row and hands them to the
// fragments in the order they arrive, which only permutes the terms of each
// dot product; q is stored once per block in natural order, so that uint4
// 4L + t of a row holds dims 32L + 8t .. + 7, lane t's load L of a key. A value
// row's dims are spread over the rows of the A fragments so that a lane's
// loads pair up with its neighbour key's by byte permutes. A trip's loads
// leave during the previous trip's products (raw: e4m3 is converted on
// use). The rest is attention.cu's: the same grid and split ranges, the
// base-2 online softmax rescaled only when a max moves, the partials'
// format for attn_combine, every order fixed by the geometry (a head's bits
// do not depend on hpb).
//
// Lane (g, t) = (lane / 4, lane % 4), the mma fragments' group and thread.
// A trip's keys are tb + 0..7, key n at column n of S: lane (g, t) loads key
// row g for B of S, holds the scores of keys 2t, 2t + 1 for head g (g < 4),
// and loads value rows 2t, 2t + 1 for A of the update, whose C holds head t
// (hi and lo columns) for 32 dims. G = 4 q heads per block, as the vector
// kernels. The 64 accumulator registers and two trips' loads take more
// registers than two blocks an SM leave, so one block an SM runs
// (kernels.AttnSplitBlocksPerSM still sizes the grid: at the split cap a
// second wave). The engine takes it where it measured faster (perf.md step
// 68): on Hopper over an e4m3 cache in the buckets at the split cap.
#include "common.cuh"
#include "mma.cuh"

#define MEMRA_AMMA_DH 256
#define MEMRA_AMMA_G 4
#define MEMRA_AMMA_NW (MEMRA_ATTN_THREADS / 32)
#define MEMRA_AMMA_QROW 36 // uint4s per staged q row: 32 used, +4 so that a quarter warp's 16-byte reads hit distinct banks

// Dim of C row r (0..15) of update tile i = 8j + e: rows 0..7 take
// 64j + 8r + e, rows 8..15 the same 128 dims higher, so lane g's 16-byte
// loads at 64j + 8g and 128 + 64j + 8g feed tiles 8j..8j + 7.
__device__ __forceinline__ int memra_amma_dim(int i, int r) {
    return ((r & 8) << 4) + ((i >> 3) << 6) + ((r & 7) << 3) + (i & 7);
}

// k with a * 2^k in [2^14, 2^15) (0 for a = 0 or not finite), clamped to
// f32's normal exponents.
__device__ __forceinline__ int memra_amma_pow2(float a) {
    if (!(a > 0.0f && a <= 3.0e38f)) return 0;
    return min(126, max(-126, 14 - (((__float_as_int(a) >> 23) & 255) - 127)));
}

// A key or value row's 8 dims at d, raw: 16 bytes of f16, or 8 of e4m3 in
// .x and .y, converted on use (memra_amma_k16, memra_amma_pair) so that a
// trip's loads can be in flight while the previous trip's products run.
template <bool FP8>
__device__ __forceinline__ uint4 memra_amma_load_row(const unsigned char* row, int d) {
    if (!FP8) return memra_ldg16(row + 2 * d);
    const uint2 u = __ldg(reinterpret_cast<const uint2*>(row + d));
    return make_uint4(u.x, u.y, 0u, 0u);
}

// A key row's memra_amma_load_row as 4 f16 pairs.
template <bool FP8>
__device__ __forceinline__ uint4 memra_amma_k16(uint4 u) {
    if (!FP8) return u;
    uint4 r;
#if __CUDA_ARCH__ >= 900
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r.x) : "h"(memra_lo16(u.x)));
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r.y) : "h"(memra_hi16(u.x)));
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r.z) : "h"(memra_lo16(u.y)));
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r.w) : "h"(memra_hi16(u.y)));
#else
    const unsigned int w[2] = {u.x, u.y};
    unsigned int o[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float2 f = memra_e4m3x2_to_f32((unsigned short)(w[k >> 1] >> (16 * (k & 1))));
        const __half2 h = __floats2half2_rn(f.x, f.y); // exact: every e4m3 is an f16
        o[k] = *reinterpret_cast<const unsigned int*>(&h);
    }
    r = make_uint4(o[0], o[1], o[2], o[3]);
#endif
    return r;
}

// The f16 pair (dim e of key a, dim e of key b), low half a's.
template <bool FP8>
__device__ __forceinline__ unsigned int memra_amma_pair(uint4 a, uint4 b, int e) {
    if (!FP8) {
        const unsigned int wa = e < 2 ? a.x : e < 4 ? a.y : e < 6 ? a.z : a.w;
        const unsigned int wb = e < 2 ? b.x : e < 4 ? b.y : e < 6 ? b.z : b.w;
        return __byte_perm(wa, wb, (e & 1) ? 0x7632 : 0x5410);
    }
    const unsigned int wa = e < 4 ? a.x : a.y, wb = e < 4 ? b.x : b.y;
    const unsigned int by = e & 3;
    const unsigned int pr = __byte_perm(wa, wb, by | ((by + 4) << 4)); // bytes: a's, b's
#if __CUDA_ARCH__ >= 900
    unsigned int h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((unsigned short)pr));
    return h2;
#else
    const float2 f = memra_e4m3x2_to_f32((unsigned short)pr);
    const __half2 h = __floats2half2_rn(f.x, f.y);
    return *reinterpret_cast<const unsigned int*>(&h);
#endif
}

// One trip's loads for lane (g, t): key row tb + g's 64 dims for S, value
// rows tb + 2t and tb + 2t + 1's 32 dims each for the update, and with e4m3
// the scales of keys tb + 2t, tb + 2t + 1. Rows past k1 read row k1 - 1.
template <bool FP8>
struct memra_amma_trip {
    uint4 k[8];         // dims 32L + 8t .. + 7, raw (memra_amma_load_row)
    uint4 v0[4], v1[4]; // [2h + j]: dims 128h + 64j + 8g .. + 7 of keys 2t, 2t + 1
    float ks0, ks1, vs0, vs1;
};

template <bool FP8>
__device__ __forceinline__ void memra_amma_load(memra_amma_trip<FP8>& r, const unsigned char* kb, const unsigned char* vb,
                                                const float* ks, const float* vs, long long head_off, int tb, int k1, int g, int t) {
    constexpr int DH = MEMRA_AMMA_DH, EB = FP8 ? 1 : 2;
    const long long krow = head_off + min(tb + g, k1 - 1);
    const long long va = head_off + min(tb + 2 * t, k1 - 1), vbr = head_off + min(tb + 2 * t + 1, k1 - 1);
#pragma unroll
    for (int L = 0; L < 8; L++) r.k[L] = memra_amma_load_row<FP8>(kb + krow * DH * EB, 32 * L + 8 * t);
#pragma unroll
    for (int hj = 0; hj < 4; hj++) {
        const int d = 128 * (hj >> 1) + 64 * (hj & 1) + 8 * g;
        r.v0[hj] = memra_amma_load_row<FP8>(vb + va * DH * EB, d);
        r.v1[hj] = memra_amma_load_row<FP8>(vb + vbr * DH * EB, d);
    }
    r.ks0 = r.ks1 = r.vs0 = r.vs1 = 1.0f;
    if (FP8) {
        r.ks0 = __ldg(ks + va), r.ks1 = __ldg(ks + vbr);
        r.vs0 = __ldg(vs + va), r.vs1 = __ldg(vs + vbr);
    }
}

template <bool FP8>
__device__ __forceinline__ void memra_attn_split_mma(float* part_ms, float* part_acc, const float* q, const void* kc,
                                                     const void* vc, const float* ks, const float* vs, int n_head, int n_kv,
                                                     int capacity, int n_splits, int t_kv, const int* dt_kv, float scale) {
    constexpr int DH = MEMRA_AMMA_DH, G = MEMRA_AMMA_G, NW = MEMRA_AMMA_NW;
    // q's halves, dims in natural order: rows 0..3 hi of head r, 4..7 lo.
    static_assert(MEMRA_ATTN_THREADS == DH, "q is staged a dim a thread");
    __shared__ __align__(16) uint4 sm_q[2 * G][MEMRA_AMMA_QROW];
    __shared__ float sm_red[G + 1][NW]; // per head max|q|, then (e4m3) the value scales' max
    __shared__ float sm_sc[G];
    __shared__ float sm_ms[NW][G][2];
    __shared__ float sm_acc[NW][G][DH];

    const int T = memra_load_or(t_kv, dt_kv);
    const int kvh = blockIdx.x, s = blockIdx.y;
    const int group = n_head / n_kv;
    const int per = (group + (int)gridDim.z - 1) / (int)gridDim.z;
    const int h0 = kvh * group + blockIdx.z * per;
    const int nh = min(per, group - (int)blockIdx.z * per);
    const int chunk = (T + n_splits - 1) / n_splits;
    const int k0 = s * chunk;
    const int k1 = min(k0 + chunk, T);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const float scale2 = scale * 1.4426950408889634f;

    const long long head_off = (long long)kvh * capacity;
    const unsigned char* kb = static_cast<const unsigned char*>(kc);
    const unsigned char* vb = static_cast<const unsigned char*>(vc);
    // The first trip's loads leave before q is staged.
    memra_amma_trip<FP8> cur;
    const int tb0 = k0 + warp * 8;
    if (tb0 < k1) memra_amma_load<FP8>(cur, kb, vb, ks, vs, head_off, tb0, k1, g, t);

    // Stage q: per head the power of two 2^kq that puts max|q| in
    // [2^14, 2^15), then hi = f16(q 2^kq), lo = f16(q 2^kq - hi). The
    // weights are scaled likewise by 2^kw before their split, so that their
    // lo halves stay clear of f16's subnormals: 2^14 over an f16 cache (a
    // weight is at most 1), and over e4m3, where a weight carries its value
    // row's scale, 2^kw puts the split's largest scale in [2^14, 2^15).
    float qv[G];
#pragma unroll
    for (int r = 0; r < G; r++) {
        qv[r] = r < nh ? q[(long long)(h0 + r) * DH + threadIdx.x] : 0.0f;
        const float m = memra_warp_max(fabsf(qv[r]));
        if (lane == 0) sm_red[r][warp] = m;
    }
    if (FP8) {
        float vm = 0.0f;
#pragma unroll 4
        for (int k = k0 + (int)threadIdx.x; k < k1; k += NW * 32) vm = fmaxf(vm, __ldg(vs + head_off + k));
        vm = memra_warp_max(vm);
        if (lane == 0) sm_red[G][warp] = vm;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < G; r++) {
        float amax = 0.0f;
#pragma unroll
        for (int w = 0; w < NW; w++) amax = fmaxf(amax, sm_red[r][w]);
        const int k = memra_amma_pow2(amax);
        const float v = qv[r] * __int_as_float((127 + k) << 23);
        const __half hi = __float2half_rn(v);
        const __half lo = __float2half_rn(v - __half2float(hi));
        reinterpret_cast<__half*>(sm_q[r])[threadIdx.x] = hi;
        reinterpret_cast<__half*>(sm_q[G + r])[threadIdx.x] = lo;
        if (threadIdx.x == 0) sm_sc[r] = scale2 * __int_as_float((127 - k) << 23);
    }
    int kw = 14;
    if (FP8) {
        float vm = 0.0f;
#pragma unroll
        for (int w = 0; w < NW; w++) vm = fmaxf(vm, sm_red[G][w]);
        kw = memra_amma_pow2(vm);
    }
    const float wsc = __int_as_float((127 + kw) << 23);
    __syncthreads();
    const float sc = g < G ? sm_sc[g] : 0.0f;

    float m = -INFINITY, l = 0.0f; // head g's (g < 4), this lane's share of l
    float acc[16][4];               // update tile i: C of head t, hi and lo columns (times 2^kw)
#pragma unroll
    for (int i = 0; i < 16; i++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[i][c] = 0.0f;

    // Warp-uniform loop: warp w takes keys tb .. tb + 7, tb = k0 + 8w, + 64,
    // ...; keys past k1 score -inf. The next trip's loads leave before this
    // trip's products.
    for (int tb = tb0; tb < k1; tb += NW * 8) {
        memra_amma_trip<FP8> nxt;
        if (tb + NW * 8 < k1) memra_amma_load<FP8>(nxt, kb, vb, ks, vs, head_off, tb + NW * 8, k1, g, t);

        // S: rows g (hi) and g + 8 (lo) of head g, columns = the 8 keys; two
        // chains of 8 products, added at the end.
        float sa[4] = {0.0f, 0.0f, 0.0f, 0.0f}, sb[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int L = 0; L < 8; L++) {
            uint4 qh = make_uint4(0, 0, 0, 0), ql = qh;
            if (g < G) qh = sm_q[g][4 * L + t], ql = sm_q[G + g][4 * L + t];
            const unsigned int a0[4] = {qh.x, ql.x, qh.y, ql.y};
            const unsigned int a1[4] = {qh.z, ql.z, qh.w, ql.w};
            const uint4 kf = memra_amma_k16<FP8>(cur.k[L]);
            memra_mma_f16(sa, a0, kf.x, kf.y);
            memra_mma_f16(sb, a1, kf.z, kf.w);
        }
        // Scores of keys tb + 2t, + 1 for head g, base-2 units; past k1: -inf.
        const float x0 = fmaf((sa[0] + sb[0]) + (sa[2] + sb[2]), sc * cur.ks0, tb + 2 * t < k1 ? 0.0f : -INFINITY);
        const float x1 = fmaf((sa[1] + sb[1]) + (sa[3] + sb[3]), sc * cur.ks1, tb + 2 * t + 1 < k1 ? 0.0f : -INFINITY);
        float mx = fmaxf(x0, x1);
        mx = fmaxf(mx, __shfl_xor_sync(MEMRA_FULL_MASK, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(MEMRA_FULL_MASK, mx, 2));
        const float mn = fmaxf(m, mx); // finite: key tb < k1
        const float p0 = memra_exp2_approx(x0 - mn), p1 = memra_exp2_approx(x1 - mn);
        const bool moved = mn != m;
        const float c = memra_exp2_approx(m - mn); // m = -inf before the first key: 0
        l = moved ? fmaf(l, c, p0 + p1) : l + (p0 + p1);
        m = mn;
        // Rescale head t's accumulator (its max is lanes 4t..4t+3's) when the
        // max moved (else c = 1); a warp skips this when no head's did.
        if (__any_sync(MEMRA_FULL_MASK, moved && g < G)) {
            const float ct = __shfl_sync(MEMRA_FULL_MASK, c, 4 * t);
#pragma unroll
            for (int i = 0; i < 16; i++)
#pragma unroll
                for (int k = 0; k < 4; k++) acc[i][k] *= ct;
        }
        // B of the update: the weights 2^kw p (times the value scales) of
        // keys 2t, 2t + 1 for column g = head g/2, hi (even g) or lo.
        const float w0 = p0 * (wsc * cur.vs0), w1 = p1 * (wsc * cur.vs1);
        const __half2 wh = __floats2half2_rn(w0, w1);
        const __half2 wl = __floats2half2_rn(w0 - __low2float(wh), w1 - __high2float(wh));
        const unsigned int uh = *reinterpret_cast<const unsigned int*>(&wh);
        const unsigned int ul = *reinterpret_cast<const unsigned int*>(&wl);
        const int src = 4 * (g >> 1) + t;
        const unsigned int bh = __shfl_sync(MEMRA_FULL_MASK, uh, src), bl = __shfl_sync(MEMRA_FULL_MASK, ul, src);
        const unsigned int b = (g & 1) ? bl : bh;
#pragma unroll
        for (int i = 0; i < 16; i++) {
            const int j = i >> 3, e = i & 7;
            const unsigned int a0 = memra_amma_pair<FP8>(cur.v0[j], cur.v1[j], e);
            const unsigned int a1 = memra_amma_pair<FP8>(cur.v0[2 + j], cur.v1[2 + j], e);
            memra_mma_f16_k8(acc[i], a0, a1, b);
        }
        cur = nxt;
    }
    const float unw = __int_as_float((127 - kw) << 23);

    // l over the quad (lanes 4g..4g+3), in a fixed order.
    l += __shfl_xor_sync(MEMRA_FULL_MASK, l, 1);
    l += __shfl_xor_sync(MEMRA_FULL_MASK, l, 2);
    if (t == 0 && g < G) {
        sm_ms[warp][g][0] = m;
        sm_ms[warp][g][1] = l;
    }
#pragma unroll
    for (int i = 0; i < 16; i++) {
        sm_acc[warp][t][memra_amma_dim(i, g)] = (acc[i][0] + acc[i][1]) * unw;
        sm_acc[warp][t][memra_amma_dim(i, g + 8)] = (acc[i][2] + acc[i][3]) * unw;
    }
    __syncthreads();
    memra_attn_put_split<DH, G, NW>(part_ms, part_acc, sm_ms, sm_acc, nh, h0, n_splits, s);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32; q: [n_head][256] f32;
// kc, vc: [n_kv][capacity][256] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 1)
attn_split_mma_f16_d256(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    (void)hpb; // the tiling comes from gridDim.z, as in attention.cu
    memra_attn_before_wait<256, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split_mma<false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity, n_splits, t_kv, dt_kv, scale);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32; q: [n_head][256] f32;
// kc, vc: [n_kv][capacity][256] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 1)
attn_split_mma_fp8_d256(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    (void)hpb;
    memra_attn_before_wait<256, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split_mma<true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity, n_splits, t_kv, dt_kv, scale);
}
