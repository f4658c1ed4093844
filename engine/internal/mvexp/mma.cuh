// mma.cuh: q8_0 and Q4_K matvecs on the tensor cores (docs/perf.md steps 28
// and 29), experiments next to the engine's kernels.
//
// Why: ncu (perf.md "Top kernels") found the q8_0 kernels issue-bound, 1.7 to
// 2.5 times the bf16 kernel's instructions per weight byte, most of them the
// int8 -> f32 conversion and one FFMA per quant. Here a byte pair becomes an
// exact f16 pair in two instructions (PRMT under 1024's exponent, HSUB2 of
// 1152) and mma.m16n8k16 does 16 x 16 products per instruction. x stays
// f32-accurate: every block scales x' = x * 2^k (max |x'| in [2^14, 2^15),
// f16's range) and splits it into hi = f16(x') and lo = f16(x' - hi), 22
// significant bits, B's columns 0 and 1 (the other six are zero), so
// D[r][0] + D[r][1] = sum_k q[r][k] * x'[k] to within 2^-23 sum |q x'|.
// Products of an f16 integer and an f16 are exact in the f32 accumulate.
//
// Layout: the engine's (gpu.RepackQ8_0): W int8 [rows][cols], S f16
// [rows][cols/32]. A warp takes a tile of 16 rows and one q8_0 block of 32
// columns per step: lane (g = lane/4, c = lane%4) loads 8 bytes of rows g and
// g+8 at columns 8c..8c+7, which are exactly its A slots of two k16 tiles
// (tile t: columns 8c+4t+{0,1} as k = 2c+{0,1}, 8c+4t+{2,3} as k = 2c+8+{0,1}),
// so both tiles lie in one scale block: acc += d * (D0 + D1) per step.
// B lane (n, c), n < 2, reads the 8 split values of the same columns, 16
// bytes, from the block's copy of x in shared memory.
#include "../../../kernels/common.cuh"
#include "../../../kernels/kquant.cuh"
#include <cuda_fp16.h>

// The tiled layout (TL): tile t (rows 16t..16t+15, zero rows past the end)
// times block b (columns 32b..32b+31) is MMA_TILE_BYTES at (t * cols/32 + b)
// * MMA_TILE_BYTES: lane L = 4g + c's 16 bytes (row 16t+g, then row 16t+g+8,
// columns 32b+8c..+7 each), then 8 words (d[16t+g] | d[16t+g+8] << 16), so
// a warp reads a block's quants as 512 contiguous bytes and its scales as
// one 32-byte sector.
#define MMA_TILE_BYTES 544

__device__ __forceinline__ void mma_f16(float d[4], const unsigned int a[4], unsigned int b0, unsigned int b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two signed int8 (bytes lo, lo+1 of w) as an exact f16 pair: the byte
// (flipped to q + 128) under 1024's exponent is 1024 + 128 + q.
__device__ __forceinline__ unsigned int mma_q8_pair(unsigned int w, unsigned int sel) {
    const unsigned int h = __byte_perm(w ^ 0x80808080u, 0x64646464u, sel);
    unsigned int r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(h), "r"(0x64806480u)); // 1152 = 0x6480
    return r;
}

__device__ __forceinline__ unsigned int mma_split_pair(float a, float b, bool lo) {
    __half2 h = __floats2half2_rn(a, b);
    if (lo) h = __floats2half2_rn(a - __low2float(h), b - __high2float(h));
    return *reinterpret_cast<unsigned int*>(&h);
}

// The block's prologue: x' = (xnorm ? x / rms(x) * norm_w : x) * 2^k split
// into xsplit[(col/8)*2 + n] (n = 0 hi, 1 lo; 8 halves of columns 8q..8q+7
// each); returns 2^-k.
__device__ __forceinline__ float mma_stage_x(uint4* xsplit, const float* x, const float* norm_w, int cols, int xnorm, float eps) {
    __shared__ float red[2][MEMRA_MV_THREADS / 32];
    float ss = 0.0f, mx = 0.0f;
    for (int i = threadIdx.x; i < cols; i += MEMRA_MV_THREADS) {
        const float v = x[i];
        ss += v * v;
        mx = fmaxf(mx, fabsf(xnorm ? v * norm_w[i] : v));
    }
    ss = memra_warp_sum(ss);
    mx = memra_warp_max(mx);
    if ((threadIdx.x & 31) == 0) red[0][threadIdx.x >> 5] = ss, red[1][threadIdx.x >> 5] = mx;
    __syncthreads();
    float tot = 0.0f, amax = 0.0f;
#pragma unroll
    for (int w = 0; w < MEMRA_MV_THREADS / 32; w++) tot += red[0][w], amax = fmaxf(amax, red[1][w]);
    const float inv = xnorm ? 1.0f / sqrtf(tot / (float)cols + eps) : 1.0f;
    amax *= inv; // max |x'| before the power of two (rounding aside: the 2^15 bound has room)
    int k = 0;
    if (amax > 0.0f && amax <= 3.0e38f) {
        const int ex = ((__float_as_int(amax) >> 23) & 255) - 127;
        k = min(126, max(-126, 14 - ex));
    }
    const float scale = __int_as_float((127 + k) << 23);
    for (int q = threadIdx.x; q < cols / 8 * 2; q += MEMRA_MV_THREADS) {
        const int c0 = (q >> 1) * 8;
        float v[8];
        const float4 x0 = reinterpret_cast<const float4*>(x + c0)[0], x1 = reinterpret_cast<const float4*>(x + c0)[1];
        v[0] = x0.x, v[1] = x0.y, v[2] = x0.z, v[3] = x0.w, v[4] = x1.x, v[5] = x1.y, v[6] = x1.z, v[7] = x1.w;
        if (xnorm) {
            const float4 n0 = reinterpret_cast<const float4*>(norm_w + c0)[0], n1 = reinterpret_cast<const float4*>(norm_w + c0)[1];
            const float nw[8] = {n0.x, n0.y, n0.z, n0.w, n1.x, n1.y, n1.z, n1.w};
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = v[j] * inv * nw[j];
        }
#pragma unroll
        for (int j = 0; j < 8; j++) v[j] *= scale;
        const bool lo = q & 1;
        xsplit[q] = make_uint4(mma_split_pair(v[0], v[1], lo), mma_split_pair(v[2], v[3], lo), mma_split_pair(v[4], v[5], lo),
                               mma_split_pair(v[6], v[7], lo));
    }
    __syncthreads();
    return __int_as_float((127 - k) << 23);
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
    const float unscale = mma_stage_x(mma_xsplit, x, norm_w, cols, xnorm, eps);
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
                mma_f16(d, a, bx.x, bx.y);
                a[0] = mma_q8_pair(q[t].y, 0x4140);
                a[1] = mma_q8_pair(q[t].w, 0x4140);
                a[2] = mma_q8_pair(q[t].y, 0x4342);
                a[3] = mma_q8_pair(q[t].w, 0x4342);
                mma_f16(d, a, bx.z, bx.w);
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

// ---- Q4_K ------------------------------------------------------------------
// The same products for Q4_K (w = d*sc_j*q - dmin*m_j over run j of 32
// columns, q in 0..15): per run the mma gives sum q x' (q exact in f16: a
// nibble placed under 1024's exponent), and per row
//   y += d * sum_j sc_j * D_j - dmin * sum_j m_j * X_j,   X_j = sum over run j of x'.
// Tiled layout (MMAK_TILE_BYTES per 16 rows x one 256-column superblock):
// 4 x 512 bytes of codes, run pair p: lane L = 4g + c's 16 bytes are runs 2p
// and 2p+1, each 4 bytes of row g then 4 of row g+8 (columns 8c..8c+7 of the
// run as nibbles c0|c2<<4, c4|c6<<4, c1|c3<<4, c5|c7<<4, so the masks
// 0x000F000F and 0x00F000F0 of the word and of the word >> 8 are its four A
// pairs); then 16 rows x 16 bytes (sc_0..7, m_0..7, 6-bit values unpacked);
// then 8 x 8 bytes (d, dmin of row g, d, dmin of row g+8) for g = 0..7.
#define MMAK_TILE_BYTES 2368

__device__ __forceinline__ unsigned int mmak_lop(unsigned int w, unsigned int mask) {
    unsigned int r;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(w), "r"(mask), "r"(0x64006400u)); // (w & mask) | 1024s
    return r;
}

// A pairs of one word: low nibbles (1024 + q) - 1024, high nibbles (1024 + 16 q) / 16 - 64.
__device__ __forceinline__ unsigned int mmak_lo(unsigned int w) {
    unsigned int r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(mmak_lop(w, 0x000F000Fu)), "r"(0x64006400u));
    return r;
}
__device__ __forceinline__ unsigned int mmak_hi(unsigned int w) {
    unsigned int r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(mmak_lop(w, 0x00F000F0u)), "r"(0x2C002C00u), "r"(0xD400D400u));
    return r;
}

template <int KW, int U>
__device__ __forceinline__ void mmak_q4(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                        const float* norm_w, int xnorm, float eps) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 mma_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][16];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int lg = lane >> 2, lc = lane & 3;
    const int ns = cols >> 8;
    const int units = (rows + G * 16 - 1) / (G * 16);
    float* xsum = reinterpret_cast<float*>(mma_xsplit + cols / 4); // [cols/32] sums of x' per run
    memra_grid_wait();
    const float unscale = mma_stage_x(mma_xsplit, x, norm_w, cols, xnorm, eps);
    for (int j = threadIdx.x; j < cols / 32; j += MEMRA_MV_THREADS) {
        // Σ of the run's x' as the split holds it (hi + lo), in column order.
        float sum = 0.0f;
        for (int q = 0; q < 4; q++) {
            const uint4 h = mma_xsplit[(j * 4 + q) * 2], l = mma_xsplit[(j * 4 + q) * 2 + 1];
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
        const long long tile = min(unit * G + g, (rows + 15) / 16 - 1);
        const unsigned char* tp = W + tile * ns * MMAK_TILE_BYTES;
        float acc[2] = {0.0f, 0.0f};
        auto step = [&](const uint4 (&q)[4], const uint4& scg, const uint4& sch, const uint2& dd, int sb) {
            float a1[2] = {0.0f, 0.0f}, a2[2] = {0.0f, 0.0f};
            const unsigned int sw[2][4] = {{scg.x, scg.y, scg.z, scg.w}, {sch.x, sch.y, sch.z, sch.w}};
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int blk = sb * 8 + j;
                uint4 bx = make_uint4(0, 0, 0, 0);
                if (lg < 2) bx = mma_xsplit[(blk * 4 + lc) * 2 + lg];
                const unsigned int wg = (j & 1) ? q[j >> 1].z : q[j >> 1].x;
                const unsigned int wh = (j & 1) ? q[j >> 1].w : q[j >> 1].y;
                float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                unsigned int a[4] = {mmak_lo(wg), mmak_lo(wh), mmak_hi(wg), mmak_hi(wh)};
                mma_f16(d, a, bx.x, bx.y);
                a[0] = mmak_lo(wg >> 8), a[1] = mmak_lo(wh >> 8), a[2] = mmak_hi(wg >> 8), a[3] = mmak_hi(wh >> 8);
                mma_f16(d, a, bx.z, bx.w);
                const float xj = xsum[blk];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const float sc = memra_u8_val(sw[h][j >> 2], j & 3), m = memra_u8_val(sw[h][2 + (j >> 2)], j & 3);
                    a1[h] += sc * (d[2 * h] + d[2 * h + 1]);
                    a2[h] += m * xj;
                }
            }
            const unsigned int dw[2] = {dd.x, dd.y};
#pragma unroll
            for (int h = 0; h < 2; h++)
                acc[h] += memra_f16_to_f32(memra_lo16(dw[h])) * a1[h] - memra_f16_to_f32(memra_hi16(dw[h])) * a2[h];
        };
        auto load1 = [&](int sb, uint4 (&q)[4], uint4& scg, uint4& sch, uint2& dd) {
            const unsigned char* p = tp + (long long)sb * MMAK_TILE_BYTES;
#pragma unroll
            for (int k = 0; k < 4; k++) q[k] = __ldg(reinterpret_cast<const uint4*>(p + 512 * k) + lane);
            scg = __ldg(reinterpret_cast<const uint4*>(p + 2048) + lg);
            sch = __ldg(reinterpret_cast<const uint4*>(p + 2048) + lg + 8);
            dd = __ldg(reinterpret_cast<const uint2*>(p + 2304) + lg);
        };
        int sb = kw;
        uint4 q[U][4], scg[U], sch[U];
        uint2 dd[U];
        auto load = [&](int s0) {
#pragma unroll
            for (int u = 0; u < U; u++) load1(s0 + KW * u, q[u], scg[u], sch[u], dd[u]);
        };
        if (sb + KW * (U - 1) < ns) load(sb);
        for (; sb + KW * (U - 1) < ns; sb += KW * U) {
            uint4 qc[U][4], gc[U], hc[U];
            uint2 dc[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < 4; k++) qc[u][k] = q[u][k];
                gc[u] = scg[u], hc[u] = sch[u], dc[u] = dd[u];
            }
            if (sb + KW * U + KW * (U - 1) < ns) load(sb + KW * U);
#pragma unroll
            for (int u = 0; u < U; u++) step(qc[u], gc[u], hc[u], dc[u], sb + KW * u);
        }
        for (; sb < ns; sb += KW) {
            uint4 q1[4], g1, h1;
            uint2 d1;
            load1(sb, q1, g1, h1, d1);
            step(q1, g1, h1, d1, sb);
        }
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents();
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
            if (lane < 16 && r < rows) {
                if (mode == 2) {
                    if ((lane & 1) == 0) y[r >> 1] = memra_silu(v) * up;
                } else {
                    y[r] = mode == 1 ? y[r] + v : v;
                }
            }
        }
        __syncthreads();
    }
}

// B: the blocks per SM __launch_bounds__ asks for (0: none), which caps the registers.
#define MMAK_Q4(KW, U, B)                                                                                                  \
    extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, B) mmak_q4_k##KW##_u##U##_b##B(                        \
        float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) { \
        mmak_q4<KW, U>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);              \
    }

MMAK_Q4(1, 2, 0)
MMAK_Q4(2, 2, 0)
MMAK_Q4(4, 1, 0)
MMAK_Q4(2, 1, 0)
MMAK_Q4(8, 1, 0)
MMAK_Q4(4, 2, 0)
MMAK_Q4(1, 2, 2)
MMAK_Q4(4, 2, 2)
MMAK_Q4(4, 1, 3)
MMAK_Q4(2, 2, 2)

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
