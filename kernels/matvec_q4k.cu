// matvec_q4k.cu: y (+)= W x for Q4_K and Q5_K matrices, on the tensor cores.
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
// Q5_K is Q4_K with a fifth bit per code: its tile (MEMRA_Q5T_BYTES) is
// Q4_K's plus 512 bytes of fifth bits, a lane's 16 bytes arranged so that
// one shift puts a code word's bits under bits 4 and 8 of the halves its
// nibbles become, ORed in with one more LOP3 per pair: (1024 + q + 16b) - 1024.
//
// Geometry and the ring of tiles: mvring.cuh. A lane sums the scales of 2
// of a superblock's 8 runs rather than all 8 (memra_q4t_step, perf.md step
// 35), and the block's x staging is one pass (mma.cuh memra_stage_x, step
// 36).
#include "common.cuh"
#include "kquant.cuh"
#include "mma.cuh"
#include "mvring.cuh"

// The A pairs of one code word: low nibbles (1024 + q) - 1024, high nibbles
// (1024 + 16q) / 16 - 64 in one HFMA2. top is ORed into the halves: 1024s
// (f16 0x6400), with Q5_K's fifth bits at bit 4 (low nibbles) or bit 8
// (high nibbles) of each half (memra_q5t_top).
__device__ __forceinline__ unsigned int memra_q4t_lo(unsigned int w, unsigned int top = 0x64006400u) {
    return memra_hsub2(memra_or_bits(w, 0x000F000Fu, top), 0x64006400u);
}
__device__ __forceinline__ unsigned int memra_q4t_hi(unsigned int w, unsigned int top = 0x64006400u) {
    return memra_hfma2(memra_or_bits(w, 0x00F000F0u, top), 0x2C002C00u, 0xD400D400u);
}

// Q5_K's top for memra_q4t_lo (hi: false) or _hi (hi: true) from fifth
// bits already shifted under the code word's nibbles.
template <bool HI>
__device__ __forceinline__ unsigned int memra_q5t_top(unsigned int bits) {
    return memra_or_bits(bits, HI ? 0x01000100u : 0x00100010u, 0x64006400u);
}

// One superblock of a lane's tile: its four 16-byte code words (run pairs),
// the scale/min rows g and g+8, d, dmin of both, and (Q5_K) its fifth bits.
struct memra_q4t_sb {
    uint4 q[4], scg, sch, hb;
    uint2 dd;
};

// The lane's share of one superblock tile, read from its ring slot.
template <bool Q5>
__device__ __forceinline__ memra_q4t_sb memra_q4t_read(const unsigned char* slot, int lane) {
    memra_q4t_sb s;
#pragma unroll
    for (int k = 0; k < 4; k++) s.q[k] = reinterpret_cast<const uint4*>(slot + 512 * k)[lane];
    s.scg = reinterpret_cast<const uint4*>(slot + 2048)[lane >> 2];
    s.sch = reinterpret_cast<const uint4*>(slot + 2048)[(lane >> 2) + 8];
    s.dd = reinterpret_cast<const uint2*>(slot + 2304)[lane >> 2];
    if (Q5) s.hb = reinterpret_cast<const uint4*>(slot + MEMRA_Q4T_BYTES)[lane];
    return s;
}

// The A fragments of run j of superblock s: a for the run's first 16
// columns (the code words' low bytes), a8 for the next 16 (>> 8).
// Q5_K: code word m (0..3: run 2p row g, row g+8, run 2p+1 row g, row g+8)
// has its fifth bits at 4n + m of the pair's word, so << (4 - m) puts those
// of nibbles 0, 1, 4, 5 at bits 4, 8, 20, 24, and >> (4 + m) those of the
// word >> 8's.
template <bool Q5>
__device__ __forceinline__ void memra_q4t_afrag(const memra_q4t_sb& s, int j, unsigned int a[4], unsigned int a8[4]) {
    const unsigned int wg = (j & 1) ? s.q[j >> 1].z : s.q[j >> 1].x;
    const unsigned int wh = (j & 1) ? s.q[j >> 1].w : s.q[j >> 1].y;
    // The tops of wg, wh (tw) and of wg >> 8, wh >> 8 (tv), low nibbles then high.
    unsigned int tw[4] = {0x64006400u, 0x64006400u, 0x64006400u, 0x64006400u}, tv[4] = {tw[0], tw[1], tw[2], tw[3]};
    if (Q5) {
        const unsigned int hw = memra_word(s.hb, j >> 1);
        const int m = 2 * (j & 1); // wg's code word; wh's is m + 1
        const unsigned int ag = hw << (4 - m), ah = hw << (3 - m), bg = hw >> (4 + m), bh = hw >> (5 + m);
        tw[0] = memra_q5t_top<false>(ag), tw[1] = memra_q5t_top<false>(ah), tw[2] = memra_q5t_top<true>(ag), tw[3] = memra_q5t_top<true>(ah);
        tv[0] = memra_q5t_top<false>(bg), tv[1] = memra_q5t_top<false>(bh), tv[2] = memra_q5t_top<true>(bg), tv[3] = memra_q5t_top<true>(bh);
    }
    a[0] = memra_q4t_lo(wg, tw[0]), a[1] = memra_q4t_lo(wh, tw[1]), a[2] = memra_q4t_hi(wg, tw[2]), a[3] = memra_q4t_hi(wh, tw[3]);
    a8[0] = memra_q4t_lo(wg >> 8, tv[0]), a8[1] = memra_q4t_lo(wh >> 8, tv[1]), a8[2] = memra_q4t_hi(wg >> 8, tv[2]),
    a8[3] = memra_q4t_hi(wh >> 8, tv[3]);
}

// acc[h] (rows g + 8h) += the scales and mins of runs p and p + 4 of
// superblock s: dA, dB their D fragments (columns x' hi and lo), xA, xB
// their sums of x'. One lane's share in the decode step (p its lane in the
// quad), and each of the four a lane adds for its token in the batch step
// (matvec_batch_kq.cu): one expression, so the same bits.
__device__ __forceinline__ void memra_q4t_scale(float acc[2], const memra_q4t_sb& s, int p, const float dA[4], const float dB[4], float xA,
                                                float xB) {
    const unsigned int sw[2][4] = {{s.scg.x, s.scg.y, s.scg.z, s.scg.w}, {s.sch.x, s.sch.y, s.sch.z, s.sch.w}};
    const unsigned int dw[2] = {s.dd.x, s.dd.y};
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const float a1 = memra_u8_val(sw[h][0], p) * (dA[2 * h] + dA[2 * h + 1]) + memra_u8_val(sw[h][1], p) * (dB[2 * h] + dB[2 * h + 1]);
        const float a2 = memra_u8_val(sw[h][2], p) * xA + memra_u8_val(sw[h][3], p) * xB;
        // Contracted by hand as ptxas contracts it, so that no build of the
        // decode and batch kernels can differ (the others are fma.rn in PTX).
        acc[h] += __fmaf_rn(memra_f16_to_f32(memra_lo16(dw[h])), a1, -__fmul_rn(memra_f16_to_f32(memra_hi16(dw[h])), a2));
    }
}

// acc[h] += this lane's share of superblock sb for row g + 8h. Run j's two
// mma write B columns 2(j%4) and 2(j%4)+1 (x' hi and lo; the other columns
// of B are zero), runs 0-3 into dA and 4-7 into dB, so afterwards lane
// (g, c) holds rows g, g+8 of runs c and c+4 in its own D registers and
// does the scales and mins of those two runs only:
//   acc[h] += d * (sc_c D_c + sc_c+4 D_c+4) - dmin * (m_c X_c + m_c+4 X_c+4).
// (With B's columns 0 and 1 for every run, each lane of a quad repeated the
// scale arithmetic of all 8 runs, on zero columns in three of them.) The
// quad's four shares are added at the end of a unit (memra_tile_put).
template <bool Q5>
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
        float* d = j < 4 ? dA : dB;
        unsigned int a[4], a8[4];
        memra_q4t_afrag<Q5>(s, j, a, a8);
        memra_mma_f16(d, a, bx.x, bx.y);
        memra_mma_f16(d, a8, bx.z, bx.w);
    }
    memra_q4t_scale(acc, s, lc, dA, dB, xsum[sb * 8 + lc], xsum[sb * 8 + 4 + lc]);
}

// Q4_K's (Q5: Q5_K's) tile for memra_mvt and memra_mvbt: its bytes, a lane's share read
// from a slot, the step, and that the step needs the run sums of x.
template <bool Q5>
struct memra_k4t {
    static constexpr int BYTES = Q5 ? MEMRA_Q5T_BYTES : MEMRA_Q4T_BYTES;
    static constexpr bool XSUM = true;
    using sb = memra_q4t_sb;
    // Nothing kept across items: keeping the B fragments as Q6_K does made
    // ptxas recompute lane-derived values every item here (loops Q4_K 289
    // -> 309, Q5_K 389 -> 412 instructions; 9B Q4_K -1.1%, perf.md step 80).
    struct keep {};
    static __device__ __forceinline__ sb read(const unsigned char* slot, int lane) { return memra_q4t_read<Q5>(slot, lane); }
    static __device__ __forceinline__ void step(float acc[2], keep&, const sb& s, int i, const uint4* xsplit, const float* xsum,
                                                int lane) {
        memra_q4t_step<Q5>(acc, s, i, xsplit, xsum, lane);
    }
};
using memra_q4t = memra_k4t<false>;
using memra_q5t = memra_k4t<true>;

// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols] Q4_K tiled; x: [cols] f32;
// norm_w: [cols] f32 (read when xnorm != 0). KW4 with 3 slots: a compromise
// over the presets' shapes of more than 2,048 rows (S2 and S4 each win some;
// perf.md step 35, run78), now those of more than 4,096 (5,120 with rows
// of more than 4,096 columns); the wide kernel (KW8, 4 slots, gpu.MatvecWide)
// on the others, where its 16-row units give twice the blocks (step 45,
// run99; the 27B's 5,120-row ones, step 95). The plain kernel takes a minimum
// of one block an SM: 80 registers where ptxas chose 65 without it, three
// blocks an SM either way (shared memory holds them there), its 24576 x 4096
// node 24.26 -> 23.93 us in a graph on an H100 and 9B Q4_K +0.6% (perf.md
// step 115). The same bound on the wide and wave kernels too cost the 0.8B
// Q4_K_M 1.3-1.4% (run360), so they keep ptxas's choice.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q4_k(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 3, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvt<8, 4, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// The wide kernel with 2 slots (gpu.MatvecWave): for the 4,096- and
// 5,120-row matrices whose rows are so long (the 9B and 27B down
// projections, 12,288 and 17,408 columns) that x's
// copy and 4 slots fit one block an SM, where 2 slots fit two (perf.md step
// 74, run165). The 0.8B's 1,024-row matrices and the 9B's 4096 x 4096 keep
// the 4-slot kernel, which fits two blocks there and lost to 2 slots (step
// 73). Same sums as the wide kernel: the ring does not change their order.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k_wave(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvt<8, 2, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// As matvec_q4_k and _wide, for Q5_K tiles: Q4_K's geometry (perf.md step
// 40), except that both rings have 2 slots. The wide kernel's fits two
// blocks an SM at 12,288 columns, and with it Q5_K matrices of up to 4,096
// rows take the wide kernel too (step 73, run163: 4096 x 4096 8.45 -> 7.47
// us a node in a graph, 9B Q5_K +1.0%). The plain kernel's fits three at
// 4,096 columns where 3 slots fitted two: fewer tiles in flight an SM over
// half again as many warps (step 75, run167: 24576 x 4096 23.27 -> 22.88
// us, 9B Q5_K +5.2%; Q4_K's plain kernel, 3 blocks to 4 the same way, lost
// 7.8%). The minimum of one block per SM is there for ptxas 11.8, which
// without it held the kernels to 64 registers and spilled 20 bytes; with it
// they take 72 and none. A minimum of four gives 56 and none, and a loop of
// 489 instructions an item instead of 424: 5-8% slower (step 77). (Since
// step 79 the loop is 389 instructions and 71 registers.)
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q5_k(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 2, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q5_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvt<8, 2, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}
