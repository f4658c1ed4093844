// attention.cu: split-K flash decoding for one query token (GQA), and the
// combine that merges the splits (with qwen35's sigmoid output gate fused);
// their chunk forms run a prompt chunk's tokens, each as its own step.
//
// Why it looks like this: at decode the attention cost is reading the KV
// cache once, so a block owns ONE kv head and up to G of its query heads,
// hpb of them (grid.z tiles the group): all of them where the splits alone
// fill the GPU, fewer where they do not (short contexts, whose cache the L2
// holds for the blocks that read it again), so that more blocks share the
// work, each through a shorter per-head chain. A head's arithmetic does not
// depend on hpb: the same bits for every choice. The keys are split
// over grid.y = n_splits blocks so short and long contexts both fill the GPU:
// split s covers keys
//   [s*chunk, min((s+1)*chunk, t_kv)),  chunk = ceil(t_kv / n_splits),
// with t_kv from `t_kv, dt_kv` (dt_kv ? *dt_kv : t_kv) and n_splits fixed by
// the launch (the host's bucket), so the eager path and a replayed graph that
// reads the actual t_kv from the device counter split identically.
//
// Inside a block the keys are dealt, NK consecutive keys at a time, to
// "sub-groups" of LPK lanes (a whole warp for the scalar kernels; 8..32 lanes,
// head_dim/8, for the vector kernels); each sub-group runs an online softmax
// over its keys with a per-lane slice of the accumulator in registers (q is
// in shared memory); sub-groups are then
// merged by a xor butterfly within the warp and in shared memory across the
// 8 warps (warp w + 4 into warp w, then a fixed-order sum over warps 0..3;
// 8 warps rather than 4: at short contexts a split is a few trips of one
// warp a scheduler, docs/perf.md steps 59 and 61). Every order is fixed by
// the geometry: no atomics, same bits on every run.
//
// Scores are (q . k) * scale with scale = 1/sqrt(head_dim) passed by the host;
// a split's softmax runs in base 2 on the SFU's ex2 (within 2 ulp, perf.md
// step 64), attn_combine's in expf. A split writes its partial
// unnormalised state per q head h:
//   part_ms[(h*n_splits + s)*2 + {0,1}] = {max, sum},  part_acc[(h*n_splits + s)*head_dim + d]
// and an empty split writes {-inf, 0} and zeros. attn_combine merges the
// splits of each q head (in a fixed order, see the kernel):
//   M = max_s m_s, f_s = exp(m_s - M) (0 for empty), out = sum_s f_s*acc_s / sum_s f_s*sum_s
// and, when gate != null, multiplies by sigmoid(gate[h*gate_stride + d])
// (qwen35: gate = the second half of each head's q|gate projection row, i.e.
// the qg buffer + head_dim floats with gate_stride = 2*head_dim).
//
// Layouts: q [n_head][head_dim] f32 (rope applied); q head h uses kv head
// h / (n_head/n_kv); caches [n_kv][capacity][head_dim] f16 or e4m3 with f32
// scales [n_kv][capacity] (see kv_store.cu).
//
// Variants (template <DH, EPL, FP8>): EPL = elements per lane per load.
//   attn_split_f16_dD      EPL 1  (2-byte loads, lane d = j*32 + lane)
//   attn_split_vec_f16_dD  EPL 8  (16-byte loads: 8 f16)
//   attn_split_fp8_dD      EPL 1  (1-byte loads)
//   attn_split_vec_fp8_dD  EPL 8  (8-byte loads: 8 e4m3; 16-byte loads left
//                          16 dims a lane and room for 2 q heads a block at
//                          8 warps, perf.md steps 59 and 61)
// for D in {64, 128, 256}. G (the most q heads a block serves) keeps acc
// within the registers the block's residency leaves: 8 warps, the vector
// kernels two blocks an SM at most 128 registers, G = min(4, 32/PD), acc
// within 32 registers. (The scalar kernels may take more registers and fit
// fewer blocks: every head dim built holds whole vectors, so only the tests
// run them.) kernels.AttnSplitBlocksPerSM is that residency, which the
// host's grid rules assume; the host's hpb must not exceed G
// (engine/gpu splitHeads), or the merge would index sm_ms/sm_acc past their
// G rows. Each split kernel
// starts its first keys toward L2 before its wait (memra_attn_before_wait).
#include "common.cuh"

// 8 warps a block over either cache (the fp8 vector kernels load 8 bytes a
// lane so that their G stays 4 at 8 warps: perf.md step 61).
template <int DH, int EPL>
struct memra_attn_geom {
    static constexpr int LPK = (DH / EPL < 32) ? DH / EPL : 32; // lanes per key
    static constexpr int NL = DH / (LPK * EPL);                 // loads per lane per row
    static constexpr int PD = NL * EPL;                         // dims per lane
    static constexpr int SPW = 32 / LPK;                        // sub-groups per warp
    static constexpr int NW = MEMRA_ATTN_THREADS / 32;          // warps per block
    static constexpr int NSG = NW * SPW;                        // sub-groups per block
    static constexpr int GM = 32 / NW;                          // G's register budget: G*PD <= 8*GM
    static constexpr int G = (8 * GM / PD < GM) ? 8 * GM / PD : GM; // most q heads per block
    static constexpr int NK = (32 / PD < 1) ? 1 : (32 / PD > 4 ? 4 : 32 / PD); // keys per sub-group per trip
    static_assert(DH % (LPK * EPL) == 0, "head_dim must tile the lanes");
    static_assert(NK == 4, "the dot sums are reduced four keys at a time (memra_attn_sum4)");
};

// The dim held in slot (j, e) by sub-group lane sl.
template <int LPK, int EPL>
__device__ __forceinline__ int memra_attn_dim(int j, int e, int sl) {
    return (j * LPK + sl) * EPL + e;
}

// The full sums over a sub-group's LPK lanes of each lane's four partial dot
// products x[0..3], in every lane (perf.md step 63). A reduce-scatter: the
// first level trades a pair (the lanes with bit LPK/2 keep x[2..3], the
// others x[0..1]), the second one value, so that after the remaining xor
// levels the lane holds the whole sum of value 2*b + c (b, c its bits LPK/2
// and LPK/4); four shuffles then fetch each value from a lane that holds it.
// 10 shuffles and 6 adds where a butterfly of each value takes 20 and 20
// (LPK 32); the order is fixed by the lane bits, so every run adds alike.
template <int LPK>
__device__ __forceinline__ void memra_attn_sum4(float x[4], int lane) {
    static_assert(LPK >= 4, "the reduce-scatter needs 4 lanes for 4 values");
    const int sl = lane % LPK;
    const bool b = sl & (LPK / 2), c = sl & (LPK / 4);
    float y[2];
#pragma unroll
    for (int j = 0; j < 2; j++) {
        const float send = b ? x[j] : x[j + 2];
        y[j] = (b ? x[j + 2] : x[j]) + __shfl_xor_sync(MEMRA_FULL_MASK, send, LPK / 2);
    }
    float z = (c ? y[1] : y[0]) + __shfl_xor_sync(MEMRA_FULL_MASK, c ? y[0] : y[1], LPK / 4);
#pragma unroll
    for (int off = LPK / 8; off > 0; off >>= 1) z += __shfl_xor_sync(MEMRA_FULL_MASK, z, off);
#pragma unroll // width LPK: source lanes counted within the sub-group
    for (int i = 0; i < 4; i++) x[i] = __shfl_sync(MEMRA_FULL_MASK, z, (i >> 1) * (LPK / 2) + (i & 1) * (LPK / 4), LPK);
}

// Load one cache row's lane slice into f[PD] (f32; fp8 already multiplied by its scale).
template <int DH, int EPL, bool FP8>
__device__ __forceinline__ void memra_attn_load(float* f, const void* row, float scale, int sl) {
    using Geo = memra_attn_geom<DH, EPL>;
#pragma unroll
    for (int j = 0; j < Geo::NL; j++) {
        const int d0 = memra_attn_dim<Geo::LPK, EPL>(j, 0, sl);
        if (FP8) {
            const unsigned char* r = static_cast<const unsigned char*>(row);
            if (EPL == 8) {
                const uint2 u = __ldg(reinterpret_cast<const uint2*>(r + d0));
                const unsigned int w[2] = {u.x, u.y};
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    const float2 p = memra_e4m3x2_to_f32((unsigned short)(w[k >> 1] >> (16 * (k & 1))));
                    f[j * EPL + 2 * k] = p.x * scale;
                    f[j * EPL + 2 * k + 1] = p.y * scale;
                }
            } else {
#pragma unroll
                for (int e = 0; e < EPL; e++) f[j * EPL + e] = memra_e4m3_to_f32(__ldg(r + d0 + e)) * scale;
            }
        } else {
            const unsigned short* r = static_cast<const unsigned short*>(row);
            if (EPL == 8) {
                const uint4 u = memra_ldg16(r + d0);
                const unsigned int w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    f[j * EPL + 2 * k] = memra_f16_to_f32(memra_lo16(w[k]));
                    f[j * EPL + 2 * k + 1] = memra_f16_to_f32(memra_hi16(w[k]));
                }
            } else {
#pragma unroll
                for (int e = 0; e < EPL; e++) f[j * EPL + e] = memra_f16_to_f32(__ldg(r + d0 + e));
            }
        }
    }
}

// Before the wait: pull the block's first keys (up to 64: at short contexts
// its whole split) into L2, K and V rows and the e4m3 scales, the lines that
// hold them and no more (the last row of the last head ends its buffer). t_kv comes
// from the step counter, written by the previous step's last kernel (under
// PDL everything two kernels back has completed when a kernel starts: gdn.cu);
// every row but the current token's (a chunk's tokens', in a chunk launch)
// was written a step or more ago, and those (attn_prep, the kernel just
// before) are only prefetched: a prefetch moves lines into L2, the point of
// coherence, so the loads after the wait read what attn_prep wrote. In
// attn_prep_split the current row is this launch's own store, and the
// blocks that read it replace what they load with their own copy.
template <int DH, bool FP8>
__device__ __forceinline__ void memra_attn_before_wait(const void* kc, const void* vc, const float* ks, const float* vs, int capacity,
                                                       int n_splits, int t_kv, const int* dt_kv, int bz) {
    if (bz != 0) return; // the group's other blocks read the same keys
    const int T = dt_kv ? __ldcg(dt_kv) : t_kv;
    const int chunk = (T + n_splits - 1) / n_splits;
    const int k0 = (int)blockIdx.y * chunk;
    const int nk = max(0, min(min(chunk, T - k0), 64));
    if (nk == 0) return;
    constexpr int RB = DH * (FP8 ? 1 : 2); // bytes per cached row
    const long long off = ((long long)blockIdx.x * capacity + k0) * RB;
    const long long first = off & ~127ll; // whole lines from the one holding the first row
    const int lines = (int)(((off & 127) + (long long)nk * RB + 127) >> 7);
    for (int i = threadIdx.x; i < 2 * lines; i += MEMRA_ATTN_THREADS)
        memra_prefetch_l2(static_cast<const unsigned char*>(i < lines ? kc : vc) + first + (long long)(i % lines) * 128);
    if (FP8) { // the scales: 4 bytes a key, up to 3 lines
        const long long so = ((long long)blockIdx.x * capacity + k0) * 4, sf = so & ~127ll;
        const int sl = (int)(((so & 127) + (long long)nk * 4 + 127) >> 7);
        const int i = (int)threadIdx.x;
        if (i < 2 * sl) memra_prefetch_l2(reinterpret_cast<const unsigned char*>(i < sl ? ks : vs) + sf + (long long)(i % sl) * 128);
    }
}

// A split's partials from the states of its NS warps (or warp pairs) in
// shared memory, merged in warp order: per q head r < nh the max M, the sum
// and the accumulator of dims d, each warp's weighted by 2^(m_w - M) (base-2
// units; 0 for a warp that saw no key), M written back in e's units for
// attn_combine.
template <int DH, int G, int NS>
__device__ __forceinline__ void memra_attn_put_split(float* part_ms, float* part_acc, const float (*sm_ms)[G][2],
                                                     const float (*sm_acc)[G][DH], int nh, int h0, int n_splits, int s) {
    for (int idx = threadIdx.x; idx < nh * DH; idx += MEMRA_ATTN_THREADS) {
        const int r = idx / DH, d = idx % DH;
        float M = sm_ms[0][r][0];
#pragma unroll
        for (int w = 1; w < NS; w++) M = fmaxf(M, sm_ms[w][r][0]);
        float L = 0.0f, A = 0.0f;
#pragma unroll
        for (int w = 0; w < NS; w++) {
            const float mw = sm_ms[w][r][0];
            const float f = (mw == -INFINITY) ? 0.0f : memra_exp2_approx(mw - M);
            L += sm_ms[w][r][1] * f;
            A += sm_acc[w][r][d] * f;
        }
        const long long ps = (long long)(h0 + r) * n_splits + s;
        part_acc[ps * DH + d] = A;
        if (d == 0) {
            part_ms[ps * 2] = M * 0.6931471805599453f; // back to e's units for attn_combine
            part_ms[ps * 2 + 1] = L;
        }
    }
}

// Where memra_attn_split takes q and the step's own K/V row from: the
// split kernels read q from its buffer and every row from the cache.
// attn_prep_split.cu's memra_attn_own prepares both in the block instead.
struct memra_attn_cached {
    static constexpr bool OWN = false;
};

template <int DH, int EPL, bool FP8, class SRC = memra_attn_cached>
__device__ __forceinline__ void memra_attn_split(float* part_ms, float* part_acc, const float* q,
                                                 const void* kc, const void* vc, const float* ks, const float* vs,
                                                 int n_head, int n_kv, int capacity, int n_splits, int hpb,
                                                 int t_kv, const int* dt_kv, float scale, int bz, int gz,
                                                 const SRC& src = SRC()) {
    using Geo = memra_attn_geom<DH, EPL>;
    constexpr int LPK = Geo::LPK, PD = Geo::PD, G = Geo::G, NW = Geo::NW, NSG = Geo::NSG, NK = Geo::NK;
    constexpr int EB = FP8 ? 1 : 2; // bytes per cached element
    constexpr int NH = NW / 2; // warps the shared buffers hold (the merge below)
    __shared__ float sm_ms[NH][G][2];
    __shared__ float sm_acc[NH][G][DH];

    const int T = memra_load_or(t_kv, dt_kv);
    // hpb (<= G) sizes the grid, gz = ceil(group / hpb) blocks a head group
    // (gridDim.z; a token's share of it in a chunk launch), bz this block's;
    // the group is tiled over those blocks by ceil(group / gz) <= hpb heads,
    // which is hpb wherever it divides the group. (Computed from gridDim.z,
    // ptxas 11.8 keeps every vector kernel free of spills; from hpb it did
    // not.)
    (void)hpb;
    const int g = blockIdx.x, s = blockIdx.y;
    const int group = n_head / n_kv;
    const int per = (group + gz - 1) / gz;
    const int h0 = g * group + bz * per;
    const int nh = min(per, group - bz * per); // q heads in this block
    const int chunk = (T + n_splits - 1) / n_splits;
    const int k0 = s * chunk;
    const int k1 = min(k0 + chunk, T);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    // Scores in base-2 units (x * scale * log2 e), so that each weight is one
    // ex2 instruction; the maxima go back to e's units when written.
    const float scale2 = scale * 1.4426950408889634f;
    const int sl = lane % LPK;

    // q lives in shared memory: a trip reads each head's slice once for its
    // NK keys, and the registers go to the keys in flight.
    __shared__ __align__(16) float sm_q[G][DH];
    long long own = -1; // the cache row that src holds, if any
    if constexpr (SRC::OWN) {
        own = src.template prepare<G>(sm_q, h0, nh, g, k0, k1);
    } else {
        for (int i = threadIdx.x; i < G * DH; i += NW * 32) {
            const int r = i / DH;
            sm_q[r][i % DH] = (r < nh) ? q[(long long)h0 * DH + i] : 0.0f;
        }
        __syncthreads();
    }
    float m[G], l[G], acc[G][PD];
#pragma unroll
    for (int r = 0; r < G; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
#pragma unroll
        for (int p = 0; p < PD; p++) acc[r][p] = 0.0f;
    }

    const long long head_off = (long long)g * capacity; // row index of (g, token 0)
    const unsigned char* kb = static_cast<const unsigned char*>(kc);
    const unsigned char* vb = static_cast<const unsigned char*>(vc);
    // Warp-uniform loop (the shuffles need every lane). A trip gives each
    // sub-group NK consecutive keys: sub-group sg = warp*SPW + lane/LPK takes
    // keys tb + sg*NK .. + NK-1 with tb = k0, k0 + NSG*NK, ... Keys past k1 load
    // row k1-1 (no branch around the loads) and score -inf (weight 0).
    // The NK keys are what makes this fast: their loads, dot products and
    // shuffle reductions are independent, so a trip costs about one key's
    // latency instead of NK (one key per trip streamed the cache at ~1 TB/s:
    // every head's dot -> butterfly -> exp chain ran back to back,
    // docs/perf.md step 13), and the running max/sum rescale once per trip.
    for (int tb = k0 + warp * Geo::SPW * NK; tb < k1; tb += NSG * NK) {
        const int t0 = tb + (lane / LPK) * NK;
        float kf[NK][PD], vf[NK][PD];
#pragma unroll
        for (int i = 0; i < NK; i++) {
            const long long row = head_off + min(t0 + i, k1 - 1);
            const float ksc = FP8 ? __ldg(ks + row) : 1.0f;
            const float vsc = FP8 ? __ldg(vs + row) : 1.0f;
            memra_attn_load<DH, EPL, FP8>(kf[i], kb + row * DH * EB, ksc, sl);
            memra_attn_load<DH, EPL, FP8>(vf[i], vb + row * DH * EB, vsc, sl);
            if constexpr (SRC::OWN) {
                // The step's own row: the cache's may not hold it yet (its
                // store is another block's), so what was loaded is
                // replaced, not used.
                if (row == own) src.template load<LPK, EPL, Geo::NL>(kf[i], vf[i], sl);
            }
        }
        // Keys past k1 score -inf through the addend of the scale's FMA (for
        // the others x * scale2 + 0: the product's own rounding).
        float past[NK];
#pragma unroll
        for (int i = 0; i < NK; i++) past[i] = (t0 + i < k1) ? 0.0f : -INFINITY;
        // Per q head: the NK scores, then the online softmax over the trip
        // (one rescale by c = 2^(m - m'), base-2 units, the keys in ascending order).
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (r >= nh) break; // block-uniform: the shuffles stay converged
            float qr[PD];
#pragma unroll
            for (int j = 0; j < Geo::NL; j++) {
#pragma unroll
                for (int e = 0; e < EPL; e++) qr[j * EPL + e] = sm_q[r][memra_attn_dim<LPK, EPL>(j, e, sl)];
            }
            float x[NK];
#pragma unroll
            for (int i = 0; i < NK; i++) {
                x[i] = 0.0f;
#pragma unroll
                for (int p = 0; p < PD; p++) x[i] += qr[p] * kf[i][p];
            }
            memra_attn_sum4<LPK>(x, lane);
            float mn = m[r];
#pragma unroll
            for (int i = 0; i < NK; i++) {
                x[i] = fmaf(x[i], scale2, past[i]);
                mn = fmaxf(mn, x[i]);
            }
            if (mn == -INFINITY) continue; // this sub-group's keys all lie past k1
            float ps = 0.0f;
#pragma unroll
            for (int i = 0; i < NK; i++) {
                x[i] = memra_exp2_approx(x[i] - mn); // past k1: 2^-inf = 0
                ps += x[i];
            }
            // Rescale only when the max moved: else c = 2^0 = 1, and l * c + ps
            // is l + ps (the same bits) and acc * c is acc, so the first key's
            // product is added to acc in one FMA where the rescaling form
            // rounded it first (ulp-level differences, perf.md step 65). After
            // the first trips the max seldom moves, and a warp skips the branch
            // when none of its sub-groups' maxima did.
            if (mn != m[r]) {
                const float c = memra_exp2_approx(m[r] - mn); // m = -inf before the first key: c = 0
                l[r] = fmaf(l[r], c, ps);
#pragma unroll
                for (int p = 0; p < PD; p++) acc[r][p] *= c;
                m[r] = mn;
            } else {
                l[r] += ps;
            }
#pragma unroll
            for (int p = 0; p < PD; p++) {
                float a = acc[r][p];
#pragma unroll
                for (int i = 0; i < NK; i++) a += x[i] * vf[i][p];
                acc[r][p] = a;
            }
        }
    }

    // Merge the sub-groups of each warp (xor butterfly over lane offsets
    // LPK..16; partners compute commutative sums, so all end bit-identical).
#pragma unroll
    for (int off = LPK; off < 32; off <<= 1) {
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (r >= nh) break;
            const float mo = __shfl_xor_sync(MEMRA_FULL_MASK, m[r], off);
            const float lo = __shfl_xor_sync(MEMRA_FULL_MASK, l[r], off);
            const float mn = fmaxf(m[r], mo);
            const float ca = (m[r] == -INFINITY) ? 0.0f : memra_exp2_approx(m[r] - mn);
            const float cb = (mo == -INFINITY) ? 0.0f : memra_exp2_approx(mo - mn);
            l[r] = l[r] * ca + lo * cb;
#pragma unroll
            for (int p = 0; p < PD; p++) {
                const float ao = __shfl_xor_sync(MEMRA_FULL_MASK, acc[r][p], off);
                acc[r][p] = acc[r][p] * ca + ao * cb;
            }
            m[r] = mn;
        }
    }

    // Merge the warps through shared memory, in two fixed stages so that the
    // buffers hold half the warps (d256: 16 KiB rather than 32, 20 KiB a
    // block with q): warp w + NH hands its state to warp w, which merges it
    // as the butterfly above does. Then warps 0..NH-1 are added in warp order.
    static_assert(NH * 2 == NW, "the warp merge pairs warps");
    if (warp >= NH && lane < LPK) {
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (lane == 0) {
                sm_ms[warp - NH][r][0] = m[r];
                sm_ms[warp - NH][r][1] = l[r];
            }
#pragma unroll
            for (int j = 0; j < Geo::NL; j++) {
#pragma unroll
                for (int e = 0; e < EPL; e++) {
                    sm_acc[warp - NH][r][memra_attn_dim<LPK, EPL>(j, e, sl)] = acc[r][j * EPL + e];
                }
            }
        }
    }
    __syncthreads();
    if (warp < NH) {
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (r >= nh) break;
            const float mo = sm_ms[warp][r][0], lo = sm_ms[warp][r][1];
            const float mn = fmaxf(m[r], mo);
            const float ca = (m[r] == -INFINITY) ? 0.0f : memra_exp2_approx(m[r] - mn);
            const float cb = (mo == -INFINITY) ? 0.0f : memra_exp2_approx(mo - mn);
            l[r] = l[r] * ca + lo * cb;
#pragma unroll
            for (int j = 0; j < Geo::NL; j++) {
#pragma unroll
                for (int e = 0; e < EPL; e++) {
                    const float ao = sm_acc[warp][r][memra_attn_dim<LPK, EPL>(j, e, sl)];
                    acc[r][j * EPL + e] = acc[r][j * EPL + e] * ca + ao * cb;
                }
            }
            m[r] = mn;
        }
    }
    __syncthreads(); // the buffers are rewritten below
    if (warp < NH && lane < LPK) {
#pragma unroll
        for (int r = 0; r < G; r++) {
            if (lane == 0) {
                sm_ms[warp][r][0] = m[r];
                sm_ms[warp][r][1] = l[r];
            }
#pragma unroll
            for (int j = 0; j < Geo::NL; j++) {
#pragma unroll
                for (int e = 0; e < EPL; e++) {
                    sm_acc[warp][r][memra_attn_dim<LPK, EPL>(j, e, sl)] = acc[r][j * EPL + e];
                }
            }
        }
    }
    __syncthreads();
    memra_attn_put_split<DH, G, NH>(part_ms, part_acc, sm_ms, sm_acc, nh, h0, n_splits, s);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][64] f32; q: [n_head][64] f32;
// kc, vc: [n_kv][capacity][64] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_f16_d64(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<64, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<64, 1, false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][64] f32; q: [n_head][64] f32;
// kc, vc: [n_kv][capacity][64] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_vec_f16_d64(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<64, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<64, 8, false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][64] f32; q: [n_head][64] f32;
// kc, vc: [n_kv][capacity][64] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_fp8_d64(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<64, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<64, 1, true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][64] f32; q: [n_head][64] f32;
// kc, vc: [n_kv][capacity][64] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_vec_fp8_d64(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<64, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<64, 8, true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][128] f32; q: [n_head][128] f32;
// kc, vc: [n_kv][capacity][128] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_f16_d128(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<128, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<128, 1, false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][128] f32; q: [n_head][128] f32;
// kc, vc: [n_kv][capacity][128] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_vec_f16_d128(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<128, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<128, 8, false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][128] f32; q: [n_head][128] f32;
// kc, vc: [n_kv][capacity][128] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_fp8_d128(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<128, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<128, 1, true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][128] f32; q: [n_head][128] f32;
// kc, vc: [n_kv][capacity][128] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_vec_fp8_d128(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<128, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<128, 8, true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32; q: [n_head][256] f32;
// kc, vc: [n_kv][capacity][256] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_f16_d256(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<256, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<256, 1, false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32; q: [n_head][256] f32;
// kc, vc: [n_kv][capacity][256] f16
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_vec_f16_d256(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<256, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<256, 8, false>(part_ms, part_acc, q, kc, vc, nullptr, nullptr, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32; q: [n_head][256] f32;
// kc, vc: [n_kv][capacity][256] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_fp8_d256(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<256, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<256, 1, true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// part_ms: [n_head][n_splits][2] f32; part_acc: [n_head][n_splits][256] f32; q: [n_head][256] f32;
// kc, vc: [n_kv][capacity][256] e4m3; ks, vs: [n_kv][capacity] f32
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS)
attn_split_vec_fp8_d256(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, const int* dt_kv, float scale) {
    memra_attn_before_wait<256, true>(kc, vc, ks, vs, capacity, n_splits, t_kv, dt_kv, blockIdx.z);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<256, 8, true>(part_ms, part_acc, q, kc, vc, ks, vs, n_head, n_kv, capacity,
                                          n_splits, hpb, t_kv, dt_kv, scale, blockIdx.z, gridDim.z);
}

// The chunk forms of the vector splits: the n_tok tokens of a prompt chunk
// whose steps share a bucket (n_splits, hpb), at t_kv, t_kv + 1, ... keys,
// token t's blocks grid.z = t·gz .. t·gz + gz - 1 (gz = gridDim.z / n_tok,
// the step launch's depth): its q, part_ms and part_acc start t·q_tok,
// t·ms_tok and t·acc_tok floats after token 0's, and its bits are the step
// kernel's at its t_kv. The chunk's K and V are in the cache before the
// launch (attn_prep_*_chunk); token t reads only its first t_kv + t rows.
extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_split_chunk_f16_d64(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, float scale, int n_tok, int q_tok, int ms_tok, int acc_tok) {
    const int gz = (int)gridDim.z / n_tok, t = (int)blockIdx.z / gz;
    memra_attn_before_wait<64, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv + t, nullptr, (int)blockIdx.z % gz);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<64, 8, false>(part_ms + (long long)t * ms_tok, part_acc + (long long)t * acc_tok, q + (long long)t * q_tok, kc, vc,
                                   nullptr, nullptr, n_head, n_kv, capacity, n_splits, hpb, t_kv + t, nullptr, scale, (int)blockIdx.z % gz, gz);
}

extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_split_chunk_fp8_d64(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, float scale, int n_tok, int q_tok, int ms_tok, int acc_tok) {
    const int gz = (int)gridDim.z / n_tok, t = (int)blockIdx.z / gz;
    memra_attn_before_wait<64, true>(kc, vc, ks, vs, capacity, n_splits, t_kv + t, nullptr, (int)blockIdx.z % gz);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<64, 8, true>(part_ms + (long long)t * ms_tok, part_acc + (long long)t * acc_tok, q + (long long)t * q_tok, kc, vc,
                                  ks, vs, n_head, n_kv, capacity, n_splits, hpb, t_kv + t, nullptr, scale, (int)blockIdx.z % gz, gz);
}

extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_split_chunk_f16_d128(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, float scale, int n_tok, int q_tok, int ms_tok, int acc_tok) {
    const int gz = (int)gridDim.z / n_tok, t = (int)blockIdx.z / gz;
    memra_attn_before_wait<128, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv + t, nullptr, (int)blockIdx.z % gz);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<128, 8, false>(part_ms + (long long)t * ms_tok, part_acc + (long long)t * acc_tok, q + (long long)t * q_tok, kc, vc,
                                   nullptr, nullptr, n_head, n_kv, capacity, n_splits, hpb, t_kv + t, nullptr, scale, (int)blockIdx.z % gz, gz);
}

extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_split_chunk_fp8_d128(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, float scale, int n_tok, int q_tok, int ms_tok, int acc_tok) {
    const int gz = (int)gridDim.z / n_tok, t = (int)blockIdx.z / gz;
    memra_attn_before_wait<128, true>(kc, vc, ks, vs, capacity, n_splits, t_kv + t, nullptr, (int)blockIdx.z % gz);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<128, 8, true>(part_ms + (long long)t * ms_tok, part_acc + (long long)t * acc_tok, q + (long long)t * q_tok, kc, vc,
                                  ks, vs, n_head, n_kv, capacity, n_splits, hpb, t_kv + t, nullptr, scale, (int)blockIdx.z % gz, gz);
}

extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_split_chunk_f16_d256(float* part_ms, float* part_acc, const float* q, const unsigned short* kc, const unsigned short* vc,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, float scale, int n_tok, int q_tok, int ms_tok, int acc_tok) {
    const int gz = (int)gridDim.z / n_tok, t = (int)blockIdx.z / gz;
    memra_attn_before_wait<256, false>(kc, vc, nullptr, nullptr, capacity, n_splits, t_kv + t, nullptr, (int)blockIdx.z % gz);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<256, 8, false>(part_ms + (long long)t * ms_tok, part_acc + (long long)t * acc_tok, q + (long long)t * q_tok, kc, vc,
                                   nullptr, nullptr, n_head, n_kv, capacity, n_splits, hpb, t_kv + t, nullptr, scale, (int)blockIdx.z % gz, gz);
}

extern "C" __global__ void __launch_bounds__(MEMRA_ATTN_THREADS, 2)
attn_split_chunk_fp8_d256(float* part_ms, float* part_acc, const float* q, const unsigned char* kc, const unsigned char* vc,
    const float* ks, const float* vs,
    int n_head, int n_kv, int capacity, int n_splits, int hpb, int t_kv, float scale, int n_tok, int q_tok, int ms_tok, int acc_tok) {
    const int gz = (int)gridDim.z / n_tok, t = (int)blockIdx.z / gz;
    memra_attn_before_wait<256, true>(kc, vc, ks, vs, capacity, n_splits, t_kv + t, nullptr, (int)blockIdx.z % gz);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_split<256, 8, true>(part_ms + (long long)t * ms_tok, part_acc + (long long)t * acc_tok, q + (long long)t * q_tok, kc, vc,
                                  ks, vs, n_head, n_kv, capacity, n_splits, hpb, t_kv + t, nullptr, scale, (int)blockIdx.z % gz, gz);
}

// out: [n_head][head_dim] f32; part_ms, part_acc: as written by attn_split_*;
// gate: null, or gate for head h at gate + h*gate_stride ([head_dim] f32 each).
// Dynamic shared memory: n_splits floats (the merge factors).
//
// Grid (n_head, ceil(head_dim/32)): a block merges 32 dims of one head. Its
// threads first find M and the factors f_s together (strided over splits,
// block reductions), then thread (j, lane) sums the splits s = j, j+NJ, ...
// of dim lane, and the NJ partial sums are added in j order. One thread per
// dim walking every split in turn made the merge a chain of n_splits
// dependent trips (~16-24 µs per layer at 32k, run22's profile).
__device__ __forceinline__ void memra_attn_combine(float* out, const float* part_ms, const float* part_acc, const float* gate,
                                                   int n_head, int head_dim, int n_splits, int gate_stride) {
    constexpr int NJ = MEMRA_COMBINE_THREADS / 32; // split groups
    extern __shared__ float f[];
    __shared__ float red[NJ];
    __shared__ float part[NJ][32];
    const int h = blockIdx.x;
    if (h >= n_head) return;
    const float* ms = part_ms + (long long)h * n_splits * 2;
    float M = -INFINITY;
    for (int s = threadIdx.x; s < n_splits; s += MEMRA_COMBINE_THREADS) M = fmaxf(M, ms[2 * s]);
    M = memra_block_max<MEMRA_COMBINE_THREADS>(M, red);
    float L = 0.0f;
    for (int s = threadIdx.x; s < n_splits; s += MEMRA_COMBINE_THREADS) {
        const float m = ms[2 * s];
        f[s] = (m == -INFINITY) ? 0.0f : expf(m - M);
        L += ms[2 * s + 1] * f[s];
    }
    L = memra_block_sum<MEMRA_COMBINE_THREADS>(L, red); // its barrier also publishes f
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;         // t_kv == 0: all splits empty, out = 0
    const int j = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int d = blockIdx.y * 32 + lane;
    float a = 0.0f;
    if (d < head_dim) {
        const float* acc = part_acc + (long long)h * n_splits * head_dim + d;
        for (int s = j; s < n_splits; s += NJ) a += acc[(long long)s * head_dim] * f[s];
    }
    part[j][lane] = a;
    __syncthreads();
    if (j == 0 && d < head_dim) {
        float t = 0.0f;
#pragma unroll
        for (int k = 0; k < NJ; k++) t += part[k][lane];
        float o = t * inv;
        if (gate) o *= memra_sigmoid(gate[(long long)h * gate_stride + d]);
        out[(long long)h * head_dim + d] = o;
    }
}

extern "C" __global__ void __launch_bounds__(MEMRA_COMBINE_THREADS)
attn_combine(float* out, const float* part_ms, const float* part_acc, const float* gate,
             int n_head, int head_dim, int n_splits, int gate_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_combine(out, part_ms, part_acc, gate, n_head, head_dim, n_splits, gate_stride);
}

// attn_combine for the n_tok tokens of a prompt chunk whose steps share a
// bucket (n_splits), token t's blocks grid.z = t's (the grid is n_tok
// deep): its out, part_ms, part_acc and gate start t·out_tok, t·ms_tok,
// t·acc_tok and t·gate_tok floats after token 0's, and its bits are
// attn_combine's.
extern "C" __global__ void __launch_bounds__(MEMRA_COMBINE_THREADS)
attn_combine_chunk(float* out, const float* part_ms, const float* part_acc, const float* gate, int n_head, int head_dim,
                   int n_splits, int gate_stride, int n_tok, int out_tok, int ms_tok, int acc_tok, int gate_tok) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const long long t = blockIdx.z;
    memra_attn_combine(out + t * out_tok, part_ms + t * ms_tok, part_acc + t * acc_tok, gate ? gate + t * gate_tok : gate,
                       n_head, head_dim, n_splits, gate_stride);
}
