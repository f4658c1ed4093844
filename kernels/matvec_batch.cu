// matvec_batch.cu: y_t (+)= W x_t for the n tokens of a prompt chunk, 8 a pass.
//
// Why it looks like this: a prompt's tokens are known before it is fed, so
// priming can stream each weight once per chunk of tokens instead of once
// per token (engine/gpu prefill.go). The sums must be the decode kernels'
// bit for bit: a cache primed in chunks must be the one primed token by
// token, or the gate's streams would part. So a lane takes the same 16-byte
// loads in the same order as the decode kernel of that matrix
// (matvec.cu memra_mv_rows: load kw*32 + lane, then + KW*32 ...), adds each
// with the same memra_mv_dot, and the warps reduce as there; KW and the q8_0
// scale order (LS) are the decode kernel's, while R and the load batching,
// which never touch the arithmetic, are this file's. Each weight load now
// feeds n tokens' sums, so a lane holds n*R accumulators, and the next
// item's loads (memra_mvb_stream, the 16-bit kinds), two loads per row
// (memra_mvb_units) or a ring of them (memra_mvb_ring) in flight keep the
// stream going.
//
// x_t = x + t*x_stride, y_t = y + t*y_stride (floats); x_stride % 4 == 0,
// so that every x_t is 16-byte aligned or none is, and the rows take the
// decode kernel's path for each (the host's strides are multiples of 64).
// The staged kernels have the block copy every x_t into its own cols
// floats of dynamic shared memory, after the warps' rings (where the host
// has the room: a chunk of n_ff-wide inputs may not fit); the laid ones,
// where it has not, read x_t from global memory as matvec_batch_lay laid
// it out once in the copies' layout; the others read x_t from global
// memory as the step lays it out. Inputs the decode kernel normalises in
// its blocks come normalised by matvec_batch_norm, the same values. The
// copies are laid out so that a warp's reads of them are conflict-free
// (memra_xs_slot), which reading ggml's layout, a lane's 16-byte chunks 64
// bytes apart for q8_0, is not: the same values in other places, so the
// same sums.
#include "common.cuh"

// Each lane's 32 values x[j] summed over the warp, value j's sum returned
// to lane j: a reduce-scatter whose every level adds the pairs
// memra_warp_sum's butterfly adds (lanes off apart, off = 16, 8, ..., 1;
// own + partner, and a + b is b + a to the bit), so each sum has its bits.
// A level halves the values a lane holds; 31 shuffles where 32 butterflies
// take 160. Where lane L holds value j in slot j ^ (L & PM) (PM's levels:
// memra_mvb_dots' token order), a level in PM keeps its low half and sends
// its high half on every lane, with no select between them.
template <int OFF, bool SWAPPED>
__device__ __forceinline__ void memra_warp_sum_level(float (&x)[32], int lane) {
    const bool hi = lane & OFF;
#pragma unroll
    for (int j = 0; j < OFF; j++) {
        const float send = SWAPPED || !hi ? x[j + OFF] : x[j];
        const float keep = SWAPPED || !hi ? x[j] : x[j + OFF];
        x[j] = keep + __shfl_xor_sync(MEMRA_FULL_MASK, send, OFF);
    }
}

template <int PM>
__device__ __forceinline__ float memra_warp_sum_scatter(float (&x)[32], int lane) {
    memra_warp_sum_level<16, (PM & 16) != 0>(x, lane);
    memra_warp_sum_level<8, (PM & 8) != 0>(x, lane);
    memra_warp_sum_level<4, (PM & 4) != 0>(x, lane);
    memra_warp_sum_level<2, (PM & 2) != 0>(x, lane);
    memra_warp_sum_level<1, (PM & 1) != 0>(x, lane);
    return x[0];
}

// The token order of a full pass's sums: lane L's acc[t] holds token
// t ^ memra_mvb_tl(L), so that memra_mvb_put's levels over the token bits
// of its 32 sums (j = t*R + i) need no selects (memra_warp_sum_scatter's
// PM). Which token a lane adds where changes no sum: each (token, row) is
// still the one lane's chain of memra_mv_dot calls.
template <int R>
__host__ __device__ constexpr int memra_mvb_pm() {
    return 31 & ~(R - 1);
}

template <int R>
__device__ __forceinline__ int memra_mvb_tl(int lane) {
    return (lane & memra_mvb_pm<R>()) / R;
}

// A warp's ring (memra_mvb_ring; the staged kernels are q8_0's):
// MEMRA_MVB_SLOTS slots of the lanes' 16-byte loads of R rows (lane L's
// load of row i at (i*32 + L)*16), then as many slots of the loads' scales
// (a 4-byte word each, the one holding the f16). A staged kernel's dynamic
// shared memory starts with the block's 8 rings
// (kernels.MatvecBatchKernel.Shared).
struct memra_mvb_ring_geom {
    static constexpr int R = 4, SL = MEMRA_MVB_SLOTS;
    static constexpr int W = R * 32 * 16, D = R * 32 * 4; // a slot's bytes: loads, scales
    static constexpr int BYTES = SL * (W + D);            // a warp's ring
    static constexpr int BLOCK = (MEMRA_MV_THREADS / 32) * BYTES;
    static_assert(W + D == MEMRA_MVB_SLOT, "the host sizes the rings from common.cuh");
};

__device__ __forceinline__ void memra_cp16(unsigned int s, const void* g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(g) : "memory");
}

// The 4-byte word holding the f16 at p (S is 4-byte aligned: the upload's,
// engine/gpu batch checks it), reading only p's two bytes where p is the
// word's low half: the high half may lie past the array.
__device__ __forceinline__ void memra_cp_f16_word(unsigned int s, const unsigned short* p) {
    const unsigned long long a = reinterpret_cast<unsigned long long>(p);
    const int bytes = (a & 2) ? 4 : 2;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(s), "l"(a & ~3ull), "r"(bytes) : "memory");
}

// A unit's sums, every token's of every row, back to zero.
template <int NT, int R>
__device__ __forceinline__ void memra_mvb_zero(float (&acc)[NT][R]) {
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
        for (int i = 0; i < R; i++) acc[t][i] = 0.0f;
}

// The KW warps of group g meet: at barrier 1 + g where a block has several
// groups, whose units need not end together, else the block's.
template <int KW>
__device__ __forceinline__ void memra_mvb_group_sync(int g) {
    if constexpr (KW * 32 == MEMRA_MV_THREADS)
        __syncthreads();
    else
        asm volatile("bar.sync %0, %1;" ::"r"(1 + g), "n"(KW * 32) : "memory");
}

// The end of a unit: lane j's sum j = (token j / R, row j % R), the warp's
// and then, in warp order, the KW warps' of its group, as the decode kernel
// adds its rows, put as memra_mv_rows puts them (mode 2: pair i/2, from the
// even row's lane). PERM: acc in a full pass's token order (memra_mvb_tl).
template <int KW, bool PERM, int NT, int R>
__device__ __forceinline__ void memra_mvb_put(float* y, float (&acc)[NT][R], float (*red)[NT * R], int r0, int rows, int mode, int n,
                                              int y_stride) {
    constexpr int H = NT * R / 32; // R = 8: each lane ends with two sums, tokens 0-3's and 4-7's
    static_assert(NT * R % 32 == 0 && 32 % R == 0, "whole tokens in each 32 sums");
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    float sum[H];
#pragma unroll
    for (int h = 0; h < H; h++) {
        float sums[32];
#pragma unroll
        for (int j = 0; j < 32; j++) sums[j] = acc[(h * 32 + j) / R][j % R];
        sum[h] = memra_warp_sum_scatter<PERM ? memra_mvb_pm<R>() : 0>(sums, lane);
    }
    if (KW > 1) {
#pragma unroll
        for (int h = 0; h < H; h++) red[warp][h * 32 + lane] = sum[h];
        memra_mvb_group_sync<KW>(g);
        if (kw == 0) {
#pragma unroll
            for (int h = 0; h < H; h++) {
                sum[h] = 0.0f;
#pragma unroll
                for (int k = 0; k < KW; k++) sum[h] += red[g * KW + k][h * 32 + lane];
            }
        }
        memra_mvb_group_sync<KW>(g); // red is rewritten by the next unit
    }
    if (kw == 0) {
#pragma unroll
        for (int h = 0; h < H; h++) {
            const int t = (h * 32 + lane) / R, i = lane % R;
            float* yt = y + (long long)t * y_stride;
            if (mode == 2) {
                const float up = __shfl_down_sync(MEMRA_FULL_MASK, sum[h], 1);
                if (t < n && (i & 1) == 0 && r0 + i + 1 < rows) memra_mv_put(yt, r0 + i, sum[h], up, 2);
            } else if (t < n && r0 + i < rows) {
                memra_mv_put(yt, r0 + i, sum[h], 0.0f, mode);
            }
        }
    }
}

// Load v of R rows (wv, q8_0 scales d) added to every token's sums: x
// from global memory as ggml lays it out (XG), or from the shared copies as
// memra_xs_slot permutes them (ks = nv float4s between a load's parts).
// FULL: n == NT, known at compile time. Without a branch between tokens
// ptxas schedules every token's x loads and sums of a load together; behind
// `t >= n` it issued them a token at a time (docs/perf.md step 119: q8_0
// 24576 x 4096 for 8 tokens 80.6 -> 66.1 us on an H100). A full pass's
// acc[t] is token t ^ tl's (memra_mvb_tl), a shorter one's token t's (tl 0).
template <int KIND, bool XG, int NT, int R, bool FULL>
__device__ __forceinline__ void memra_mvb_dots(float (&acc)[NT][R], const uint4 (&wv)[R], const float (&d)[R], const float* x,
                                               int x_stride, int v, int ks, int n, int tl) {
    constexpr int XF4 = memra_mv_kind<KIND>::V / 4;
#pragma unroll
    for (int t = 0; t < NT; t++) {
        if (!FULL && t >= n) break;
        const float4* xt = reinterpret_cast<const float4*>(x + (long long)(t ^ tl) * x_stride);
        const float4* xp = XG ? xt + XF4 * v : xt + v;
#pragma unroll
        for (int i = 0; i < R; i++) acc[t][i] = memra_mv_dot<KIND, XG>(wv[i], xp, d[i], acc[t][i], ks);
    }
}

// The rows' sums a unit at a time, x read from global memory: on the
// 16-byte path (VEC and vec) two loads a row in flight in registers, else
// element by element (the decode kernel's path where W or x is misaligned
// or cols is not a multiple of V).
template <int KIND, int KW, bool LS, bool VEC, bool FULL>
__device__ __forceinline__ void memra_mvb_units(float* y, const void* W, const unsigned short* S, const float* x, int x_stride, int rows,
                                                int cols, int mode, int n, int y_stride, bool vec) {
    constexpr int R = 4, NT = MEMRA_MVB_TOKENS, U = 2;
    using Geo = memra_mv_geom<KIND, R, KW>;
    constexpr int G = Geo::G, V = Geo::V, step = Geo::step;
    static_assert(!LS || (KIND == MEMRA_MV_Q8 && KW * 16 == MEMRA_Q8_LANE_PAIRS), "lane-order scales are the wide q8_0 kernels'");
    static_assert(NT * R == 32 && R % 2 == 0, "a lane holds one token's row sum (memra_warp_sum_scatter), mode 2's pairs one token's");
    __shared__ float red[MEMRA_MV_THREADS / 32][NT * R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int units = (rows + G * R - 1) / (G * R);
    const memra_q8_lanes ls = LS ? memra_q8_lane_layout(cols) : memra_q8_lanes{1, cols >> 5};
    const int tl = FULL ? memra_mvb_tl<R>(lane) : 0;
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const int r0 = (unit * G + g) * R;
        const unsigned char* rowp[R];
        const unsigned short* srow[R];
        memra_mv_unit_rows<KIND, R, LS>(rowp, srow, W, S, r0, rows, cols, ls);
#pragma unroll
        for (int i = 0; i < R; i++) {
            memra_opaque(rowp[i]);
            if (KIND == MEMRA_MV_Q8) memra_opaque(srow[i]);
        }
        float acc[NT][R];
        memra_mvb_zero(acc);
        if (VEC && vec) {
            const int nv = cols / V;
            for (int v = kw * 32 + lane; v < nv; v += step * U) {
                uint4 wv[U][R];
                float d[U][R];
#pragma unroll
                for (int u = 0; u < U; u++)
#pragma unroll
                    for (int i = 0; i < R; i++) {
                        const int vu = v + step * u;
                        const bool in = vu < nv;
                        wv[u][i] = in ? memra_ldg16(reinterpret_cast<const uint4*>(rowp[i]) + vu) : make_uint4(0, 0, 0, 0);
                        d[u][i] = KIND == MEMRA_MV_Q8 && in ? memra_f16_to_f32(__ldg(srow[i] + (LS ? memra_q8_lane_index(vu >> 1, ls.tp) : vu >> 1)))
                                                            : 0.0f;
                    }
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (v + step * u >= nv) break;
                    memra_mvb_dots<KIND, true, NT, R, FULL>(acc, wv[u], d[u], x, x_stride, v + step * u, 1, n, tl);
                }
            }
        } else {
            for (int c = kw * 32 + lane; c < cols; c += step) {
#pragma unroll
                for (int i = 0; i < R; i++) {
                    const float e = memra_mv_elem<KIND, LS>(rowp[i], srow[i], c, ls.tp);
#pragma unroll
                    for (int t = 0; t < NT; t++)
                        if (t < n) acc[t][i] += e * x[(long long)(t ^ tl) * x_stride + c];
                }
            }
        }
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
        memra_mvb_put<KW, FULL>(y, acc, red, r0, rows, mode, n, y_stride);
    }
}

// The 16-bit kinds' rows with x read from global memory on the 16-byte
// path: a warp's items are its loads of every unit the block takes, trip
// by trip (load kw*32 + lane + j*step of each of its R rows), and each
// item's loads leave before the item ahead of it is summed, across the
// ends of units. On the 0.8B's 1,024-column rows a unit is one trip, so
// memra_mvb_units' loads, issued a unit at a time, waited out a round trip
// before every unit's sums and reduce with nothing of the next unit in
// flight (docs/perf.md step 117: bf16 7168 x 1024 for 8 tokens 10.6 ->
// 9.9 us on an H100). The first item leaves before the wait (weights are
// never written; weak loads, which ptxas keeps there: memra_mv_early). The
// sums are the same memra_mv_dot calls in the same order. q8_0 keeps
// memra_mvb_units: one block an SM, its two trips a row in flight there
// moved more bytes than one item ahead does (step 117: 4096 x 12288 +9%).
template <int KIND, int KW, bool FULL, int R>
__device__ __forceinline__ void memra_mvb_stream(float* y, const void* W, const float* x, int x_stride, int rows, int cols, int mode,
                                                 int n, int y_stride) {
    constexpr int NT = MEMRA_MVB_TOKENS;
    using Geo = memra_mv_geom<KIND, R, KW>;
    constexpr int G = Geo::G, V = Geo::V, step = Geo::step;
    static_assert(KIND == MEMRA_MV_F16 || KIND == MEMRA_MV_BF16, "the 16-bit kinds: no scales to carry");
    static_assert(R % 2 == 0, "mode 2's pairs one token's");
    __shared__ float red[MEMRA_MV_THREADS / 32][NT * R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int units = (rows + G * R - 1) / (G * R);
    const int nv = cols / V;
    const int trips = (nv + step - 1) / step; // a unit's items, the same for every warp (their barriers meet)
    const int items = blockIdx.x < units ? ((units - 1 - (int)blockIdx.x) / (int)gridDim.x + 1) * trips : 0;
    // The wide kernels' 128 registers do not hold a lane's own token
    // offsets (68 bytes spilled): their sums keep the tokens in order.
    constexpr bool PERM = FULL && R == 8;
    const int tl = PERM ? memra_mvb_tl<R>(lane) : 0;
    // The next item to load: trip pj of unit pu, whose rows start at prow.
    int pu = blockIdx.x, pj = 0;
    const unsigned char* prow[R];
    const unsigned short* unused[R];
    auto rows_of = [&](int unit) {
        memra_mv_unit_rows<KIND, R, false>(prow, unused, W, nullptr, (min(unit, units - 1) * G + g) * R, rows, cols, memra_q8_lanes{});
#pragma unroll
        for (int i = 0; i < R; i++) memra_opaque(prow[i]);
    };
    auto load = [&](uint4(&w)[R], bool early) {
        const int v = kw * 32 + lane + pj * step;
#pragma unroll
        for (int i = 0; i < R; i++) {
            const uint4* p = reinterpret_cast<const uint4*>(prow[i]) + v;
            w[i] = v >= nv ? make_uint4(0, 0, 0, 0) : early ? memra_mv_early(p) : memra_ldg16(p);
        }
        if (++pj == trips) {
            pj = 0;
            pu += gridDim.x;
            rows_of(pu);
        }
    };
    rows_of(pu);
    uint4 w[R];
    const float d[R] = {}; // no scales
    if (items > 0) load(w, true);
    memra_grid_wait();
    float acc[NT][R];
    memra_mvb_zero(acc);
    int cu = blockIdx.x, cj = 0;
    for (int f = 0; f < items; f++) {
        uint4 wn[R];
        if (f + 1 < items) load(wn, false);
        const int v = kw * 32 + lane + cj * step;
        if (v < nv) memra_mvb_dots<KIND, true, NT, R, FULL>(acc, w, d, x, x_stride, v, 1, n, tl);
        if (++cj == trips) {
            cj = 0;
            if (cu + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
            memra_mvb_put<KW, PERM>(y, acc, red, (cu * G + g) * R, rows, mode, n, y_stride);
            memra_mvb_zero(acc);
            cu += gridDim.x;
        }
#pragma unroll
        for (int i = 0; i < R; i++) w[i] = wn[i];
    }
}

// Where float4 i of a copy of n4 float4s goes, XF4 float4s of x per
// 16-byte weight load: float4 k of load v at k * (n4 / XF4) + v, so that a
// warp's lanes, reading float4 k of consecutive loads, read consecutive
// addresses instead of every XF4-th (a 4-way bank conflict for q8_0).
template <int XF4>
__device__ __forceinline__ int memra_xs_slot(int i, int n4) {
    return (i % XF4) * (n4 / XF4) + i / XF4;
}

// The tokens' x (x + t*x_stride; x 16-byte aligned, x_stride and cols
// multiples of 4: the 16-byte path's) copied as they are to xs + t*cols in
// memra_xs_slot's layout, the loads of all tokens in flight together.
template <int XF4>
__device__ __forceinline__ void memra_mvb_copy(float* xs, const float* x, int cols, int n, int x_stride) {
    const int m = cols / 4;
    for (int i = threadIdx.x; i < m; i += MEMRA_MV_THREADS) {
#pragma unroll
        for (int t = 0; t < MEMRA_MVB_TOKENS; t++) {
            if (t >= n) break;
            const float4* xt = reinterpret_cast<const float4*>(x + (long long)t * x_stride);
            reinterpret_cast<float4*>(xs + t * cols)[memra_xs_slot<XF4>(i, m)] = xt[i];
        }
    }
    __syncthreads();
}

// The rows' sums with every token's x copied into shared memory (xs, laid
// out by memra_xs_slot) on the 16-byte path; it waits for the predecessor
// (memra_grid_wait) after its first loads. A warp's items are its loads
// of every unit the block takes, trip by trip (load kw*32 + lane + j*step
// of each of its R rows), and they stream through the warp's ring SL - 1
// items ahead, across the ends of units: loads issued a unit at a time left
// the stream idle through every unit's sums and reduce (docs/perf.md step
// 101: q8_0 24576 x 4096 for 8 tokens 100 -> 83 us). Each lane copies and
// reads back only its own loads, so the ring needs no barrier. LAID: x is
// already laid out so in global memory (matvec_batch_lay, x_stride floats
// a token), where a copy would not fit: the same values in the same
// places, so the same sums, read through the L1 without its conflicts.
template <int KIND, int KW, bool LS, bool LAID, bool FULL>
__device__ __forceinline__ void memra_mvb_ring(float* y, const void* W, const unsigned short* S, const float* x, int x_stride, int rows,
                                               int cols, int mode, int n, int y_stride, unsigned char* rings, float* xs) {
    constexpr int R = 4, NT = MEMRA_MVB_TOKENS;
    using Geo = memra_mv_geom<KIND, R, KW>;
    using Ring = memra_mvb_ring_geom;
    constexpr int G = Geo::G, V = Geo::V, step = Geo::step, SL = Ring::SL;
    static_assert(KIND == MEMRA_MV_Q8, "the rings carry q8_0's loads and scales");
    static_assert(Ring::R == R && (SL & (SL - 1)) == 0 && SL >= 2, "the ring's slots: a power of two, one summed and the rest in flight");
    __shared__ float red[MEMRA_MV_THREADS / 32][NT * R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int units = (rows + G * R - 1) / (G * R);
    const memra_q8_lanes ls = LS ? memra_q8_lane_layout(cols) : memra_q8_lanes{1, cols >> 5};
    const int nv = cols / V;
    const int trips = (nv + step - 1) / step; // a unit's items, the same for every warp (their barriers meet)
    const int items = blockIdx.x < units ? ((units - 1 - (int)blockIdx.x) / (int)gridDim.x + 1) * trips : 0;
    const int tl = FULL ? memra_mvb_tl<R>(lane) : 0;
    unsigned char* ring = rings + warp * Ring::BYTES;
    const unsigned int ring_s = (unsigned int)__cvta_generic_to_shared(ring);
    // The next item to copy: trip pj of unit pu (rows prow), item pf.
    int pu = blockIdx.x, pj = 0, pf = 0;
    const unsigned char* prow[R];
    const unsigned short* psrow[R];
    memra_mv_unit_rows<KIND, R, LS>(prow, psrow, W, S, (pu * G + g) * R, rows, cols, ls);
    unsigned int par = 0; // bit slot*R + i set where that load's scale is its word's high half
    auto issue = [&]() {
        const int v = kw * 32 + lane + pj * step;
        if (pf < items && v < nv) {
            const unsigned int s = ring_s + (pf & (SL - 1)) * Ring::W + lane * 16;
#pragma unroll
            for (int i = 0; i < R; i++) memra_cp16(s + i * 512, prow[i] + 16 * v);
            const unsigned int sd = ring_s + SL * Ring::W + (pf & (SL - 1)) * Ring::D + lane * 4;
            const int sh = (pf & (SL - 1)) * R;
            par &= ~(((1u << R) - 1) << sh);
#pragma unroll
            for (int i = 0; i < R; i++) {
                const unsigned short* p = psrow[i] + (LS ? memra_q8_lane_index(v >> 1, ls.tp) : v >> 1);
                memra_cp_f16_word(sd + i * 128, p);
                par |= (unsigned int)((reinterpret_cast<unsigned long long>(p) >> 1) & 1) << (sh + i);
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory"); // one group an item, empty or not
        pf++;
        if (++pj == trips) {
            pj = 0;
            pu += gridDim.x;
            memra_mv_unit_rows<KIND, R, LS>(prow, psrow, W, S, min(pu, units - 1) * G * R + g * R, rows, cols, ls);
        }
    };
    // Weights are never written: the first SL - 1 items leave before the
    // wait, the copies of x (the predecessor's output) after it.
#pragma unroll
    for (int k = 0; k < SL - 1; k++) issue();
    memra_grid_wait();
    const float* xr = LAID ? x : xs;
    const int xr_stride = LAID ? x_stride : cols;
    if (!LAID) memra_mvb_copy<V / 4>(xs, x, cols, n, x_stride);
    float acc[NT][R];
    memra_mvb_zero(acc);
    int cu = blockIdx.x, cj = 0;
    for (int f = 0; f < items; f++) {
        issue(); // into the slot item f - 1 was read from
        asm volatile("cp.async.wait_group %0;" ::"n"(SL - 1) : "memory"); // this lane's copies of item f have landed
        const int v = kw * 32 + lane + cj * step;
        if (v < nv) {
            const int slot = f & (SL - 1);
            uint4 wv[R];
            float d[R];
#pragma unroll
            for (int i = 0; i < R; i++) {
                wv[i] = *reinterpret_cast<const uint4*>(ring + slot * Ring::W + (i * 32 + lane) * 16);
                const unsigned int word = *reinterpret_cast<const unsigned int*>(ring + SL * Ring::W + slot * Ring::D + (i * 32 + lane) * 4);
                d[i] = memra_f16_to_f32((unsigned short)(word >> (16 * ((par >> (slot * R + i)) & 1))));
            }
            memra_mvb_dots<KIND, false, NT, R, FULL>(acc, wv, d, xr, xr_stride, v, nv, n, tl);
        }
        if (++cj == trips) {
            cj = 0;
            if (cu + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
            memra_mvb_put<KW, FULL>(y, acc, red, (cu * G + g) * R, rows, mode, n, y_stride);
            memra_mvb_zero(acc);
            cu += gridDim.x;
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory"); // the empty groups past the end
}

// A batch kernel's body: it waits for its predecessor (memra_grid_wait)
// before its first read of x. STAGED: the kernel copies x into shared
// memory for memra_mvb_ring where the decode kernel takes the 16-byte path
// (a copy of x stands in for x only where the decode kernel, reading x
// itself, takes the path the copy's rows take), else reads it element by
// element as the decode kernel does; LAID: x comes laid out as the copies
// are, and the rows always take the 16-byte path (the host launches it
// only where the decode kernel takes that path: engine/gpu batch);
// otherwise memra_mvb_stream or memra_mvb_units reads x from global memory.
// A full pass of 8 tokens takes a FULL copy of the paths (memra_mvb_dots),
// a shorter one (the last of a prompt's last chunk) the other. Each copy's paths keep their
// own reduce arrays (static shared memory: 2 KiB for the 16-bit kernels,
// 4 KiB for the wide staged q8_0 one), as run371 measured them.
template <int KIND, int KW, bool LS, bool STAGED, bool LAID, bool FULL, int RS>
__device__ __forceinline__ void memra_mvb_paths(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols,
                                                int mode, int n, int x_stride, int y_stride) {
    constexpr int V = memra_mv_kind<KIND>::V;
    // The decode kernel's test, for every token's x (x_stride % 4 == 0: each
    // 16-byte aligned when x is).
    const bool vec = cols % V == 0 && memra_aligned16(W) && memra_aligned16(x) && (x_stride & 3) == 0;
    static_assert(!(STAGED && LAID), "x is staged or laid out, not both");
    if constexpr (LAID) {
        memra_mvb_ring<KIND, KW, LS, true, FULL>(y, W, S, x, x_stride, rows, cols, mode, n, y_stride,
                                                 reinterpret_cast<unsigned char*>(memra_xs), nullptr);
        return;
    }
    if constexpr (STAGED) {
        if (vec) {
            memra_mvb_ring<KIND, KW, LS, false, FULL>(y, W, S, x, x_stride, rows, cols, mode, n, y_stride,
                                                      reinterpret_cast<unsigned char*>(memra_xs),
                                                      memra_xs + memra_mvb_ring_geom::BLOCK / 4);
            return;
        }
    }
    if constexpr (KIND == MEMRA_MV_F16 || KIND == MEMRA_MV_BF16) {
        if (vec) {
            memra_mvb_stream<KIND, KW, FULL, RS>(y, W, x, x_stride, rows, cols, mode, n, y_stride);
            return;
        }
    }
    memra_grid_wait();
    memra_mvb_units<KIND, KW, LS, !STAGED, FULL>(y, W, S, x, x_stride, rows, cols, mode, n, y_stride, vec);
}

// Where a launch's pass (grid row blockIdx.y) finds its tokens' rows of
// p, stride floats a token.
template <class T>
__device__ __forceinline__ T* memra_mvb_pass(T* p, int stride) {
    return p + (long long)blockIdx.y * MEMRA_MVB_TOKENS * stride;
}

// The tokens of a launch's pass, of the launch's n (the grid has
// ceil(n / MEMRA_MVB_TOKENS) rows): every row but the last a full pass,
// the last's count found from the parameters alone (gridDim is in the
// constant bank), so that it holds no register where the kernels run at
// their bound (a K-quant pass's count in a register spilled one, step 127).
__device__ __forceinline__ int memra_mvb_pass_n(int n) {
    return blockIdx.y + 1 < gridDim.y ? MEMRA_MVB_TOKENS : n - (int)(gridDim.y - 1) * MEMRA_MVB_TOKENS;
}

// A launch's n tokens go in passes of up to MEMRA_MVB_TOKENS, the most a
// lane's sums and a block's copies hold: pass p is the blocks of grid row
// blockIdx.y = p, a batch of its own (its tokens' sums, so their bits, are
// a launch of that batch's). A chunk of 16 tokens is one launch of two
// passes where two chunks of 8 were two launches of everything between
// them (docs/perf.md step 127). The passes' blocks take the same units in
// the same order side by side, so one pass's weight reads find the other's
// in the L2 while they keep pace.
// RS: the 16-bit stream's rows a warp (4, or 8: each x load feeds twice the rows).
template <int KIND, int KW, bool LS, bool STAGED, bool LAID = false, int RS = 4>
__device__ __forceinline__ void memra_mvb(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode,
                                          int n, int x_stride, int y_stride) {
    y = memra_mvb_pass(y, y_stride);
    x = memra_mvb_pass(x, x_stride);
    n = memra_mvb_pass_n(n);
    if (n == MEMRA_MVB_TOKENS)
        memra_mvb_paths<KIND, KW, LS, STAGED, LAID, true, RS>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
    else
        memra_mvb_paths<KIND, KW, LS, STAGED, LAID, false, RS>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}

// xn_t = rmsnorm(x_t) * norm_w for tokens t < n, block t each, into global
// memory: memra_mv_input itself, so each token's values are the ones a
// decode step's fused norm stages. The batch kernels read them from there
// or copy them as they are, rather than normalise every token in every
// block (run314: bf16 24576 x 4096 for 8 tokens 170 us normalised in the
// blocks, 122 from global memory; run324: q8_0 93 against 83 copied, and
// this kernel's 4.2-5.5 in runs 326-327). xn_t must be 16-byte aligned, as the staged copy
// is, so that the rows take the decode kernel's path.
// xn: [n][xn_stride] f32; x: [n][x_stride] f32; norm_w: [cols] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_batch_norm(float* xn, const float* x, const float* norm_w, int n, int cols, int x_stride, int xn_stride, float eps) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int t = blockIdx.x;
    if (t >= n) return;
    memra_mv_input(xn + (long long)t * xn_stride, x + (long long)t * x_stride, norm_w, cols, eps);
}

// xl_t = x_t laid out as the staged kernels' copies (memra_xs_slot, q8_0's
// 4 float4s a load) for tokens t < n, block t each: the input of a q8_0
// launch whose copies would not fit in shared memory (the 9B's 12,288-wide
// down projection), which its ring then reads from global memory
// conflict-free (matvec_batch_q8_0*_laid). cols % 16 == 0; x_t, xl_t
// 16-byte aligned.
// xl: [n][xl_stride] f32; x: [n][x_stride] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_batch_lay(float* xl, const float* x, int n, int cols, int x_stride, int xl_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int t = blockIdx.x;
    if (t >= n) return;
    const float4* xt = reinterpret_cast<const float4*>(x + (long long)t * x_stride);
    float4* lt = reinterpret_cast<float4*>(xl + (long long)t * xl_stride);
    const int m = cols / 4;
    for (int i = threadIdx.x; i < m; i += MEMRA_MV_THREADS) lt[memra_xs_slot<memra_mv_kind<MEMRA_MV_Q8>::V / 4>(i, m)] = xt[i];
}

// The kernels, one per decode kernel geometry (KW, scale order; the spec's
// MatvecBatchKernels): matvec_f32, _f16, _bf16 (KW 4), their _wide forms
// (KW 8), matvec_q8_0 (KW 1) and matvec_q8_0_wide, whose sums
// matvec_q8_0_wave shares (KW 4, lane-order scales), each reading x from
// global memory; q8_0's also in a _staged form, x copied into shared memory
// and the loads through the rings, and a _laid form, x laid out so in
// global memory by matvec_batch_lay and the loads through the rings
// (engine/gpu prefill.go from says where). Apart, so that each kernel's registers are its own loop's: with
// both loops in one kernel, ptxas kept the 16-bit kernels to 114 registers
// by reloading a unit's row addresses every trip (run325: 9B bf16 priming
// 1.8% slower). The n*R sums and U*R loads live in registers: two blocks an
// SM fit them for the wide 16-bit kernels (and f32's until its passes'
// pointers spilled one at 128 registers: one block, step 127; only the
// tests' tiny models are f32); the plain 16-bit ones
// take 8 rows a warp at one block an SM, so that each x load feeds twice the
// rows (the 12,288-column down projections read x from the L2 for every
// unit: docs/perf.md step 121), where the wide ones lost with 8 (step 120);
// q8_0's 16 products a load spill at two blocks and take one (8 warps, each
// with U*R 16-byte loads, or its ring's, in flight).
//
// y: [n][y_stride] f32 (mode 2: the first rows/2 of each); W: [rows][cols]; x: [n][x_stride] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_f32(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_F32, 4, false, false>(y, W, nullptr, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_f16(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_F16, 4, false, false, false, 8>(y, W, nullptr, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_f16_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_F16, 8, false, false>(y, W, nullptr, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_bf16(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_BF16, 4, false, false, false, 8>(y, W, nullptr, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_bf16_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_BF16, 8, false, false>(y, W, nullptr, x, rows, cols, mode, n, x_stride, y_stride);
}

// S: [rows][cols/32] f16 scales (_wide: [rows][stride] in lane order, memra_q8_lane_layout), 4-byte aligned
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, int n, int x_stride,
                  int y_stride) {
    memra_mvb<MEMRA_MV_Q8, 1, false, false>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0_wide(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, int n, int x_stride,
                       int y_stride) {
    memra_mvb<MEMRA_MV_Q8, 4, true, false>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0_staged(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, int n,
                         int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_Q8, 1, false, true>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0_wide_staged(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, int n,
                              int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_Q8, 4, true, true>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}

// x: [n][x_stride] f32 laid out by matvec_batch_lay
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0_laid(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, int n,
                       int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_Q8, 1, false, false, true>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0_wide_laid(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, int n,
                            int x_stride, int y_stride) {
    memra_mvb<MEMRA_MV_Q8, 4, true, false, true>(y, W, S, x, rows, cols, mode, n, x_stride, y_stride);
}
