// matvec_batch_kq.cu: y_t (+)= W x_t for the n <= 8 tokens of a prompt
// chunk, W a K-quant matrix in the tensor-core kernels' tiles (Q4_K, Q5_K,
// Q6_K), bit for bit each token's decode sums.
//
// Why it looks like this: the decode kernels (matvec_q4k.cu, matvec_q6k.cu)
// carry one token's x' (hi and lo f16) in two of the 8 columns of each
// mma.m16n8k16's B, the other six zero, and each lane of a quad scales the
// runs whose sums land in its two columns of D. Here B's 8 columns are 4
// tokens' hi and lo (lane L loads column L/4: token L/8 of the group, hi or
// lo), so one mma makes a run's sums for 4 tokens from the same A fragment
// and the same products: a token's column of D is its decode step's. Every
// run's D is then held by the lane whose D columns are its token's (lane
// L's: token L%4), which repeats for that token the scale arithmetic of all
// four lanes of the decode kernel's quad (memra_q4t_scale, memra_q6t_scale,
// the decode steps' own) into four sums and adds them in the order the
// quad's two shuffles do. So a token costs a quarter of its decode mma and
// a quarter of its codes' decoding. A launch takes up to 8 tokens, two
// groups of 4 through the same A fragments.
//
// The block stages every token's x' as the decode kernel's block stages its
// one (memra_stage_x: the norm fused or not, the same split and run sums),
// so the dynamic shared memory holds n copies beside the rings, and a chunk
// of wide inputs takes more than one launch (kernels.MatvecBatchKernel
// .Tokens; the host splits it). KW, and with it every sum's order, is the
// decode kernel's; the ring (memra_mvt_loop) is its, with MEMRA_MVBK_SLOTS
// slots, which only sets how far ahead the tiles are copied.
#include "common.cuh"
#include "kquant.cuh"
#include "mma.cuh"
#include "mvring.cuh"

// A launch's token groups of 4 (B's 8 columns are 4 tokens' hi and lo).
#define MEMRA_MVBK_GROUPS 2

// The sums of a lane: acc[G][p][h] is the decode quad's lane p's share of
// row g + 8h (g = lane/4) for token 4G + lane%4.
typedef float memra_mvbk_acc[MEMRA_MVBK_GROUPS][4][2];

// Q4_K (Q5: Q5_K) superblock sb of a lane's tile share s for the chunk's n
// tokens, token t's x' at xsplit + t * cols/4 and its run sums at xsum + t
// * cols/32. Runs p and p + 4 are the decode quad's lane p's.
template <bool Q5>
__device__ __forceinline__ void memra_q4t_bstep(memra_mvbk_acc& acc, const memra_q4t_sb& s, int sb, const uint4* xsplit, const float* xsum,
                                                int cols, int n, int lane) {
    const int lc = lane & 3, tk = lane >> 3, hl = (lane >> 2) & 1; // B column 2 tk + hl: token tk of a group
#pragma unroll
    for (int p = 0; p < 4; p++) {
        float d[MEMRA_MVBK_GROUPS][2][4];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int j = p + 4 * r, blk = sb * 8 + j;
            unsigned int a[4], a8[4];
            memra_q4t_afrag<Q5>(s, j, a, a8);
#pragma unroll
            for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
                d[G][r][0] = d[G][r][1] = d[G][r][2] = d[G][r][3] = 0.0f;
                if (4 * G >= n) break;
                const int t = 4 * G + tk;
                uint4 bx = make_uint4(0, 0, 0, 0);
                if (t < n) bx = xsplit[(long long)t * (cols / 4) + (blk * 4 + lc) * 2 + hl];
                memra_mma_f16(d[G][r], a, bx.x, bx.y);
                memra_mma_f16(d[G][r], a8, bx.z, bx.w);
            }
        }
#pragma unroll
        for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
            if (4 * G >= n) break;
            // D's token; one past n summed zeros and is never put.
            const float* xs = xsum + (long long)min(4 * G + lc, n - 1) * (cols / 32) + sb * 8;
            memra_q4t_scale(acc[G][p], s, p, d[G][0], d[G][1], xs[p], xs[4 + p]);
        }
    }
}

// Q6_K superblock sb of a lane's tile share s for the chunk's n tokens:
// sub-blocks p, p + 4, p + 8, p + 12 are the decode quad's lane p's.
__device__ __forceinline__ void memra_q6t_bstep(memra_mvbk_acc& acc, const memra_q6t_sb& s, int sb, const uint4* xsplit, int cols, int n,
                                                int lane) {
    const int tk = lane >> 3, hl = (lane >> 2) & 1, lc = lane & 3;
    // Sub-block j's fragment of token t at xs + t * cols/2 + 8 j (matvec_q6k.cu).
    const uint2* xs = reinterpret_cast<const uint2*>(xsplit) + sb * 128 + (lc / 2) * 4 + hl * 2 + (lc & 1);
#pragma unroll
    for (int p = 0; p < 4; p++) {
        float a1[MEMRA_MVBK_GROUPS][2] = {};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const int j = 4 * k + p;
            unsigned int a[4], tp[4];
            memra_q6t_afrag(s, j, a, tp);
#pragma unroll
            for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
                if (4 * G >= n) break;
                const int t = 4 * G + tk;
                uint2 bx = make_uint2(0, 0);
                if (t < n) bx = xs[(long long)t * (cols / 2) + 8 * j];
                float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                memra_mma_f16(d, a, bx.x, bx.y);
                memra_mma_f16(d, tp, bx.x, bx.y);
                memra_q6t_scale(a1[G], s, k, p, d);
            }
        }
#pragma unroll
        for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
            if (4 * G >= n) break;
            memra_q6t_scale_put(acc[G][p], s, a1[G]);
        }
    }
}

// The end of a unit for the chunk: each token's four quad shares added as
// the decode quad's shuffles add them ((p0 + p1) + (p2 + p3)), then the KW
// warps' partials of a row in warp order, unscaled by the token's 2^-k,
// put. red: [warps][MEMRA_MVB_TOKENS][16].
template <int KW>
__device__ __forceinline__ void memra_tile_put_batch(float* y, float (*red)[MEMRA_MVB_TOKENS][16], memra_mvbk_acc& acc,
                                                     const float* unscale, int unit, int lane, int rows, int mode, int n,
                                                     int y_stride) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    const int warp = threadIdx.x >> 5, g = warp / KW, kw = warp % KW;
#pragma unroll
    for (int q = 0; q < MEMRA_MVBK_GROUPS; q++) {
        const int t = 4 * q + (lane & 3);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float v = (acc[q][0][h] + acc[q][1][h]) + (acc[q][2][h] + acc[q][3][h]);
            if (t < n) red[warp][t][(lane >> 2) + 8 * h] = v;
        }
    }
    __syncthreads();
    if (kw == 0) {
        const int row = lane & 15, r = (unit * G + g) * 16 + row;
        for (int t0 = 0; t0 < n; t0 += 2) { // two tokens a pass: lanes 0-15 and 16-31
            const int t = t0 + (lane >> 4);
            float v = 0.0f;
            if (t < n) {
                for (int k = 0; k < KW; k++) v += red[g * KW + k][t][row];
                v *= unscale[t];
            }
            const float up = __shfl_down_sync(MEMRA_FULL_MASK, v, 1);
            if (t < n && r < rows && (mode != 2 || ((row & 1) == 0 && r + 1 < rows)))
                memra_mv_put(y + (long long)t * y_stride, r, v, up, mode);
        }
    }
    __syncthreads(); // red is rewritten by the next unit
}

// The batch matvec over tiles of type T for n <= MEMRA_MVB_TOKENS tokens.
// Dynamic shared memory (kernels.MatvecBatchKernel.Shared): n copies of x'
// split (cols*4 bytes each), n of its run sums (cols/32 f32 each), then each
// warp's ring of S tile slots.
template <int KW, int S, class T>
__device__ __forceinline__ void memra_mvbt(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode, int n,
                                           int x_stride, int y_stride, const float* norm_w, int xnorm, float eps) {
    extern __shared__ uint4 memra_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][MEMRA_MVB_TOKENS][16];
    __shared__ float unscale[MEMRA_MVB_TOKENS];
    const int lane = threadIdx.x & 31;
    float* xsum = reinterpret_cast<float*>(memra_xsplit + (long long)n * (cols / 4));
    memra_mvbk_acc acc;
    memra_mvt_loop<KW, S, T>(
        W, rows, cols, reinterpret_cast<unsigned char*>(xsum + (long long)n * (cols / 32)),
        [&]() {
            for (int t = 0; t < n; t++) {
                const float u = memra_stage_x(memra_xsplit + (long long)t * (cols / 4), T::XSUM ? xsum + (long long)t * (cols / 32) : nullptr,
                                              x + (long long)t * x_stride, norm_w, cols, xnorm, eps);
                if (threadIdx.x == 0) unscale[t] = u; // read after memra_tile_put_batch's barrier
            }
        },
        [&]() {
#pragma unroll
            for (int q = 0; q < MEMRA_MVBK_GROUPS; q++)
#pragma unroll
                for (int p = 0; p < 4; p++) acc[q][p][0] = acc[q][p][1] = 0.0f;
        },
        [&](typename T::keep&, const typename T::sb& s, int i) {
            if constexpr (T::XSUM) {
                memra_q4t_bstep<T::BYTES == MEMRA_Q5T_BYTES>(acc, s, i, memra_xsplit, xsum, cols, n, lane);
            } else {
                memra_q6t_bstep(acc, s, i, memra_xsplit, cols, n, lane);
            }
        },
        [&](int unit) { memra_tile_put_batch<KW>(y, red, acc, unscale, unit, lane, rows, mode, n, y_stride); });
}

// y_t: [rows] f32 (mode 2: [rows/2]) at y + t*y_stride; W: the tiles; x_t:
// [cols] f32 at x + t*x_stride, x_stride % 4 == 0; norm_w: [cols] f32 (read
// when xnorm != 0). _wide: KW8, as the wide and wave decode kernels.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q4_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride, const float* norm_w,
                  int xnorm, float eps) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q4_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride, const float* norm_w,
                       int xnorm, float eps) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q5_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride, const float* norm_w,
                  int xnorm, float eps) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q5_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride, const float* norm_w,
                       int xnorm, float eps) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q6_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride, const float* norm_w,
                  int xnorm, float eps) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_batch_q6_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride, const float* norm_w,
                       int xnorm, float eps) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride, norm_w, xnorm, eps);
}
