// mma.cuh: the q8_0 matvec on the tensor cores (docs/perf.md step 28) and
// other geometries of the engine's Q4_K and Q6_K ones (steps 29 and 39,
// kernels/matvec_q4k.cu, matvec_q6k.cu), experiments next to the engine's
// kernels.
//
// Why: ncu (perf.md "Top kernels") found the q8_0 kernels issue-bound, 1.7 to
// 2.5 times the bf16 kernel's instructions per weight byte, most of them the
// int8 -> f32 conversion and one FFMA per quant. Here a byte pair becomes an
// exact f16 pair in two instructions (PRMT under 1024's exponent, HSUB2 of
// 1152) and mma.m16n8k16 does 16 x 16 products per instruction, x staged as
// kernels/mma.cuh describes (hi + lo f16, f32-accurate).
//
// Layout: the engine's (engine/gpu upload.go): W int8 [rows][cols], S f16
// [rows][cols/32]. A warp takes a tile of 16 rows and one q8_0 block of 32
// columns per step: lane (g = lane/4, c = lane%4) loads 8 bytes of rows g and
// g+8 at columns 8c..8c+7, which are exactly its A slots of two k16 tiles
// (tile t: columns 8c+4t+{0,1} as k = 2c+{0,1}, 8c+4t+{2,3} as k = 2c+8+{0,1}),
// so both tiles lie in one scale block: acc += d * (D0 + D1) per step.
// B lane (n, c), n < 2, reads the 8 split values of the same columns, 16
// bytes, from the block's copy of x in shared memory.
#include "../../../kernels/common.cuh"
#include "../../../kernels/kquant.cuh"
#include "../../../kernels/mma.cuh"
#include "mmk6.cuh"

// The tiled layout (TL): tile t (rows 16t..16t+15, zero rows past the end)
// times block b (columns 32b..32b+31) is MMA_TILE_BYTES at (t * cols/32 + b)
// * MMA_TILE_BYTES: lane L = 4g + c's 16 bytes (row 16t+g, then row 16t+g+8,
// columns 32b+8c..+7 each), then 8 words (d[16t+g] | d[16t+g+8] << 16), so
// a warp reads a block's quants as 512 contiguous bytes and its scales as
// one 32-byte sector.
#define MMA_TILE_BYTES 544

// Two signed int8 (bytes lo, lo+1 of w) as an exact f16 pair: the byte
// (flipped to q + 128) under 1024's exponent is 1024 + 128 + q.
__device__ __forceinline__ unsigned int mma_q8_pair(unsigned int w, unsigned int sel) {
    const unsigned int h = __byte_perm(w ^ 0x80808080u, 0x64646464u, sel);
    unsigned int r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(h), "r"(0x64806480u)); // 1152 = 0x6480
    return r;
}

// T tiles of 16 rows per row group, KW warps split a group's 32-column
// blocks, U blocks per loop trip. Rows per unit: (8/KW) * T * 16.
//
// TL: W is the tiled stream of MMA_TILE_BYTES's comment (S unused) instead of the
// engine's layout. Either way a lane's share of one (tile, block) is held as
// q: rows g (.x, .y) and g+8 (.z, .w), 8 quants each; d: their f16 scales
// (row g low, g+8 high).
template <int T, int KW, int U, bool TL>
__device__ __forceinline__ void mma_q8(float* y, const signed char* W, const unsigned short* S, const float* x, int rows,
                                       int cols, int mode, const float* norm_w, int xnorm, float eps) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 mma_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][T * 16];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int lg = lane >> 2, lc = lane & 3;
    const int nb = cols >> 5;
    const int units = (rows + G * T * 16 - 1) / (G * T * 16);
    memra_grid_wait();
    const float unscale = memra_stage_x(mma_xsplit, nullptr, x, norm_w, cols, xnorm, eps);
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const int r0 = (unit * G + g) * T * 16;
        const signed char* wr[T][2];
        const unsigned short* sr[T][2];
#pragma unroll
        for (int t = 0; t < T; t++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                if (TL) { // tile (r0/16 + t), clamped to the last (padded) tile
                    const long long tile = min(r0 / 16 + t, (rows + 15) / 16 - 1);
                    wr[t][h] = W + tile * nb * MMA_TILE_BYTES + 16 * lane;
                    sr[t][h] = reinterpret_cast<const unsigned short*>(W + tile * nb * MMA_TILE_BYTES + 512 + 4 * lg);
                } else {
                    const long long r = min(r0 + t * 16 + lg + 8 * h, rows - 1);
                    wr[t][h] = W + r * cols + 8 * lc;
                    sr[t][h] = S + r * nb;
                }
            }
        float acc[T][2];
#pragma unroll
        for (int t = 0; t < T; t++) acc[t][0] = acc[t][1] = 0.0f;
        int b = kw;
        auto step = [&](const uint4 (&q)[T], const unsigned int (&sd)[T], int bb) {
            uint4 bx = make_uint4(0, 0, 0, 0);
            if (lg < 2) bx = mma_xsplit[(bb * 4 + lc) * 2 + lg];
#pragma unroll
            for (int t = 0; t < T; t++) {
                float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                unsigned int a[4];
                a[0] = mma_q8_pair(q[t].x, 0x4140);
                a[1] = mma_q8_pair(q[t].z, 0x4140);
                a[2] = mma_q8_pair(q[t].x, 0x4342);
                a[3] = mma_q8_pair(q[t].z, 0x4342);
                memra_mma_f16(d, a, bx.x, bx.y);
                a[0] = mma_q8_pair(q[t].y, 0x4140);
                a[1] = mma_q8_pair(q[t].w, 0x4140);
                a[2] = mma_q8_pair(q[t].y, 0x4342);
                a[3] = mma_q8_pair(q[t].w, 0x4342);
                memra_mma_f16(d, a, bx.z, bx.w);
                acc[t][0] += memra_f16_to_f32(memra_lo16(sd[t])) * (d[0] + d[1]);
                acc[t][1] += memra_f16_to_f32(memra_hi16(sd[t])) * (d[2] + d[3]);
            }
        };
        auto load1 = [&](int t, int bb, uint4& q, unsigned int& sd) {
            if (TL) {
                q = __ldg(reinterpret_cast<const uint4*>(wr[t][0] + (long long)bb * MMA_TILE_BYTES));
                sd = __ldg(reinterpret_cast<const unsigned int*>(sr[t][0] + (long long)bb * (MMA_TILE_BYTES / 2)));
            } else {
                const uint2 lo = __ldg(reinterpret_cast<const uint2*>(wr[t][0] + 32 * bb));
                const uint2 hi = __ldg(reinterpret_cast<const uint2*>(wr[t][1] + 32 * bb));
                q = make_uint4(lo.x, lo.y, hi.x, hi.y);
                sd = (unsigned int)__ldg(sr[t][0] + bb) | (unsigned int)__ldg(sr[t][1] + bb) << 16;
            }
        };
        // Software-pipelined: the next trip's U blocks are loaded before
        // this trip's are used (ptxas otherwise spreads the loads between
        // the mma and keeps only a few in flight).
        uint4 q[U][T];
        unsigned int sd[U][T];
        auto load = [&](int bb) {
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int t = 0; t < T; t++) load1(t, bb + KW * u, q[u][t], sd[u][t]);
        };
        if (b + KW * (U - 1) < nb) load(b);
        for (; b + KW * (U - 1) < nb; b += KW * U) {
            uint4 qc[U][T];
            unsigned int sc[U][T];
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int t = 0; t < T; t++) qc[u][t] = q[u][t], sc[u][t] = sd[u][t];
            if (b + KW * U + KW * (U - 1) < nb) load(b + KW * U);
#pragma unroll
            for (int u = 0; u < U; u++) step(qc[u], sc[u], b + KW * u);
        }
        for (; b < nb; b += KW) {
            uint4 q1[T];
            unsigned int s1[T];
#pragma unroll
            for (int t = 0; t < T; t++) load1(t, b, q1[t], s1[t]);
            step(q1, s1, b);
        }
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents();
        // Lane (g, 0) holds rows g and g+8 of each tile; the KW partials
        // are added in warp order by warp kw == 0, lane j taking row j.
        if (lc == 0) {
#pragma unroll
            for (int t = 0; t < T; t++) red[warp][t * 16 + lg] = acc[t][0], red[warp][t * 16 + lg + 8] = acc[t][1];
        }
        __syncthreads();
        if (kw == 0) {
#pragma unroll
            for (int t = 0; t < T; t++) {
                float v = 0.0f;
                if (lane < 16) {
#pragma unroll
                    for (int k = 0; k < KW; k++) v += red[g * KW + k][t * 16 + lane];
                    v *= unscale;
                }
                const float up = __shfl_down_sync(MEMRA_FULL_MASK, v, 1);
                const int r = r0 + t * 16 + lane;
                if (lane < 16 && r < rows) {
                    if (mode == 2) {
                        if ((lane & 1) == 0) y[r >> 1] = memra_silu(v) * up;
                    } else {
                        y[r] = mode == 1 ? y[r] + v : v;
                    }
                }
            }
        }
        __syncthreads(); // red is rewritten by the next unit
    }
}

// ---- q8_0 through the K-quants' ring (session 13) --------------------------
// Step 28's tiles (TL above) run through memra_mvt (kernels/mvring.cuh) as
// the K-quants do: eight 16 x 32 tiles, contiguous in tileQ8's order, are one
// 16-row x 256-column ring item, and block j's two mma write B columns
// 2(j%4)+{0,1} so lane (g, c) keeps blocks c and c+4 of its rows and
// multiplies 4 scales instead of step 28's 16 (steps 35, 39). The question:
// does the ring, which carries loads across units without registers, take
// the per-unit ramp out of the q8_0 kernels on few rows (perf.md: 9B's wide
// q8_0 kernel at 2.0 TB/s)?
struct mma_q8r_sb {
    uint4 q[8];
    unsigned int d[2]; // blocks c and c+4: d of row g | row g+8 << 16
};

struct mma_q8r {
    static constexpr int BYTES = 8 * MMA_TILE_BYTES;
    static constexpr bool XSUM = false;
    using sb = mma_q8r_sb;
    struct keep {}; // nothing kept across items (memra_mvt_loop's T::keep)
    static __device__ __forceinline__ sb read(const unsigned char* slot, int lane) {
        sb s;
#pragma unroll
        for (int j = 0; j < 8; j++) s.q[j] = reinterpret_cast<const uint4*>(slot + j * MMA_TILE_BYTES)[lane];
        const int g = lane >> 2, c = lane & 3;
        s.d[0] = *reinterpret_cast<const unsigned int*>(slot + c * MMA_TILE_BYTES + 512 + 4 * g);
        s.d[1] = *reinterpret_cast<const unsigned int*>(slot + (c + 4) * MMA_TILE_BYTES + 512 + 4 * g);
        return s;
    }
    static __device__ __forceinline__ void step(float acc[2], keep&, const sb& s, int sbi, const uint4* xsplit, const float*, int lane) {
        const int lg = lane >> 2, lc = lane & 3;
        const int t = lg >> 1, hl = lg & 1; // this lane's B column 2t + hl: blocks j with j % 4 == t
        float dA[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dB[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < 8; j++) {
            uint4 bx = make_uint4(0, 0, 0, 0);
            if (t == (j & 3)) bx = xsplit[((sbi * 8 + j) * 4 + lc) * 2 + hl];
            float* d = j < 4 ? dA : dB;
            const uint4 q = s.q[j];
            unsigned int a[4] = {mma_q8_pair(q.x, 0x4140), mma_q8_pair(q.z, 0x4140), mma_q8_pair(q.x, 0x4342), mma_q8_pair(q.z, 0x4342)};
            memra_mma_f16(d, a, bx.x, bx.y);
            a[0] = mma_q8_pair(q.y, 0x4140), a[1] = mma_q8_pair(q.w, 0x4140), a[2] = mma_q8_pair(q.y, 0x4342), a[3] = mma_q8_pair(q.w, 0x4342);
            memra_mma_f16(d, a, bx.z, bx.w);
        }
        acc[0] += memra_f16_to_f32(memra_lo16(s.d[0])) * (dA[0] + dA[1]) + memra_f16_to_f32(memra_lo16(s.d[1])) * (dB[0] + dB[1]);
        acc[1] += memra_f16_to_f32(memra_hi16(s.d[0])) * (dA[2] + dA[3]) + memra_f16_to_f32(memra_hi16(s.d[1])) * (dB[2] + dB[3]);
    }
};

// ---- Q4_K, Q6_K ------------------------------------------------------------
// Step 29's kernel is the engine's (kernels/matvec_q4k.cu, landed in step 30,
// reshaped in steps 35 and 36), as is step 39's Q6_K one (matvec_q6k.cu);
// these instantiate their ring template (mvring.cuh memra_mvt) at other
// geometries. One tensor-core K-quant kernel NAME_k<KW>_<P><A>_b<B> with the
// engine's parameters, calling the template given last (variadic, as its
// arguments hold commas) at KW and A (memra_mvt: A = S ring slots, P = s;
// mmk6.cuh's memra_mvq6: A = U superblocks per trip, P = u). B: the blocks
// per SM __launch_bounds__ asks for (0: none), which caps the registers.
#define MMA_KQ(NAME, KW, P, A, B, ...)                                                                                     \
    extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, B) NAME##_k##KW##_##P##A##_b##B(                        \
        float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) { \
        __VA_ARGS__(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);                 \
    }
#define MMAK_Q4(KW, S, B) MMA_KQ(mmak_q4, KW, s, S, B, memra_mvt<KW, S, memra_q4t>)
#define MMAQ8R(KW, S, B) MMA_KQ(mmaq8r, KW, s, S, B, memra_mvt<KW, S, mma_q8r>)

MMAQ8R(4, 2, 0)
MMAQ8R(4, 3, 0)
MMAQ8R(8, 2, 0)
MMAQ8R(8, 3, 0)
MMAQ8R(2, 2, 0)
MMAQ8R(2, 3, 0)
MMAQ8R(1, 2, 0)
MMAQ8R(1, 3, 0)

MMAK_Q4(4, 2, 0)
MMAK_Q4(4, 3, 0)
MMAK_Q4(4, 4, 0)
MMAK_Q4(8, 3, 0)
MMAK_Q4(8, 4, 0)
MMAK_Q4(2, 2, 0)
MMAK_Q4(2, 4, 0)
MMAK_Q4(1, 2, 0)
MMAK_Q4(1, 4, 0)

#define MMAK_Q6(KW, S, B) MMA_KQ(mmak_q6, KW, s, S, B, memra_mvt<KW, S, memra_q6t>)

MMAK_Q6(4, 2, 0)
MMAK_Q6(4, 3, 0)
MMAK_Q6(4, 4, 0)
MMAK_Q6(8, 2, 0)
MMAK_Q6(8, 3, 0)
MMAK_Q6(8, 4, 0)
MMAK_Q6(2, 2, 0)
MMAK_Q6(2, 3, 0)

// Step 31's Q6_K form (mmk6.cuh) at several geometries.
#define MMK6(KW, U, B) MMA_KQ(mmk6_q6, KW, u, U, B, memra_mvq6<KW, U>)

MMK6(4, 1, 0)
MMK6(8, 1, 0)
MMK6(2, 1, 0)
MMK6(1, 2, 0)
MMK6(4, 2, 0)
MMK6(4, 1, 3)

#define MMA_Q8(T, KW, U, TL)                                                                                               \
    extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS) mma_q8_t##T##_k##KW##_u##U##_l##TL(                  \
        float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, const float* norm_w, \
        int xnorm, float eps) {                                                                                           \
        mma_q8<T, KW, U, TL>(y, reinterpret_cast<const signed char*>(W), S, x, rows, cols, mode, norm_w, xnorm, eps);     \
    }

MMA_Q8(1, 8, 4, 0)
MMA_Q8(1, 8, 4, 1)
MMA_Q8(1, 4, 4, 0)
MMA_Q8(1, 4, 4, 1)
MMA_Q8(2, 4, 2, 1)
MMA_Q8(1, 2, 4, 0)
MMA_Q8(1, 2, 4, 1)
MMA_Q8(2, 2, 2, 1)
MMA_Q8(1, 8, 2, 1)
MMA_Q8(2, 8, 2, 1)
MMA_Q8(1, 4, 2, 1)
