// matvec_batch_kq.cu: y_t (+)= W x_t for the tokens of a prompt
// chunk, W a K-quant matrix in the tensor-core kernels' tiles (Q4_K, Q5_K,
// Q6_K, Q3_K, IQ4_XS, Q4_0, IQ4_NL), bit for bit each token's decode sums.
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
// a quarter of its codes' decoding. A pass takes up to 8 tokens, two
// groups of 4 through the same A fragments.
//
// The chunk's x'_t are staged once, by matvec_batch_kq_stage (a block a
// token, memra_stage_x: the decode kernel's block's own values, the norm
// fused or not), into global memory, where every block's lanes read their B
// fragments (through the L1); a block staging all 8 tokens' itself spent
// most of a launch on the 0.8B's shapes, and 8 copies of 12,288 columns do
// not fit in shared memory (run333). KW, and with it every sum's order, is
// the decode kernel's; the ring (memra_mvt_loop) is its, with
// MEMRA_MVBK_SLOTS slots, which only sets how far ahead the tiles are
// copied.
//
// Token t's staged copy lies at xk + t*xk_stride floats: x' split (cols
// floats: hi and lo f16 of each column, memra_stage_x's layout), the sums
// of its 32-column runs (cols/32), and 2^-k (one float).
#include "common.cuh"
#include "kquant.cuh"
#include "mma.cuh"
#include "mvring.cuh"

// A launch's token groups of 4 (B's 8 columns are 4 tokens' hi and lo).
#define MEMRA_MVBK_GROUPS 2

// The sums of a lane: acc[G][p][h] is the decode quad's lane p's share of
// row g + 8h (g = lane/4) for token 4G + lane%4.
typedef float memra_mvbk_acc[MEMRA_MVBK_GROUPS][4][2];

// A lane's view of the chunk's staged inputs (matvec_batch_kq_stage): for
// each token group G, its B fragments' base (token 4G + lane/8: lane L
// loads B column L/4, its hi or lo), the run sums of its D columns' token
// (4G + lane%4) and whether its B token is one of the chunk's. A token
// past n points at the chunk's last (token 0 at least, so that nothing
// reads before the buffer even for an n of 0, which the host refuses): its
// D columns are summed on zeros or on that token's x' and never put. Built once a kernel and
// kept in registers (memra_opaque): rebuilt from the parameters in the loop
// they cost a third more instructions an item.
struct memra_kq_in {
    const unsigned char* b[MEMRA_MVBK_GROUPS];
    const float* xs[MEMRA_MVBK_GROUPS];
    bool live[MEMRA_MVBK_GROUPS];
};

// boff: a lane's byte offset in a token's staged x' (its fragment of the
// first run or sub-block; matvec_q4k.cu, matvec_q6k.cu).
__device__ __forceinline__ memra_kq_in memra_kq_lane_in(const float* xk, int stride, int cols, int n, int lane, int boff) {
    memra_kq_in in;
#pragma unroll
    for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
        const int t = 4 * G + (lane >> 3), d = 4 * G + (lane & 3);
        in.live[G] = t < n;
        in.b[G] = reinterpret_cast<const unsigned char*>(xk + (long long)max(min(t, n - 1), 0) * stride) + boff;
        in.xs[G] = xk + (long long)max(min(d, n - 1), 0) * stride + cols;
        memra_opaque(in.b[G]);
        memra_opaque(in.xs[G]);
    }
    return in;
}

// Q4_K (Q5: Q5_K) superblock sb of a lane's tile share s for the chunk's n
// tokens. Runs p and p + 4 are the decode quad's lane p's; run j's
// fragments lie 128 bytes apart, a superblock's 1,024. Every group's
// products are made, a group past n too: a branch out of the group loop
// made each (run, group) a block of its own, across which ptxas could not
// schedule the loads and mma (loop 777 -> 660 instructions without it). Q4_K
// loads B for tokens past n as well, from the token memra_kq_lane_in
// points them at (660 -> 584); Q5_K keeps the predicate, without which its
// kernel spills (perf.md steps 102, 109).
template <bool Q5>
__device__ __forceinline__ void memra_q4t_bstep(memra_mvbk_acc& acc, const memra_q4t_sb& s, int sb, const memra_kq_in& in, int n) {
#pragma unroll
    for (int p = 0; p < 4; p++) {
        float d[MEMRA_MVBK_GROUPS][2][4];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int j = p + 4 * r;
            unsigned int a[4], a8[4];
            memra_q4t_afrag<Q5>(s, j, a, a8);
#pragma unroll
            for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
                d[G][r][0] = d[G][r][1] = d[G][r][2] = d[G][r][3] = 0.0f;
                uint4 bx = make_uint4(0, 0, 0, 0);
                if (!Q5 || in.live[G]) bx = memra_ldg16(in.b[G] + sb * 1024 + j * 128);
                memra_mma_f16(d[G][r], a, bx.x, bx.y);
                memra_mma_f16(d[G][r], a8, bx.z, bx.w);
            }
        }
#pragma unroll
        for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
            if (4 * G >= n) break;
            const float* xs = in.xs[G] + sb * 8;
            memra_q4t_scale(acc[G][p], s, p, d[G][0], d[G][1], __ldg(xs + p), __ldg(xs + 4 + p));
        }
    }
}

// Q6_K superblock sb of a lane's tile share s for the chunk's n tokens:
// sub-blocks p, p + 4, p + 8, p + 12 are the decode quad's lane p's, and
// the lane's fragments of those four lie together in Q6_K's staged layout
// (matvec_batch_kq_stage): two 16-byte loads, 256 bytes a p, 1,024 a
// superblock. (Read 8 bytes at a time from memra_stage_x's layout, as the
// decode kernel reads them from shared memory, they made 9B Q6_K priming
// 23% slower than staging in every block: run334.) B is loaded for tokens
// past n too, from the token memra_kq_lane_in points them at, as Q4_K's is
// (loop 742 -> 710); the group loops keep their break, without which these
// kernels spill under the two-block bound (perf.md step 109).
// SB: memra_q6t_sb or one of memra_nibt's (Q3_K, IQ4_XS, Q4_0, IQ4_NL); each
// takes one mma a sub-block (memra_q6t_mma).
template <class SB, class K>
__device__ __forceinline__ void memra_q6t_bstep(memra_mvbk_acc& acc, const SB& s, const K& kept, int sb, const memra_kq_in& in, int n) {
#pragma unroll
    for (int p = 0; p < 4; p++) {
        uint4 bx[MEMRA_MVBK_GROUPS][2];
#pragma unroll
        for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
            const unsigned char* b = in.b[G] + sb * 1024 + p * 256;
            bx[G][0] = memra_ldg16(b), bx[G][1] = memra_ldg16(b + 16);
        }
        float a1[MEMRA_MVBK_GROUPS][2] = {};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const auto f = memra_q6t_frags(s, 4 * k + p, kept);
#pragma unroll
            for (int G = 0; G < MEMRA_MVBK_GROUPS; G++) {
                if (4 * G >= n) break;
                const uint4 v = bx[G][k >> 1];
                const unsigned int b0 = (k & 1) ? v.z : v.x, b1 = (k & 1) ? v.w : v.y;
                float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                memra_q6t_mma(d, f, b0, b1);
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

// memra_kq_batch<T>: tile policy T's batch step (step; kept: what T keeps
// across items, memra_mvt_loop's) and a lane's byte
// offset of its first fragment in a token's staged x' (boff: Q4_K/Q5_K's 16
// bytes of run 0, columns 8 lc..8 lc+7, hi or lo; Q6_K's 32 of sub-blocks
// 0, 4, 8, 12).
template <class T>
struct memra_kq_batch;

template <bool Q5>
struct memra_kq_batch<memra_k4t<Q5>> {
    static constexpr bool full = true; // a copy for a full chunk (memra_mvbt): no spill
    static __device__ __forceinline__ int boff(int lc, int hl) { return (lc * 2 + hl) * 16; }
    static __device__ __forceinline__ void step(memra_mvbk_acc& acc, const memra_q4t_sb& s, const typename memra_k4t<Q5>::keep&, int sb,
                                                const memra_kq_in& in, int n) {
        memra_q4t_bstep<Q5>(acc, s, sb, in, n);
    }
};

template <>
struct memra_kq_batch<memra_q6t> {
    static constexpr bool full = false; // with every group's products made, it spills
    static __device__ __forceinline__ int boff(int lc, int hl) { return (lc * 2 + hl) * 32; }
    static __device__ __forceinline__ void step(memra_mvbk_acc& acc, const memra_q6t_sb& s, const memra_q6t_bfrag& kept, int sb,
                                                const memra_kq_in& in, int n) {
        memra_q6t_bstep(acc, s, kept, sb, in, n);
    }
};

// Q3_K's, IQ4_XS's, Q4_0's and IQ4_NL's inputs are staged in Q6_K's layout
// too (their sub-blocks are Q6_K's).
template <class SB, int B>
struct memra_kq_batch<memra_nibt<SB, B>> {
    static constexpr bool full = false; // as Q6_K's
    static __device__ __forceinline__ int boff(int lc, int hl) { return memra_kq_batch<memra_q6t>::boff(lc, hl); }
    static __device__ __forceinline__ void step(memra_mvbk_acc& acc, const SB& s, const typename memra_nibt<SB, B>::keep& kept, int sb,
                                                const memra_kq_in& in, int n) {
        memra_q6t_bstep(acc, s, kept, sb, in, n);
    }
};

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

// The batch matvec over tiles of type T for n <= MEMRA_MVB_TOKENS tokens (a pass)
// staged at xk (xk_stride floats apart, a multiple of 4). Dynamic shared
// memory (kernels.MatvecBatchKernel.Shared): each warp's ring of S tile
// slots.
// FULL: n == MEMRA_MVB_TOKENS, known at compile time, so that no test of n
// (Q5_K's predicate on B's loads, the groups' breaks) splits the step
// (docs/perf.md step 119: the CUDA-core batch kernels so).
template <int KW, int S, class T, bool FULL>
__device__ __forceinline__ void memra_mvbt_n(float* y, const unsigned char* W, const float* xk, int rows, int cols, int mode, int n_,
                                             int xk_stride, int y_stride) {
    const int n = FULL ? MEMRA_MVB_TOKENS : n_;
    extern __shared__ uint4 memra_rings[];
    __shared__ float red[MEMRA_MV_THREADS / 32][MEMRA_MVB_TOKENS][16];
    __shared__ float unscale[MEMRA_MVB_TOKENS];
    const int lane = threadIdx.x & 31, lc = lane & 3, hl = (lane >> 2) & 1;
    const memra_kq_in in = memra_kq_lane_in(memra_mvb_pass(xk, xk_stride), xk_stride, cols, n, lane, memra_kq_batch<T>::boff(lc, hl));
    memra_mvbk_acc acc;
    memra_mvt_loop<KW, S, T, MEMRA_RELEASE_LAST>(
        W, rows, cols, reinterpret_cast<unsigned char*>(memra_rings),
        [&]() {
            if (threadIdx.x < n) unscale[threadIdx.x] = memra_mvb_pass(xk, xk_stride)[(long long)threadIdx.x * xk_stride + cols + cols / 32];
        }, // read after memra_tile_put_batch's barrier
        [&]() {
#pragma unroll
            for (int q = 0; q < MEMRA_MVBK_GROUPS; q++)
#pragma unroll
                for (int p = 0; p < 4; p++) acc[q][p][0] = acc[q][p][1] = 0.0f;
        },
        [&](typename T::keep& kept, const typename T::sb& s, int i) { memra_kq_batch<T>::step(acc, s, kept, i, in, n); },
        [&](int unit) { memra_tile_put_batch<KW>(memra_mvb_pass(y, y_stride), red, acc, unscale, unit, lane, rows, mode, n, y_stride); },
        blockIdx.x, gridDim.x);
}

// A launch's passes as matvec_batch.cu's memra_mvb takes them: grid row
// blockIdx.y its tokens' batch, its inputs and outputs found where they
// are read and written (memra_mvb_pass), so that no pointer of the pass
// holds registers through the loop (at 128 a thread, one spilled).
template <int KW, int S, class T>
__device__ __forceinline__ void memra_mvbt(float* y, const unsigned char* W, const float* xk, int rows, int cols, int mode, int n,
                                           int xk_stride, int y_stride) {
    n = memra_mvb_pass_n(n);
    if (memra_kq_batch<T>::full && n == MEMRA_MVB_TOKENS)
        memra_mvbt_n<KW, S, T, memra_kq_batch<T>::full>(y, W, xk, rows, cols, mode, n, xk_stride, y_stride);
    else
        memra_mvbt_n<KW, S, T, false>(y, W, xk, rows, cols, mode, n, xk_stride, y_stride);
}

// xk_t = the staged x'_t of x_t (x + t*x_stride floats, 16-byte aligned) at
// xk + t*xk_stride floats: x'_t = x_t or, with xnorm, rmsnorm(x_t)*norm_w,
// split as the K-quant decode kernels' blocks split it (memra_stage_x), its
// run sums and its 2^-k. A block a token; cols % 256 == 0. With q6 the
// split goes out in Q6_K's layout: for each superblock, p (0..3) and lane
// l = 2 (lane%4) + (lane/4)%2 of a token, the 8-byte fragments of
// sub-blocks p, p + 4, p + 8, p + 12 that memra_q6t_step's lane reads,
// together (32 bytes at (4 sb + p) * 256 + 32 l); staged first in
// dynamic shared memory (cols*4 bytes).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_batch_kq_stage(float* xk, const float* x, const float* norm_w, int n, int cols, int x_stride, int xk_stride, int xnorm, float eps,
                      int q6) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    extern __shared__ uint4 memra_kq_split[];
    const int t = blockIdx.x;
    float* base = xk + (long long)t * xk_stride;
    const float* xt = x + (long long)t * x_stride;
    if (!q6) {
        const float u = memra_stage_x(reinterpret_cast<uint4*>(base), base + cols, xt, norm_w, cols, xnorm, eps);
        if (threadIdx.x == 0) base[cols + cols / 32] = u;
        return;
    }
    const float u = memra_stage_x(memra_kq_split, nullptr, xt, norm_w, cols, xnorm, eps);
    const uint2* src = reinterpret_cast<const uint2*>(memra_kq_split);
    uint2* dst = reinterpret_cast<uint2*>(base);
    for (int i = threadIdx.x; i < cols / 2; i += MEMRA_MV_THREADS) { // i: fragment k of lane l, p, superblock sb
        const int k = i & 3, l = (i >> 2) & 7, p = (i >> 5) & 3, sb = i >> 7;
        const int lc = l >> 1, hl = l & 1;
        dst[i] = src[sb * 128 + (lc / 2) * 4 + hl * 2 + (lc & 1) + 8 * (4 * k + p)]; // memra_q6t_step's xs + 8 j
    }
    if (threadIdx.x == 0) base[cols + cols / 32] = u;
}

// y_t: [rows] f32 (mode 2: [rows/2]) at y + t*y_stride; W: the tiles; x:
// the chunk's staged copies (matvec_batch_kq_stage), x_stride floats apart.
// _wide: KW8, as the wide and wave decode kernels. Two blocks an SM (at
// most 128 registers; 103-120 without the bound).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q4_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q4_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q5_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q5_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q6_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q6_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q3_k(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q3t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q3_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q3t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_iq4_xs(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_iq4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_iq4_xs_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_iq4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q4_0(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_q40t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_q4_0_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_q40t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_iq4_nl(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<4, MEMRA_MVBK_SLOTS, memra_iq4nlt>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 2)
matvec_batch_iq4_nl_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, int n, int x_stride, int y_stride) {
    memra_mvbt<8, MEMRA_MVBK_SLOTS, memra_iq4nlt>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, n, x_stride, y_stride);
}
