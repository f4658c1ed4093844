// mmk6.cuh: Q6_K on the tensor cores (docs/perf.md step 31), an
// experiment next to the engine's kernels: measured correct but no faster
// than the engine's CUDA-core matvec_q6_k on the 9B shapes, nor, timed
// inside a decode step (norm fused, run64 and run65), on the output
// projections, so the engine does not use it.
//
// Why it looks like this: as kernels/matvec_q4k.cu, but a Q6_K value is
// d * sc_j * (q - 32) over sub-block j of 16 columns, q = low nibble + 16 *
// high 2 bits, so one mma.m16n8k16 covers exactly one sub-block of 16 rows,
// and per row y = 2^-k * d * sum_j sc_j * D_j with D_j = sum (q - 32) x'.
// The two parts of q go in as two exact f16 A operands of the same product
// (nibble - 32 from one LOP3 + one HSUB2 or HFMA2 per pair, 16 * high bits
// from one LOP3 + one HFMA2 per pair), so D_j takes two mma and no separate
// sum of x. x is staged as kernels/mma.cuh describes.
//
// Layout: engine/internal/ktile Q6K (3,360 bytes per 16 rows x 256
// columns, the same bytes per row as ggml's blocks): lane L = 4g + c holds
// columns 4c..4c+3 of each sub-block for rows g and g+8; its low nibbles of
// four sub-blocks are one 16-byte load, its high bits of eight another, its
// rows' 16 int8 scales two more. Geometry as matvec_q4k.cu.
#include "../../../kernels/common.cuh"
#include "../../../kernels/mma.cuh"

#define MEMRA_Q6T_BYTES 3360

// (w & mask) | 1024s: the masked bits as the mantissa of f16s of 1024 + bits.
__device__ __forceinline__ unsigned int memra_q6t_or1024(unsigned int w, unsigned int mask) {
    unsigned int r;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(w), "r"(mask), "r"(0x64006400u));
    return r;
}
// Nibble pairs - 32: low nibbles (1024 + n) - 1056, high nibbles (1024 + 16n) / 16 - 96.
__device__ __forceinline__ unsigned int memra_q6t_lo(unsigned int w) {
    unsigned int r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(memra_q6t_or1024(w, 0x000F000Fu)), "r"(0x64206420u));
    return r;
}
__device__ __forceinline__ unsigned int memra_q6t_hi(unsigned int w) {
    unsigned int r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(memra_q6t_or1024(w, 0x00F000F0u)), "r"(0x2C002C00u), "r"(0xD600D600u));
    return r;
}
// 16 * the 2-bit pair K of w (bits 2K and 16 + 2K): (1024 + 4^K h) * 16/4^K - 16384/4^K.
template <int K>
__device__ __forceinline__ unsigned int memra_q6t_top(unsigned int w) {
    constexpr unsigned int scale[4] = {0x4C004C00u, 0x44004400u, 0x3C003C00u, 0x34003400u}; // 16, 4, 1, 1/4
    constexpr unsigned int off[4] = {0xF400F400u, 0xEC00EC00u, 0xE400E400u, 0xDC00DC00u};   // -16384, -4096, -1024, -256
    unsigned int r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(memra_q6t_or1024(w, 0x00030003u << (2 * K))), "r"(scale[K]), "r"(off[K]));
    return r;
}

// One superblock of a lane's tile: four 16-byte loads of low nibbles (four
// sub-blocks each), two of high bits (eight each), the 16 scales of rows g
// and g+8, and their d.
struct memra_q6t_sb {
    uint4 n[4], h[2], scg, sch;
    unsigned int dd;
};

__device__ __forceinline__ memra_q6t_sb memra_q6t_load(const unsigned char* tile, int lane) {
    memra_q6t_sb s;
#pragma unroll
    for (int k = 0; k < 4; k++) s.n[k] = __ldg(reinterpret_cast<const uint4*>(tile + 512 * k) + lane);
#pragma unroll
    for (int k = 0; k < 2; k++) s.h[k] = __ldg(reinterpret_cast<const uint4*>(tile + 2048 + 512 * k) + lane);
    s.scg = __ldg(reinterpret_cast<const uint4*>(tile + 3072) + (lane >> 2));
    s.sch = __ldg(reinterpret_cast<const uint4*>(tile + 3072) + (lane >> 2) + 8);
    s.dd = __ldg(reinterpret_cast<const unsigned int*>(tile + 3328) + (lane >> 2));
    return s;
}

__device__ __forceinline__ unsigned int memra_word(uint4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// acc[h] (rows g + 8h of the tile) += superblock sb's d * sum_j sc_j * D_j.
__device__ __forceinline__ void memra_q6t_step(float acc[2], const memra_q6t_sb& s, int sb, const uint4* xsplit, int lane) {
    const int lg = lane >> 2, lc = lane & 3;
    const uint2* x2 = reinterpret_cast<const uint2*>(xsplit);
    float a1[2] = {0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const int col = sb * 256 + 16 * j; // the sub-block's first column
        uint2 bx = make_uint2(0, 0);
        if (lg < 2) bx = x2[((col / 8 + lc / 2) * 2 + lg) * 2 + (lc & 1)]; // B columns 0 (hi) and 1 (lo)
        const unsigned int nw = memra_word(s.n[j >> 2], j & 3);
        const unsigned int hw = memra_word(s.h[j >> 3], (j & 7) >> 1) >> (8 * (j & 1));
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const unsigned int a[4] = {memra_q6t_lo(nw), memra_q6t_lo(nw >> 8), memra_q6t_hi(nw), memra_q6t_hi(nw >> 8)};
        memra_mma_f16(d, a, bx.x, bx.y);
        const unsigned int t[4] = {memra_q6t_top<0>(hw), memra_q6t_top<1>(hw), memra_q6t_top<2>(hw), memra_q6t_top<3>(hw)};
        memra_mma_f16(d, t, bx.x, bx.y);
        const float scg = (float)(signed char)(memra_word(s.scg, j >> 2) >> (8 * (j & 3)));
        const float sch = (float)(signed char)(memra_word(s.sch, j >> 2) >> (8 * (j & 3)));
        a1[0] += scg * (d[0] + d[1]);
        a1[1] += sch * (d[2] + d[3]);
    }
    acc[0] += memra_f16_to_f32(memra_lo16(s.dd)) * a1[0];
    acc[1] += memra_f16_to_f32(memra_hi16(s.dd)) * a1[1];
}

// Dynamic shared memory: cols * 4 bytes of split x.
template <int KW, int U>
__device__ __forceinline__ void memra_mvq6(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                           const float* norm_w, int xnorm, float eps) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 memra_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][16];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int lg = lane >> 2, lc = lane & 3;
    const int ns = cols >> 8;
    const int units = (rows + G * 16 - 1) / (G * 16);
    memra_grid_wait();
    const float unscale = memra_stage_x(memra_xsplit, nullptr, x, norm_w, cols, xnorm, eps);
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const long long tile = min(unit * G + g, (rows + 15) / 16 - 1); // a group past the end re-reads the last tile, never stored
        const unsigned char* tp = W + tile * ns * MEMRA_Q6T_BYTES;
        float acc[2] = {0.0f, 0.0f};
        int sb = kw;
        memra_q6t_sb next[U];
        if (sb + KW * (U - 1) < ns) {
#pragma unroll
            for (int u = 0; u < U; u++) next[u] = memra_q6t_load(tp + (long long)(sb + KW * u) * MEMRA_Q6T_BYTES, lane);
        }
        for (; sb + KW * (U - 1) < ns; sb += KW * U) {
            memra_q6t_sb cur[U];
#pragma unroll
            for (int u = 0; u < U; u++) cur[u] = next[u];
            if (sb + KW * U + KW * (U - 1) < ns) {
#pragma unroll
                for (int u = 0; u < U; u++) next[u] = memra_q6t_load(tp + (long long)(sb + KW * U + KW * u) * MEMRA_Q6T_BYTES, lane);
            }
#pragma unroll
            for (int u = 0; u < U; u++) memra_q6t_step(acc, cur[u], sb + KW * u, memra_xsplit, lane);
        }
        for (; sb < ns; sb += KW) memra_q6t_step(acc, memra_q6t_load(tp + (long long)sb * MEMRA_Q6T_BYTES, lane), sb, memra_xsplit, lane);
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
        // Lanes 4g hold rows g and g+8; the KW partials of a row are added in warp order.
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
