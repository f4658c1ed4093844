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
// fragments of a run pair one 16-byte word.
//
// Geometry: a warp owns a tile row (16 rows); KW warps split its
// superblocks (superblock kw, kw + KW, ...). Rows per unit: (8/KW) * 16.
// The kernel is bound by its instructions and their latency more than by
// bytes in flight (perf.md step 35: ncu issues 0.5 warps a cycle per
// scheduler at 41% of DRAM), so a lane sums the scales of 2 of a superblock's
// 8 runs rather than all 8 (memra_q4t_step), and the tiles stream through a
// ring of S slots per warp in shared memory, S - 1 ahead, across the ends of
// units, which leaves the registers to the arithmetic (56 against 99 with a
// superblock held ahead in registers); the block's x staging is one pass
// (mma.cuh memra_stage_x, step 36). The order of every sum is fixed by
// the geometry, so eager and graph runs give the same bits. W, x and norm_w
// 16-byte aligned; cols % 256 == 0.
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

// One superblock of a lane's tile: its four 16-byte code words (run pairs),
// the scale/min rows g and g+8, and d, dmin of both.
struct memra_q4t_sb {
    uint4 q[4], scg, sch;
    uint2 dd;
};

// The lane's share of one superblock tile, read from its ring slot.
__device__ __forceinline__ memra_q4t_sb memra_q4t_read(const unsigned char* slot, int lane) {
    memra_q4t_sb s;
#pragma unroll
    for (int k = 0; k < 4; k++) s.q[k] = reinterpret_cast<const uint4*>(slot + 512 * k)[lane];
    s.scg = reinterpret_cast<const uint4*>(slot + 2048)[lane >> 2];
    s.sch = reinterpret_cast<const uint4*>(slot + 2048)[(lane >> 2) + 8];
    s.dd = reinterpret_cast<const uint2*>(slot + 2304)[lane >> 2];
    return s;
}

// The lane's share of copying one tile (148 chunks of 16 bytes) into a slot
// at shared address slot; ld.global.cg, as weights are read once.
__device__ __forceinline__ void memra_q4t_copy(unsigned int slot, const unsigned char* tile, int lane) {
#pragma unroll
    for (int c = lane; c < MEMRA_Q4T_BYTES / 16; c += 32)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(slot + 16 * c), "l"(tile + 16 * c) : "memory");
}

// acc[h] += this lane's share of superblock sb for row g + 8h. Run j's two
// mma write B columns 2(j%4) and 2(j%4)+1 (x' hi and lo; the other columns
// of B are zero), runs 0-3 into dA and 4-7 into dB, so afterwards lane
// (g, c) holds rows g, g+8 of runs c and c+4 in its own D registers and
// does the scales and mins of those two runs only:
//   acc[h] += d * (sc_c D_c + sc_c+4 D_c+4) - dmin * (m_c X_c + m_c+4 X_c+4).
// (With B's columns 0 and 1 for every run, each lane of a quad repeated the
// scale arithmetic of all 8 runs, on zero columns in three of them.) The
// quad's four shares are added at the end of a unit (memra_q4t_put).
__device__ __forceinline__ void memra_q4t_step(float acc[2], const memra_q4t_sb& s, int sb, const uint4* xsplit, const float* xsum,
                                               int lane) {
    const int lg = lane >> 2, lc = lane & 3;
    const int t = lg >> 1, hl = lg & 1; // this lane's B column 2t + hl: runs j with j % 4 == t
    float dA[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dB[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int blk = sb * 8 + j; // run of 32 columns
        uint4 bx = make_uint4(0, 0, 0, 0);
        if (t == (j & 3)) bx = xsplit[(blk * 4 + lc) * 2 + hl];
        const unsigned int wg = (j & 1) ? s.q[j >> 1].z : s.q[j >> 1].x;
        const unsigned int wh = (j & 1) ? s.q[j >> 1].w : s.q[j >> 1].y;
        float* d = j < 4 ? dA : dB;
        unsigned int a[4] = {memra_q4t_lo(wg), memra_q4t_lo(wh), memra_q4t_hi(wg), memra_q4t_hi(wh)};
        memra_mma_f16(d, a, bx.x, bx.y);
        a[0] = memra_q4t_lo(wg >> 8), a[1] = memra_q4t_lo(wh >> 8), a[2] = memra_q4t_hi(wg >> 8), a[3] = memra_q4t_hi(wh >> 8);
        memra_mma_f16(d, a, bx.z, bx.w);
    }
    const float xA = xsum[sb * 8 + lc], xB = xsum[sb * 8 + 4 + lc];
    const unsigned int sw[2][4] = {{s.scg.x, s.scg.y, s.scg.z, s.scg.w}, {s.sch.x, s.sch.y, s.sch.z, s.sch.w}};
    const unsigned int dw[2] = {s.dd.x, s.dd.y};
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float a1 = memra_u8_val(sw[h][0], lc) * (dA[2 * h] + dA[2 * h + 1]) + memra_u8_val(sw[h][1], lc) * (dB[2 * h] + dB[2 * h + 1]);
        const float a2 = memra_u8_val(sw[h][2], lc) * xA + memra_u8_val(sw[h][3], lc) * xB;
        acc[h] += memra_f16_to_f32(memra_lo16(dw[h])) * a1 - memra_f16_to_f32(memra_hi16(dw[h])) * a2;
    }
}

// The end of a unit: the quad's shares of rows g and g+8 added in lane
// order, then the KW warps' partials of a row in warp order, unscaled, put.
__device__ __forceinline__ void memra_q4t_put(float* y, float (*red)[16], float acc[2], int unit, int G, int KW, int lane, int rows,
                                              int mode, float unscale) {
    const int warp = threadIdx.x >> 5, g = warp / KW, kw = warp % KW;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float s1 = acc[h] + __shfl_xor_sync(MEMRA_FULL_MASK, acc[h], 1);
        acc[h] = s1 + __shfl_xor_sync(MEMRA_FULL_MASK, s1, 2);
    }
    if ((lane & 3) == 0) red[warp][lane >> 2] = acc[0], red[warp][(lane >> 2) + 8] = acc[1];
    __syncthreads();
    if (kw == 0) {
        float v = 0.0f;
        if (lane < 16) {
            for (int k = 0; k < KW; k++) v += red[g * KW + k][lane];
            v *= unscale;
        }
        const float up = __shfl_down_sync(MEMRA_FULL_MASK, v, 1);
        const int r = (unit * G + g) * 16 + lane;
        if (lane < 16 && r < rows && (mode != 2 || ((lane & 1) == 0 && r + 1 < rows))) memra_mv_put(y, r, v, up, mode);
    }
    __syncthreads(); // red is rewritten by the next unit
}

// Dynamic shared memory (kernels.MatvecKernel.Shared): cols * 4 bytes of
// split x, cols/32 f32 run sums, then each warp's ring of S tile slots.
// A warp's items are its superblocks kw, kw + KW, ... of every unit the
// block loops over, in order; the ring holds S - 1 of them in flight,
// across the ends of units, and one commit group per item (empty past the
// last) keeps cp.async.wait_group counting items.
template <int KW, int S>
__device__ __forceinline__ void memra_mvq4(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                           const float* norm_w, int xnorm, float eps) {
    static_assert(S >= 2, "a ring needs the slot being summed and one in flight");
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 memra_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][16];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int ns = cols >> 8;
    const int units = (rows + G * 16 - 1) / (G * 16);
    const int tiles = (rows + 15) / 16;
    const int per = kw < ns ? (ns - kw + KW - 1) / KW : 0; // this warp's superblocks per unit
    float* xsum = reinterpret_cast<float*>(memra_xsplit + cols / 4);
    unsigned char* ring = reinterpret_cast<unsigned char*>(xsum + cols / 32) + (long long)warp * S * MEMRA_Q4T_BYTES;
    const unsigned int ring_s = (unsigned int)__cvta_generic_to_shared(ring);
    int pu = blockIdx.x, pj = 0, pi = 0; // the next item to copy: unit pu's pj-th superblock, item pi
    auto issue = [&]() {
        if (per > 0 && pu < units) {
            const long long tile = min(pu * G + g, tiles - 1); // a group past the end re-reads the last tile, never stored
            memra_q4t_copy(ring_s + (pi % S) * MEMRA_Q4T_BYTES, W + (tile * ns + kw + pj * KW) * MEMRA_Q4T_BYTES, lane);
            if (++pj == per) pj = 0, pu += gridDim.x;
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        pi++;
    };
    // Weights are never written: the first S - 1 items leave before the wait.
#pragma unroll
    for (int k = 0; k < S - 1; k++) issue();
    memra_grid_wait();
    const float unscale = memra_stage_x(memra_xsplit, xsum, x, norm_w, cols, xnorm, eps);
    int ci = 0; // the item being summed
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        float acc[2] = {0.0f, 0.0f};
        for (int j = 0; j < per; j++, ci++) {
            asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory"); // this lane's copies of item ci have landed
            __syncwarp(); // ... and every lane's, and item ci - 1's slot is free
            issue();
            memra_q4t_step(acc, memra_q4t_read(ring + (ci % S) * MEMRA_Q4T_BYTES, lane), kw + j * KW, memra_xsplit, xsum, lane);
        }
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
        memra_q4t_put(y, red, acc, unit, G, KW, lane, rows, mode, unscale);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols] Q4_K tiled; x: [cols] f32;
// norm_w: [cols] f32 (read when xnorm != 0). KW4 with 3 slots: a compromise
// over the presets' shapes of more than 2,048 rows (S2 and S4 each win some);
// the wide kernel (KW8, 4 slots, for matrices of few rows, gpu.MatvecWide) on
// the 0.8B preset's 1,024 x 3,584 and 1,024 x 2,048 (perf.md step 35, run78).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvq4<4, 3>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvq4<8, 4>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}
