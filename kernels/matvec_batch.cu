// matvec_batch.cu: y_t (+)= W x_t for the n <= 8 tokens of a prompt chunk.
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
// feeds n tokens' sums, so a lane holds n*R accumulators and two loads per
// row in flight (U = 2) are enough to keep the stream going.
//
// x_t = x + t*x_stride, y_t = y + t*y_stride (floats); x_stride % 4 == 0,
// so that every x_t is 16-byte aligned or none is, and the rows take the
// decode kernel's path for each (the host's strides are multiples of 64).
// stage 1 has the block normalise every token's x into its own cols floats
// of dynamic shared memory (memra_mvb_inputs, built from memra_mv_input's
// pieces: the decode kernels' fused norm); stage
// 2 copies x_t there as it is (where the host has the room: a chunk of
// n_ff-wide inputs may not fit); stage 0 reads x_t from global memory. The
// copies are laid out so that a warp's reads of them are conflict-free
// (memra_xs_slot), which reading ggml's layout, a lane's 16-byte chunks
// 64 bytes apart for q8_0, is not: the same values in other places, so the
// same sums.
#include "common.cuh"

// Each lane's 32 values x[j] summed over the warp, value j's sum returned
// to lane j: a reduce-scatter whose every level adds the pairs
// memra_warp_sum's butterfly adds (lanes off apart, off = 16, 8, ..., 1;
// own + partner), so each sum has its bits. A level halves the values a
// lane holds; 31 shuffles where 32 butterflies take 160.
template <int OFF>
__device__ __forceinline__ void memra_warp_sum_level(float (&x)[32], int lane) {
    const bool hi = lane & OFF;
#pragma unroll
    for (int j = 0; j < OFF; j++) {
        const float send = hi ? x[j] : x[j + OFF];
        const float keep = hi ? x[j + OFF] : x[j];
        x[j] = keep + __shfl_xor_sync(MEMRA_FULL_MASK, send, OFF);
    }
}

__device__ __forceinline__ float memra_warp_sum_scatter(float (&x)[32], int lane) {
    memra_warp_sum_level<16>(x, lane);
    memra_warp_sum_level<8>(x, lane);
    memra_warp_sum_level<4>(x, lane);
    memra_warp_sum_level<2>(x, lane);
    memra_warp_sum_level<1>(x, lane);
    return x[0];
}

template <int KIND, int KW, bool LS, bool XG>
__device__ __forceinline__ void memra_mvb_rows(float* y, const void* W, const unsigned short* S, const float* x, int x_stride, int rows,
                                               int cols, int mode, int n, int y_stride) {
    constexpr int R = 4, NT = MEMRA_MVB_TOKENS, U = 2;
    using Geo = memra_mv_geom<KIND, R, KW>;
    constexpr int G = Geo::G, V = Geo::V, step = Geo::step, XF4 = V / 4;
    static_assert(!LS || (KIND == MEMRA_MV_Q8 && KW * 16 == MEMRA_Q8_LANE_PAIRS), "lane-order scales are the wide q8_0 kernels'");
    static_assert(NT * R == 32 && R % 2 == 0, "a lane holds one token's row sum (memra_warp_sum_scatter), mode 2's pairs one token's");
    __shared__ float red[MEMRA_MV_THREADS / 32][NT * R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int units = (rows + G * R - 1) / (G * R);
    // The decode kernel's test, for every token's x (x_stride % 4 == 0: each
    // 16-byte aligned when x is).
    const bool vec = cols % V == 0 && memra_aligned16(W) && memra_aligned16(x) && (x_stride & 3) == 0;
    const memra_q8_lanes ls = LS ? memra_q8_lane_layout(cols) : memra_q8_lanes{1, cols >> 5};
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const int r0 = (unit * G + g) * R;
        const unsigned char* rowp[R];
        const unsigned short* srow[R];
        memra_mv_unit_rows<KIND, R, LS>(rowp, srow, W, S, r0, rows, cols, ls);
        float acc[NT][R];
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
            for (int i = 0; i < R; i++) acc[t][i] = 0.0f;
        if (vec) {
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
#pragma unroll
                    for (int t = 0; t < NT; t++) {
                        if (t >= n) break;
                        // Global x as ggml lays it out; the shared copies as
                        // memra_xs_slot permutes them.
                        const float4* xt = reinterpret_cast<const float4*>(x + (long long)t * x_stride);
                        const float4* xp = XG ? xt + XF4 * (v + step * u) : xt + v + step * u;
#pragma unroll
                        for (int i = 0; i < R; i++) acc[t][i] = memra_mv_dot<KIND, XG>(wv[u][i], xp, d[u][i], acc[t][i], XG ? 1 : nv);
                    }
                }
            }
        } else {
            for (int c = kw * 32 + lane; c < cols; c += step) {
#pragma unroll
                for (int i = 0; i < R; i++) {
                    const float e = memra_mv_elem<KIND, LS>(rowp[i], srow[i], c, ls.tp);
#pragma unroll
                    for (int t = 0; t < NT; t++)
                        if (t < n) acc[t][i] += e * x[(long long)t * x_stride + c];
                }
            }
        }
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
        // Lane j ends with sum j = (token j / R, row j % R): the warp's and
        // then, in warp order, the KW warps' of its group, as the decode
        // kernel adds its rows.
        float sums[NT * R];
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
            for (int i = 0; i < R; i++) sums[t * R + i] = acc[t][i];
        float sum = memra_warp_sum_scatter(sums, lane);
        if (KW > 1) {
            red[warp][lane] = sum;
            __syncthreads();
            sum = 0.0f;
#pragma unroll
            for (int k = 0; k < KW; k++) sum += red[g * KW + k][lane];
            __syncthreads(); // red is rewritten by the next unit
        }
        // As in memra_mv_rows: row r0+i of every token (mode 2: pair i/2,
        // from the even row's lane).
        if (kw == 0) {
            const int t = lane / R, i = lane % R;
            float* yt = y + (long long)t * y_stride;
            if (mode == 2) {
                const float up = __shfl_down_sync(MEMRA_FULL_MASK, sum, 1);
                if (t < n && (i & 1) == 0 && r0 + i + 1 < rows) memra_mv_put(yt, r0 + i, sum, up, 2);
            } else if (t < n && r0 + i < rows) {
                memra_mv_put(yt, r0 + i, sum, 0.0f, mode);
            }
        }
    }
}

// memra_mv_input for n <= MEMRA_MVB_TOKENS tokens x + t*x_stride (16-byte
// aligned alike: x_stride % 4 == 0) into xs + t*cols in the same passes:
// each token's sum in the order of its own memra_mv_input (its pieces are
// that function's), and a chunk's norms take one round trip to memory, not
// one each.
template <int XF4>
__device__ __forceinline__ void memra_mvb_inputs(float* xs, const float* x, const float* norm_w, int cols, float eps, bool perm, int n,
                                                 int x_stride) {
    constexpr int NT = MEMRA_MVB_TOKENS;
    __shared__ float red[NT][MEMRA_MV_THREADS / 32];
    const bool vec = (cols & 3) == 0 && memra_aligned16(x) && memra_aligned16(norm_w);
    const int m = vec ? cols / 4 : cols;
    float ss[NT];
#pragma unroll
    for (int t = 0; t < NT; t++) ss[t] = 0.0f;
    for (int i = threadIdx.x; i < m; i += MEMRA_MV_THREADS) {
#pragma unroll
        for (int t = 0; t < NT; t++) {
            if (t >= n) break;
            const float* xt = x + (long long)t * x_stride;
            if (vec) {
                ss[t] = memra_mv_sq(ss[t], reinterpret_cast<const float4*>(xt)[i]);
            } else {
                const float v = xt[i];
                ss[t] += v * v;
            }
        }
    }
#pragma unroll
    for (int t = 0; t < NT; t++) {
        if (t >= n) break;
        ss[t] = memra_warp_sum(ss[t]);
        if ((threadIdx.x & 31) == 0) red[t][threadIdx.x >> 5] = ss[t];
    }
    __syncthreads();
    float inv[NT];
#pragma unroll
    for (int t = 0; t < NT; t++) inv[t] = t < n ? memra_mv_inv(red[t], cols, eps) : 0.0f;
    for (int i = threadIdx.x; i < m; i += MEMRA_MV_THREADS) {
#pragma unroll
        for (int t = 0; t < NT; t++) {
            if (t >= n) break;
            const float* xt = x + (long long)t * x_stride;
            float* st = xs + t * cols;
            if (vec) {
                reinterpret_cast<float4*>(st)[memra_xs_slot<XF4>(i, m, perm)] =
                    memra_mv_scale(reinterpret_cast<const float4*>(xt)[i], inv[t], reinterpret_cast<const float4*>(norm_w)[i]);
            } else {
                st[memra_xs_elem<XF4>(i, cols, perm)] = xt[i] * inv[t] * norm_w[i];
            }
        }
    }
    __syncthreads();
}

// The tokens' x (x + t*x_stride, x_stride % 4 == 0) copied as they are to
// xs + t*cols (memra_xs_slot's layout with perm), the loads of all tokens
// in flight together.
template <int XF4>
__device__ __forceinline__ void memra_mvb_copy(float* xs, const float* x, int cols, bool perm, int n, int x_stride) {
    const bool vec = (cols & 3) == 0 && memra_aligned16(x);
    const int m = vec ? cols / 4 : cols;
    for (int i = threadIdx.x; i < m; i += MEMRA_MV_THREADS) {
#pragma unroll
        for (int t = 0; t < MEMRA_MVB_TOKENS; t++) {
            if (t >= n) break;
            const float* xt = x + (long long)t * x_stride;
            float* st = xs + t * cols;
            if (vec)
                reinterpret_cast<float4*>(st)[memra_xs_slot<XF4>(i, m, perm)] = reinterpret_cast<const float4*>(xt)[i];
            else
                st[memra_xs_elem<XF4>(i, cols, perm)] = xt[i];
        }
    }
    __syncthreads();
}

// The caller has waited (memra_grid_wait: the kernels' first statement).
template <int KIND, int KW, bool LS = false>
__device__ __forceinline__ void memra_mvb(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode,
                                          const float* norm_w, int stage, float eps, int n, int x_stride, int y_stride) {
    n = min(n, MEMRA_MVB_TOKENS);
    // A copy of x as it is stands in for x only where the decode kernel,
    // reading x itself, takes the 16-byte path as the copy's rows will:
    // x_t 16-byte aligned.
    if (stage == 2 && !(memra_aligned16(x) && (x_stride & 3) == 0)) stage = 0;
    if (stage) {
        // Permuted where the rows take the 16-byte path (memra_mvb_rows' test
        // on a copy in shared memory).
        constexpr int V = memra_mv_kind<KIND>::V;
        const bool perm = cols % V == 0 && memra_aligned16(W);
        if (stage == 2)
            memra_mvb_copy<V / 4>(memra_xs, x, cols, perm, n, x_stride);
        else
            memra_mvb_inputs<V / 4>(memra_xs, x, norm_w, cols, eps, perm, n, x_stride);
        memra_mvb_rows<KIND, KW, LS, false>(y, W, S, memra_xs, cols, rows, cols, mode, n, y_stride);
    } else {
        memra_mvb_rows<KIND, KW, LS, true>(y, W, S, x, x_stride, rows, cols, mode, n, y_stride);
    }
}

// xn_t = rmsnorm(x_t) * norm_w for tokens t < n, block t each, into global
// memory: memra_mv_input itself, so each token's values are the ones a
// decode step's fused norm stages. The 16-bit and f32 batch kernels read
// them from there (stage 0) rather than normalise 8 copies into a block's
// shared memory, which at 4,096 columns (128 KiB) holds them to one block
// an SM (run314: bf16 24576 x 4096 for 8 tokens 170 us staged, 122 from
// global memory). xn_t must be 16-byte aligned, as the staged copy is, so
// that the rows take the decode kernel's path.
// xn: [n][xn_stride] f32; x: [n][x_stride] f32; norm_w: [cols] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_batch_norm(float* xn, const float* x, const float* norm_w, int n, int cols, int x_stride, int xn_stride, float eps) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int t = blockIdx.x;
    if (t >= n) return;
    memra_mv_input(xn + (long long)t * xn_stride, x + (long long)t * x_stride, norm_w, cols, eps);
}

// The kernels, one per decode kernel geometry (KW, scale order; the spec's
// MatvecBatchKernels): matvec_f32, _f16, _bf16 (KW 4), their _wide forms
// (KW 8), matvec_q8_0 (KW 1) and matvec_q8_0_wide, whose sums
// matvec_q8_0_wave shares (KW 4, lane-order scales). The n*R sums and U*R
// loads live in registers: two blocks an SM fit them for the 16-bit types
// and f32; q8_0's 16 products a load spill at that bound and take one block
// (8 warps, each with U*R 16-byte loads in flight).
//
// y: [n][y_stride] f32 (mode 2: the first rows/2 of each); W: [rows][cols]; x: [n][x_stride] f32; norm_w: [cols] f32 (read when stage == 1)
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_f32(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                 float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_F32, 4>(y, W, nullptr, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_f16(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                 float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_F16, 4>(y, W, nullptr, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_f16_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                      float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_F16, 8>(y, W, nullptr, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_bf16(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                  float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_BF16, 4>(y, W, nullptr, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_bf16_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                       float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_BF16, 8>(y, W, nullptr, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}

// S: [rows][cols/32] f16 scales (matvec_batch_q8_0_wide: [rows][stride] in lane order, memra_q8_lane_layout)
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                  float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_Q8, 1>(y, W, S, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q8_0_wide(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, const float* norm_w, int stage,
                       float eps, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_mvb<MEMRA_MV_Q8, 4, true>(y, W, S, x, rows, cols, mode, norm_w, stage, eps, n, x_stride, y_stride);
}
