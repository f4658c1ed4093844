// matvec_q4k.cu: y (+)= W x for Q4_K matrices, on the tensor cores.
//
// Why it looks like this: the CUDA-core kernel (matvec.cu) decodes every
// nibble to f32 and multiplies it alone, so Q4_K streamed at 0.5-1.4 TB/s,
// a third of copy bandwidth, bound by instructions rather than bytes. Here a
// nibble placed under 1024's f16 exponent is an exact f16 after one
// LOP3 + one HSUB2 (or HFMA2) per pair, and mma.m16n8k16 takes 16 rows x 16
// columns per instruction (mma.cuh: x staged as hi + lo f16, f32-accurate).
// Q4_K's value is d*sc_j*q - dmin*m_j over run j of 32 columns, so per run
// the mma gives D_j = sum q x', and per row
//   y = 2^-k (d * sum_j sc_j * D_j - dmin * sum_j m_j * X_j),  X_j = sum over run j of x'.
// With the norm fused, as a decode step runs it, 1.1-1.9x faster than the
// CUDA-core kernel on the 9B and 0.8B shapes of many rows, about even on the
// 1,024-row ones (docs/perf.md steps 29-31, run66).
//
// Layout: ggml's 144-byte blocks do not give a warp whole fragments, so the
// upload tiles them (kquant.cuh MEMRA_Q4T_BYTES, engine/internal/ktile):
// one 16-row x 256-column tile is 2,368 contiguous bytes, a lane's A
// fragments of a run pair one 16-byte load.
//
// Geometry: a warp owns a tile row (16 rows); KW warps split its
// superblocks (superblock kw, kw + KW, ...), U superblocks loaded per loop
// trip, the next trip's loads issued before this one's products (ptxas
// otherwise sinks them between the mma). Rows per unit: (8/KW) * 16. The
// order of every sum is fixed by the geometry, so eager and graph runs give
// the same bits. W, x and norm_w 16-byte aligned; cols % 256 == 0.
#include "common.cuh"
#include "kquant.cuh"
#include "mma.cuh"

// The A pairs of one code word: low nibbles (1024 + q) - 1024, high nibbles
// (1024 + 16q) / 16 - 64 in one HFMA2.
__device__ __forceinline__ unsigned int memra_q4t_or1024(unsigned int w, unsigned int mask) {
    unsigned int r;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(w), "r"(mask), "r"(0x64006400u)); // (w & mask) | 1024s
    return r;
}
__device__ __forceinline__ unsigned int memra_q4t_lo(unsigned int w) {
    unsigned int r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(memra_q4t_or1024(w, 0x000F000Fu)), "r"(0x64006400u));
    return r;
}
__device__ __forceinline__ unsigned int memra_q4t_hi(unsigned int w) {
    unsigned int r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(memra_q4t_or1024(w, 0x00F000F0u)), "r"(0x2C002C00u), "r"(0xD400D400u));
    return r;
}

// One superblock of a lane's tile: its four 16-byte code loads (run pairs),
// the scale/min rows g and g+8, and d, dmin of both.
struct memra_q4t_sb {
    uint4 q[4], scg, sch;
    uint2 dd;
};

__device__ __forceinline__ memra_q4t_sb memra_q4t_load(const unsigned char* tile, int lane) {
    memra_q4t_sb s;
#pragma unroll
    for (int k = 0; k < 4; k++) s.q[k] = __ldg(reinterpret_cast<const uint4*>(tile + 512 * k) + lane);
    s.scg = __ldg(reinterpret_cast<const uint4*>(tile + 2048) + (lane >> 2));
    s.sch = __ldg(reinterpret_cast<const uint4*>(tile + 2048) + (lane >> 2) + 8);
    s.dd = __ldg(reinterpret_cast<const uint2*>(tile + 2304) + (lane >> 2));
    return s;
}

// acc[h] (rows g + 8h of the tile) += superblock sb's d * sum sc_j D_j - dmin * sum m_j X_j.
__device__ __forceinline__ void memra_q4t_step(float acc[2], const memra_q4t_sb& s, int sb, const uint4* xsplit, const float* xsum,
                                               int lane) {
    const int lg = lane >> 2, lc = lane & 3;
    float a1[2] = {0.0f, 0.0f}, a2[2] = {0.0f, 0.0f};
    const unsigned int sw[2][4] = {{s.scg.x, s.scg.y, s.scg.z, s.scg.w}, {s.sch.x, s.sch.y, s.sch.z, s.sch.w}};
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int blk = sb * 8 + j; // run of 32 columns
        uint4 bx = make_uint4(0, 0, 0, 0);
        if (lg < 2) bx = xsplit[(blk * 4 + lc) * 2 + lg]; // B columns 0 (hi) and 1 (lo)
        const unsigned int wg = (j & 1) ? s.q[j >> 1].z : s.q[j >> 1].x;
        const unsigned int wh = (j & 1) ? s.q[j >> 1].w : s.q[j >> 1].y;
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        unsigned int a[4] = {memra_q4t_lo(wg), memra_q4t_lo(wh), memra_q4t_hi(wg), memra_q4t_hi(wh)};
        memra_mma_f16(d, a, bx.x, bx.y);
        a[0] = memra_q4t_lo(wg >> 8), a[1] = memra_q4t_lo(wh >> 8), a[2] = memra_q4t_hi(wg >> 8), a[3] = memra_q4t_hi(wh >> 8);
        memra_mma_f16(d, a, bx.z, bx.w);
        const float xj = xsum[blk];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float sc = memra_u8_val(sw[h][j >> 2], j & 3), m = memra_u8_val(sw[h][2 + (j >> 2)], j & 3);
            a1[h] += sc * (d[2 * h] + d[2 * h + 1]);
            a2[h] += m * xj;
        }
    }
    const unsigned int dw[2] = {s.dd.x, s.dd.y};
#pragma unroll
    for (int h = 0; h < 2; h++) acc[h] += memra_f16_to_f32(memra_lo16(dw[h])) * a1[h] - memra_f16_to_f32(memra_hi16(dw[h])) * a2[h];
}

// Dynamic shared memory: cols * 4 bytes of split x, then cols/32 f32 run sums
// (kernels.MatvecKernel.Shared).
template <int KW, int U>
__device__ __forceinline__ void memra_mvq4(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                           const float* norm_w, int xnorm, float eps) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 memra_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][16];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int lg = lane >> 2, lc = lane & 3;
    const int ns = cols >> 8;
    const int units = (rows + G * 16 - 1) / (G * 16);
    float* xsum = reinterpret_cast<float*>(memra_xsplit + cols / 4);
    memra_grid_wait();
    const float unscale = memra_stage_x(memra_xsplit, x, norm_w, cols, xnorm, eps);
    for (int j = threadIdx.x; j < cols / 32; j += MEMRA_MV_THREADS) {
        // X_j as the mma sees x' (hi + lo), in column order.
        float sum = 0.0f;
        for (int q = 0; q < 4; q++) {
            const uint4 h = memra_xsplit[(j * 4 + q) * 2], l = memra_xsplit[(j * 4 + q) * 2 + 1];
            const unsigned int hw[4] = {h.x, h.y, h.z, h.w}, lw[4] = {l.x, l.y, l.z, l.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const __half2 hh = *reinterpret_cast<const __half2*>(&hw[k]), ll = *reinterpret_cast<const __half2*>(&lw[k]);
                sum += __low2float(hh) + __low2float(ll);
                sum += __high2float(hh) + __high2float(ll);
            }
        }
        xsum[j] = sum;
    }
    __syncthreads();
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const long long tile = min(unit * G + g, (rows + 15) / 16 - 1); // a group past the end re-reads the last tile, never stored
        const unsigned char* tp = W + tile * ns * MEMRA_Q4T_BYTES;
        float acc[2] = {0.0f, 0.0f};
        int sb = kw;
        memra_q4t_sb next[U];
        if (sb + KW * (U - 1) < ns) {
#pragma unroll
            for (int u = 0; u < U; u++) next[u] = memra_q4t_load(tp + (long long)(sb + KW * u) * MEMRA_Q4T_BYTES, lane);
        }
        for (; sb + KW * (U - 1) < ns; sb += KW * U) {
            memra_q4t_sb cur[U];
#pragma unroll
            for (int u = 0; u < U; u++) cur[u] = next[u];
            if (sb + KW * U + KW * (U - 1) < ns) {
#pragma unroll
                for (int u = 0; u < U; u++) next[u] = memra_q4t_load(tp + (long long)(sb + KW * U + KW * u) * MEMRA_Q4T_BYTES, lane);
            }
#pragma unroll
            for (int u = 0; u < U; u++) memra_q4t_step(acc, cur[u], sb + KW * u, memra_xsplit, xsum, lane);
        }
        for (; sb < ns; sb += KW) memra_q4t_step(acc, memra_q4t_load(tp + (long long)sb * MEMRA_Q4T_BYTES, lane), sb, memra_xsplit, xsum, lane);
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
        // Lanes 4g hold rows g and g+8 (the mma's column 0 + 1 sums, the
        // other lanes of the quad hold B's zero columns); the KW partials of
        // a row are added in warp order.
        if (lc == 0) red[warp][lg] = acc[0], red[warp][lg + 8] = acc[1];
        __syncthreads();
        if (kw == 0) {
            float v = 0.0f;
            if (lane < 16) {
#pragma unroll
                for (int k = 0; k < KW; k++) v += red[g * KW + k][lane];
                v *= unscale;
            }
            const float up = __shfl_down_sync(MEMRA_FULL_MASK, v, 1);
            const int r = (unit * G + g) * 16 + lane;
            if (lane < 16 && r < rows && (mode != 2 || ((lane & 1) == 0 && r + 1 < rows))) memra_mv_put(y, r, v, up, mode);
        }
        __syncthreads(); // red is rewritten by the next unit
    }
}

// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols] Q4_K tiled; x: [cols] f32;
// norm_w: [cols] f32 (read when xnorm != 0). KW4: the best single geometry
// on every 4,096-column shape; the wide kernel (KW8, for matrices of few
// rows, gpu.MatvecWide) on the 0.8B preset's 1,024 x 3,584 (perf.md step 29).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvq4<4, 1>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvq4<8, 1>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}
