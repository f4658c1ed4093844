// attn_prep_split.cu: a decode step's attention preparation inside its
// flash-decoding split, one launch where attn_prep and the split were two.
//
// Why it looks like this: at decode the split waits for attn_prep, a node
// whose work is a norm and a rotation of a few heads, and the hand-over
// between the two costs more than that work. Here each split block prepares
// its own q heads (attn_prep's norm and rope, the same device functions, so
// the same bits) into the shared q the split reads, and the blocks whose
// keys include the step's own position prepare that KV head's k and v too:
// the cache holds them only once the launch is over, so those blocks use
// their own copy, rounded through f16 as the cache rounds it, in place of
// the row they load. One block a KV head (the last split's first) stores
// the row in the cache for the steps that follow. The f16 vector layout
// only: over an e4m3 cache the scales are per row and the tensor-core
// splits run at the split cap, where prep's node costs little. The engine
// takes it only where a split block serves one q head (prepInSplit): each
// block's preparation runs after its wait, on the path of every block, and
// with two or four heads a block that cost more than the launch saved,
// whether the heads are prepared in turn or at once (docs/perf.md steps
// 143 and 144).
#include "common.cuh"

// What a thread knows before the wait: the position (the step counter),
// its pair's cos and sin, and its element of each norm weight (thread i <
// DH owns element i, as in attn_prep).
struct memra_prep_split_early {
    memra_prep_early q, k;
};

__device__ __forceinline__ memra_prep_split_early memra_prep_split_before_wait(int pos, const int* dpos, const float* q_norm,
                                                                               const float* k_norm, int head_dim, int n_rot,
                                                                               float base) {
    memra_prep_split_early e;
    e.q.p = dpos ? __ldcg(dpos) : pos;
    e.q.c = 0.0f, e.q.s = 0.0f, e.q.w = 1.0f;
    const int i = threadIdx.x;
    if (i < n_rot / 2) memra_rope_cs(e.q.p, i, n_rot, base, &e.q.c, &e.q.s);
    e.k = e.q;
    if (q_norm && i < head_dim) e.q.w = __ldg(q_norm + i);
    if (k_norm && i < head_dim) e.k.w = __ldg(k_norm + i);
    return e;
}

// memra_attn_split's source of q and of the step's own row (attention.cu
// memra_attn_cached is the plain splits'): the projections' q heads, raw k
// and v, the norm weights' early elements, and the block's shared buffers.
template <int DH>
struct memra_attn_own {
    static constexpr bool OWN = true;
    static_assert(MEMRA_ATTN_THREADS == MEMRA_NORM_THREADS && DH <= MEMRA_PREP_MAX_DH, "attn_prep's head functions take the block");
    const float *qg, *q_norm, *kraw, *k_norm, *vtok;
    int q_stride, n_rot, capacity;
    float eps;
    memra_prep_split_early e;
    unsigned short *kc, *vc; // the store's, where this block stores
    float *k, *vr, *xs, *scratch; // shared: the own row as the cache holds it (f32), prep's scratch
    float* raw;                   // shared: the G q heads' and k's inputs, [G + 1][DH]

    // q heads h0 .. h0+nh-1 into sm_q (rows past nh zero); where the block's
    // keys [k0, k1) of KV head g hold the position, or the block stores
    // the row, k and v prepared. Returns the cache row whose loads the
    // block's keys replace with its own copy (g·capacity + p), or -1 (a
    // block that only stores the row gets -1). Block-uniform; ends after a
    // barrier.
    template <int G>
    __device__ __forceinline__ long long prepare(float (*sm_q)[DH], int h0, int nh, int g, int k0, int k1) const {
        const int p = e.q.p;
        const bool in_cache = p >= 0 && p < capacity;
        const bool reads = in_cache && p >= k0 && p < k1;
        const bool stores = in_cache && kc != nullptr;
        const bool own = reads || stores;
        // Every input the block needs in one trip to the L2 (the q heads,
        // and k and v where it prepares them), not one trip a head.
        const int i = threadIdx.x;
        float vi = 0.0f;
        if (i < DH) {
#pragma unroll
            for (int r = 0; r < G; r++) {
                if (r < nh) raw[r * DH + i] = qg[(long long)(h0 + r) * q_stride + i];
            }
            if (own) {
                raw[G * DH + i] = kraw[(long long)g * DH + i];
                vi = vtok[(long long)g * DH + i];
            }
        }
        __syncthreads();
        for (int r = 0; r < nh; r++) memra_prep_head(sm_q[r], raw + r * DH, q_norm, DH, n_rot, e.q, eps, xs, scratch);
        for (int j = i; j < (G - nh) * DH; j += MEMRA_ATTN_THREADS) sm_q[nh + j / DH][j % DH] = 0.0f;
        if (!own) {
            __syncthreads(); // the zero rows
            return -1;
        }
        memra_prep_head(k, raw + G * DH, k_norm, DH, n_rot, e.k, eps, xs, scratch);
        if (i < DH) {
            const unsigned short kh = memra_f32_to_f16(k[i]), vh = memra_f32_to_f16(vi);
            if (stores) {
                const long long dst = ((long long)g * capacity + p) * DH;
                kc[dst + i] = kh, vc[dst + i] = vh;
            }
            k[i] = memra_f16_to_f32(kh);
            vr[i] = memra_f16_to_f32(vh);
        }
        __syncthreads();
        return reads ? (long long)g * capacity + p : -1;
    }

    // A lane's slice of the own row, as memra_attn_load gives a cached one.
    template <int LPK, int EPL, int NL>
    __device__ __forceinline__ void load(float* kf, float* vf, int sl) const {
#pragma unroll
        for (int j = 0; j < NL; j++) {
#pragma unroll
            for (int e = 0; e < EPL; e++) {
                const int d = memra_attn_dim<LPK, EPL>(j, e, sl);
                kf[j * EPL + e] = k[d];
                vf[j * EPL + e] = vr[d];
            }
        }
    }
};

// The step: attn_prep_f16's q and cache row, then attn_split_vec_f16_dDH
// over t_kv keys (dt_kv ? *dt_kv : t_kv) at position p (dpos ? *dpos : pos).
// After the wait (e: memra_prep_split_before_wait's).
template <int DH>
__device__ __forceinline__ void memra_attn_prep_split(float* part_ms, float* part_acc, const float* qg, int q_stride, const float* q_norm,
                                                      const float* kraw, const float* k_norm, const float* vtok, unsigned short* kc,
                                                      unsigned short* vc, int n_head, int n_kv, int n_rot, int capacity, int n_splits,
                                                      int hpb, int t_kv, const int* dt_kv, const memra_prep_split_early& e, float eps,
                                                      float scale) {
    __shared__ float k[DH], vr[DH], xs[MEMRA_PREP_MAX_DH], scratch[MEMRA_NORM_THREADS / 32];
    __shared__ float raw[(memra_attn_geom<DH, 8>::G + 1) * DH];
    const bool store = blockIdx.y == gridDim.y - 1 && blockIdx.z == 0;
    const memra_attn_own<DH> own{qg, q_norm, kraw, k_norm, vtok, q_stride, n_rot, capacity, eps, e,
                                 store ? kc : nullptr, store ? vc : nullptr, k, vr, xs, scratch, raw};
    memra_attn_split<DH, 8, false>(part_ms, part_acc, nullptr, kc, vc, nullptr, nullptr, n_head, n_kv, capacity, n_splits, hpb, t_kv,
                                   dt_kv, scale, blockIdx.z, gridDim.z, own);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][64] f32;
// qg: q heads at stride q_stride; kraw, vtok: [n_kv][64] f32; q_norm, k_norm:
// [64] f32; kc, vc: [n_kv][capacity][64] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_prep_split_f16_d64(float* part_ms, float* part_acc, const float* qg, int q_stride, const float* q_norm, const float* kraw,
    const float* k_norm, const float* vtok, unsigned short* kc, unsigned short* vc, int n_head, int n_kv, int n_rot, int capacity,
    int n_splits, int hpb, int t_kv, const int* dt_kv, int pos, const int* dpos, float base, float eps, float scale) {
    memra_attn_before_wait<64, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    const memra_prep_split_early e = memra_prep_split_before_wait(pos, dpos, q_norm, k_norm, 64, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep_split<64>(part_ms, part_acc, qg, q_stride, q_norm, kraw, k_norm, vtok, kc, vc, n_head, n_kv, n_rot, capacity,
                              n_splits, hpb, t_kv, dt_kv, e, eps, scale);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][128] f32;
// qg: q heads at stride q_stride; kraw, vtok: [n_kv][128] f32; q_norm, k_norm:
// [128] f32; kc, vc: [n_kv][capacity][128] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_prep_split_f16_d128(float* part_ms, float* part_acc, const float* qg, int q_stride, const float* q_norm, const float* kraw,
    const float* k_norm, const float* vtok, unsigned short* kc, unsigned short* vc, int n_head, int n_kv, int n_rot, int capacity,
    int n_splits, int hpb, int t_kv, const int* dt_kv, int pos, const int* dpos, float base, float eps, float scale) {
    memra_attn_before_wait<128, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    const memra_prep_split_early e = memra_prep_split_before_wait(pos, dpos, q_norm, k_norm, 128, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep_split<128>(part_ms, part_acc, qg, q_stride, q_norm, kraw, k_norm, vtok, kc, vc, n_head, n_kv, n_rot, capacity,
                              n_splits, hpb, t_kv, dt_kv, e, eps, scale);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32;
// qg: q heads at stride q_stride; kraw, vtok: [n_kv][256] f32; q_norm, k_norm:
// [256] f32; kc, vc: [n_kv][capacity][256] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_prep_split_f16_d256(float* part_ms, float* part_acc, const float* qg, int q_stride, const float* q_norm, const float* kraw,
    const float* k_norm, const float* vtok, unsigned short* kc, unsigned short* vc, int n_head, int n_kv, int n_rot, int capacity,
    int n_splits, int hpb, int t_kv, const int* dt_kv, int pos, const int* dpos, float base, float eps, float scale) {
    memra_attn_before_wait<256, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    const memra_prep_split_early e = memra_prep_split_before_wait(pos, dpos, q_norm, k_norm, 256, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep_split<256>(part_ms, part_acc, qg, q_stride, q_norm, kraw, k_norm, vtok, kc, vc, n_head, n_kv, n_rot, capacity,
                              n_splits, hpb, t_kv, dt_kv, e, eps, scale);
}
