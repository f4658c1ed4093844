// matvec_q6k.cu: y (+)= W x for Q6_K matrices, and Q3_K, IQ4_XS, Q4_0 and
// IQ4_NL ones, on the tensor cores.
//
// Why it looks like this: as matvec_q4k.cu. A Q6_K value is
// d * sc_j * (q - 32) over sub-block j of 16 columns, q = low nibble + 16 *
// high 2 bits, so one mma.m16n8k16 covers exactly one sub-block of 16 rows,
// and per row y = 2^-k * d * sum_j sc_j * D_j with D_j = sum (q - 32) x'.
// q - 32 goes in as one exact f16 A operand, built per pair of values from
// its two parts (a LOP3 each, then an HFMA2 that scales the high bits and
// an HADD2 or HFMA2 that adds the nibble), so D_j takes one mma and no sum
// of x (until perf.md step 108 the parts were two operands and two mma).
// Step 31's form (every lane of a quad multiplying all 16 scales) was no
// faster than the CUDA-core kernel; with the scales spread over the quad
// (~518 SASS instructions a tile against ~730) and the tiles through the
// ring of mvring.cuh it is 1.1-1.8x faster than the CUDA-core kernel on the
// presets' shapes with the fused norm, but ~10% slower on the 9B down
// projection, 4096 x 12288 (perf.md step 39, run86, run87).
//
// Layout: engine/internal/ktile Q6K (kquant.cuh MEMRA_Q6T_BYTES: 3,360
// bytes per 16 rows x 256 columns, ggml's bytes per row): lane L = 4g + c
// holds columns 4c..4c+3 of each sub-block for rows g and g+8; its low
// nibbles of four sub-blocks are one 16-byte word, its high bits of eight
// another, its rows' 16 int8 scales two more.
//
// Q3_K (memra_q3t, ktile Q3K: 2,336 bytes) has Q6_K's sub-blocks with codes
// -4..3: its tile is the low-nibble plane (q + 8), the scales and d, and a
// sub-block takes one mma of the codes less 8. The steps are Q6_K's,
// templated on the superblock (memra_q6t_frags, memra_q6t_mma). IQ4_XS
// (memra_iq4t, ktile IQ4XS) has Q3_K's tile with codes that stand for
// codebook values, looked up by byte permutes (memra_iq4_lut) in two words
// of the codebook the kept state holds (memra_iq4_keep). Q4_0 and IQ4_NL
// (memra_q40t, memra_iq4nlt: 2,304 bytes) are the same planes of codes with
// an f16 d a 32-column block in place of the scales and the row's d.
#include "common.cuh"
#include "kquant.cuh"
#include "mma.cuh"
#include "mvring.cuh"

// Nibble pairs - Z (Q3_K's and Q4_0's Z = 8; 32 in engine/internal/mvexp's
// record of step 31's Q6_K form): low nibbles (1024 + n) -
// (1024 + Z), high nibbles (1024 + 16n) / 16 - (64 + Z). An f16 at 1024 (at
// 64) steps by 1 (by 1/16), so 1024 + Z is 0x6400 + Z and -(64 + Z) is
// 0xD400 + 16Z, for Z < 64.
template <unsigned int Z>
__device__ __forceinline__ unsigned int memra_nib_lo(unsigned int w) {
    static_assert(Z < 64, "Z past f16's unit step at 64");
    return memra_hsub2(memra_or1024(w, 0x000F000Fu), (0x6400u + Z) * 0x10001u);
}
template <unsigned int Z>
__device__ __forceinline__ unsigned int memra_nib_hi(unsigned int w) {
    return memra_hfma2(memra_or1024(w, 0x00F000F0u), 0x2C002C00u, (0xD400u + 16u * Z) * 0x10001u);
}

// The A fragment of a sub-block's nibble word nw, its nibbles less Z:
// columns 4c, 4c+1 of row g, of row g+8, then 4c+2, 4c+3 (ktile Q6K).
template <unsigned int Z>
__device__ __forceinline__ void memra_nib_afrag(unsigned int nw, unsigned int a[4]) {
    a[0] = memra_nib_lo<Z>(nw), a[1] = memra_nib_lo<Z>(nw >> 8), a[2] = memra_nib_hi<Z>(nw), a[3] = memra_nib_hi<Z>(nw >> 8);
}

// Pair K of a Q6_K A fragment, q - 32 = n + 16h - 32 for the nibble pair
// under mask in nw and the 2-bit pair K of hw (bits 2K and 16 + 2K):
// t = (1024 + 4^K h) * 16/4^K - 16384/4^K + c = 16h + c, then for the low
// nibbles (K 0, 1) (1024 + n) + t with c = -1056, for the high ones (K 2,
// 3) (1024 + 16n) / 16 + t with c = -96. Every step is exact in f16 (t in
// -1056..-1008 or -96..-48; each fma rounds once), so the operand is the
// same q - 32 the two-operand form summed.
template <int K>
__device__ __forceinline__ unsigned int memra_q6t_pair(unsigned int nw, unsigned int hw) {
    constexpr unsigned int scale[4] = {0x4C004C00u, 0x44004400u, 0x3C003C00u, 0x34003400u}; // 16, 4, 1, 1/4
    constexpr unsigned int off[4] = {0xF442F442u, 0xED08ED08u, 0xE460E460u, 0xDD80DD80u};   // -17440, -5152, -1120, -352
    const unsigned int t = memra_hfma2(memra_or1024(hw, 0x00030003u << (2 * K)), scale[K], off[K]);
    if constexpr (K < 2) {
        return memra_hadd2(memra_or1024(nw, 0x000F000Fu), t);
    } else {
        return memra_hfma2(memra_or1024(nw, 0x00F000F0u), 0x2C002C00u, t); // 1/16
    }
}

// One superblock of a lane's tile: four 16-byte words of low nibbles (four
// sub-blocks each), two of high bits (eight each), the 16 scales of rows g
// and g+8, and their d. F16D: whether the scales are f16 block scales
// rather than int8 ones under a row's d (memra_q6t_scale); LUT: whether the
// codes stand for codebook values (memra_q6t_frags).
struct memra_q6t_sb {
    static constexpr bool F16D = false, LUT = false;
    uint4 n[4], h[2], scg, sch;
    unsigned int dd;
};

// The A fragment of sub-block j of superblock s: its codes q - 32, in
// memra_nib_afrag's order (low nibbles of nw, of nw >> 8, then the high
// ones), each with its high bits.
__device__ __forceinline__ void memra_q6t_afrag(const memra_q6t_sb& s, int j, unsigned int a[4]) {
    const unsigned int nw = memra_word(s.n[j >> 2], j & 3);
    const unsigned int hw = memra_word(s.h[j >> 3], (j & 7) >> 1) >> (8 * (j & 1));
    a[0] = memra_q6t_pair<0>(nw, hw), a[1] = memra_q6t_pair<1>(nw >> 8, hw);
    a[2] = memra_q6t_pair<2>(nw, hw), a[3] = memra_q6t_pair<3>(nw >> 8, hw);
}

// A lane's B fragments, one per class j % 4 of sub-blocks (B column 2t +
// hl holds x for the sub-blocks j with j % 4 == t, zeros for the rest), kept
// across items by memra_mvt and zero from the start: the step loads its own
// class only and the other three stay zero, where zeroing them for every
// sub-block took 16 CS2R an item (step 80: loop 480 -> 472 instructions,
// 80 -> 70 registers, 9B Q6_K +1.2%, 0.8B +3.5%).
struct memra_q6t_bfrag {
    uint2 b[4];
};

// The codebook words that memra_iq4_lut takes in registers, A0 and B0
// (kquant.cuh). Read from memory with a plain load, which ptxas can neither
// rebuild in the loop nor sink past griddepcontrol.wait (as it sinks .nc
// loads, matvec.cu memra_mv_early): the codebook is never written.
__device__ uint2 memra_iq4_words = {MEMRA_IQ4_A0, MEMRA_IQ4_B0};
__device__ __forceinline__ uint2 memra_iq4_codebook() {
    uint2 r;
    asm("ld.global.v2.u32 {%0, %1}, [memra_iq4_words];" : "=r"(r.x), "=r"(r.y));
    return r;
}

// What the IQ4 tiles keep across items: Q6_K's B fragments and the
// codebook words, loaded once, before the wait (memra_mvt_loop).
struct memra_iq4_keep : memra_q6t_bfrag {
    uint2 cb = memra_iq4_codebook();
};
template <bool LUT>
struct memra_nib_keep {
    using type = memra_q6t_bfrag;
};
template <>
struct memra_nib_keep<true> {
    using type = memra_iq4_keep;
};

// b = the 8 bytes at shared address s when p, else b unchanged: one
// predicated ld.shared. In PTX because written as C++ (if (p) b = ...)
// ptxas put the address arithmetic under the predicate and redid it for
// every sub-block.
__device__ __forceinline__ void memra_q6t_lds_if(uint2& b, bool p, unsigned int s) {
    asm volatile("{.reg .pred q; setp.ne.s32 q, %2, 0; @q ld.shared.v2.u32 {%0, %1}, [%3];}" : "+r"(b.x), "+r"(b.y) : "r"((int)p), "r"(s));
}

// Q3_K's tiles (ktile.Q3K) are Q6_K's without the high bits: a lane's
// codes q + 8 (4..11) as Q6_K's low nibbles, its rows' 16 int8 scales
// (sc - 32), their d. A sub-block takes one mma, of the codes less 8 (exact
// f16 integers -4..3), where Q6_K's take two.
struct memra_q3t_sb {
    static constexpr bool F16D = false, LUT = false;
    uint4 n[4], scg, sch;
    unsigned int dd;
};

// IQ4_XS's tiles (ktile.IQ4XS) have Q3_K's shape: 4-bit codes in the
// low-nibble plane, 16 int8 scales a row (ls - 32: each of IQ4_XS's
// 32-column scales twice) and d. A code stands for one of IQ4_NL's 16
// codebook values in -127..113 rather than a number, so a lane's word of 8
// codes goes through a lookup (memra_iq4_lut) instead of memra_nib_afrag,
// and the rest is Q3_K's: one mma a sub-block, of exact f16 integers.
struct memra_iq4t_sb : memra_q3t_sb {
    static constexpr bool LUT = true;
};

// The A fragment of a code word w: its codes' values, cb the codebook
// words A0, B0. Code word nibbles 0..7 are columns (4c, 4c+1) of row g, of
// row g+8, then (4c+2, 4c+3) of each (ktile.IQ4XS), so a looked-up byte
// pair under 1024's f16 exponent, (1024 + v + 128) - 1152, is an exact f16
// pair v.
__device__ __forceinline__ void memra_iq4_afrag(unsigned int w, unsigned int a[4], uint2 cb) {
    const unsigned int wx = w ^ 0x88888888u;
    const unsigned int b0 = memra_iq4_lut(w, wx, cb.x, cb.y), b1 = memra_iq4_lut(w >> 16, wx >> 16, cb.x, cb.y);
    const unsigned int p[4] = {memra_prmt(b0, 0x64u, 0x4140u), memra_prmt(b0, 0x64u, 0x4342u), memra_prmt(b1, 0x64u, 0x4140u),
                               memra_prmt(b1, 0x64u, 0x4342u)};
#pragma unroll
    for (int k = 0; k < 4; k++) a[k] = memra_hsub2(p[k], 0x64806480u);
}

// Q4_0's and IQ4_NL's tiles (ktile.Q40, ktile.IQ4NL) hold 32-column blocks,
// each with an f16 d of its own and no scale above it: Q3_K's low-nibble
// plane (Q4_0: the codes 0..15 in Q6_K's nibble order, less 8 by
// memra_nib_afrag<8>; IQ4_NL: IQ4_XS's codes in its order, looked
// up), then per row the 8 d at 2048. A sub-block's D times its block's d
// goes into the row's sum directly (memra_q6t_scale).
struct memra_q40t_sb {
    static constexpr bool F16D = true, LUT = false;
    uint4 n[4], scg, sch;
};
struct memra_iq4nlt_sb : memra_q40t_sb {
    static constexpr bool LUT = true;
};

// a1[h] (rows g + 8h) += sub-block 4k + p's scale times its D fragment d
// (columns x' hi and lo): byte p of scale word k. Then acc[h] += d_h *
// a1[h] (memra_q6t_scale_put). One lane's share in the decode step (p its
// lane in the quad), and each of the four a lane adds for its token in the
// batch step (matvec_batch_kq.cu): one expression, so the same bits. SB:
// memra_q6t_sb or one of memra_nibt's. For f16 block scales (SB::F16D) the
// scale is the d of sub-block 4k + p's block, half p / 2 of word k, and a1
// goes into acc as it is.
template <class SB>
__device__ __forceinline__ void memra_q6t_scale(float a1[2], const SB& s, int k, int p, const float d[4]) {
    if constexpr (SB::F16D) {
        const unsigned int wg = memra_word(s.scg, k), wh = memra_word(s.sch, k);
        a1[0] += memra_f16_to_f32(p >> 1 ? memra_hi16(wg) : memra_lo16(wg)) * (d[0] + d[1]);
        a1[1] += memra_f16_to_f32(p >> 1 ? memra_hi16(wh) : memra_lo16(wh)) * (d[2] + d[3]);
    } else {
        a1[0] += (float)(signed char)(memra_word(s.scg, k) >> (8 * p)) * (d[0] + d[1]);
        a1[1] += (float)(signed char)(memra_word(s.sch, k) >> (8 * p)) * (d[2] + d[3]);
    }
}
template <class SB>
__device__ __forceinline__ void memra_q6t_scale_put(float acc[2], const SB& s, const float a1[2]) {
    if constexpr (SB::F16D) {
        acc[0] += a1[0];
        acc[1] += a1[1];
    } else {
        acc[0] += memra_f16_to_f32(memra_lo16(s.dd)) * a1[0];
        acc[1] += memra_f16_to_f32(memra_hi16(s.dd)) * a1[1];
    }
}

// Sub-block j's A fragment (memra_q6t_frags; kept: what the tile type
// keeps across items, the codebook for SB::LUT) and D += its product with
// B (b0 b1: x' hi and lo, memra_q6t_mma): Q6_K's codes q - 32, memra_nibt's
// codes less 8 or looked up (SB::LUT).
struct memra_q6t_frag {
    unsigned int a[4];
};
__device__ __forceinline__ memra_q6t_frag memra_q6t_frags(const memra_q6t_sb& s, int j, const memra_q6t_bfrag&) {
    memra_q6t_frag f;
    memra_q6t_afrag(s, j, f.a);
    return f;
}
template <class SB>
__device__ __forceinline__ memra_q6t_frag memra_q6t_frags(const SB& s, int j, const typename memra_nib_keep<SB::LUT>::type& kept) {
    memra_q6t_frag f;
    const unsigned int w = memra_word(s.n[j >> 2], j & 3);
    if constexpr (SB::LUT) {
        memra_iq4_afrag(w, f.a, kept.cb);
    } else {
        memra_nib_afrag<8>(w, f.a);
    }
    return f;
}
__device__ __forceinline__ void memra_q6t_mma(float d[4], const memra_q6t_frag& f, unsigned int b0, unsigned int b1) {
    memra_mma_f16(d, f.a, b0, b1);
}

// acc[h] (rows g + 8h of the tile) += superblock sb's d * sum_j sc_j * D_j.
// Sub-block j's mma writes B columns 2(j%4), 2(j%4)+1 (x' hi and lo;
// the other columns of B are zero), sub-blocks 4k..4k+3 into accumulator
// k, so lane (g, c) ends with sub-blocks c, c+4, c+8, c+12 of its rows and
// multiplies 4 scales instead of 16; the quad's shares are added at the end
// of a unit (memra_tile_put).
template <class SB, class K>
__device__ __forceinline__ void memra_q6t_step(float acc[2], K& bf, const SB& s, int sb, const uint4* xsplit, int lane) {
    const int lg = lane >> 2, lc = lane & 3;
    const int t = lg >> 1, hl = lg & 1; // this lane's B column 2t + hl: sub-blocks j with j % 4 == t
    // Sub-block j's fragment at xs + 64 j: columns sb * 256 + 16 j on.
    const unsigned int xs =
        (unsigned int)__cvta_generic_to_shared(reinterpret_cast<const uint2*>(xsplit) + sb * 128 + (lc / 2) * 4 + hl * 2 + (lc & 1));
    float d[4][4];
#pragma unroll
    for (int k = 0; k < 4; k++) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        memra_q6t_lds_if(bf.b[j & 3], t == (j & 3), xs + 64 * j);
        const uint2 bx = bf.b[j & 3];
        memra_q6t_mma(d[j >> 2], memra_q6t_frags(s, j, bf), bx.x, bx.y);
    }
    float a1[2] = {0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < 4; k++) memra_q6t_scale(a1, s, k, lc, d[k]);
    memra_q6t_scale_put(acc, s, a1);
}

// Q6_K's tile for memra_mvt (mvring.cuh).
struct memra_q6t {
    static constexpr int BYTES = MEMRA_Q6T_BYTES;
    static constexpr bool XSUM = false;
    using sb = memra_q6t_sb;
    using keep = memra_q6t_bfrag;
    static __device__ __forceinline__ sb read(const unsigned char* slot, int lane) {
        sb s;
#pragma unroll
        for (int k = 0; k < 4; k++) s.n[k] = reinterpret_cast<const uint4*>(slot + 512 * k)[lane];
#pragma unroll
        for (int k = 0; k < 2; k++) s.h[k] = reinterpret_cast<const uint4*>(slot + 2048 + 512 * k)[lane];
        s.scg = reinterpret_cast<const uint4*>(slot + 3072)[lane >> 2];
        s.sch = reinterpret_cast<const uint4*>(slot + 3072)[(lane >> 2) + 8];
        s.dd = reinterpret_cast<const unsigned int*>(slot + 3328)[lane >> 2];
        return s;
    }
    static __device__ __forceinline__ void step(float acc[2], keep& bf, const sb& s, int i, const uint4* xsplit, const float*, int lane) {
        memra_q6t_step(acc, bf, s, i, xsplit, lane);
    }
};

// A row's d at 2304 (Q3_K, IQ4_XS), or none (Q4_0, IQ4_NL: their d are the
// scales).
__device__ __forceinline__ void memra_nibt_read_d(memra_q3t_sb& s, const unsigned char* slot, int lane) {
    s.dd = reinterpret_cast<const unsigned int*>(slot + 2304)[lane >> 2];
}
__device__ __forceinline__ void memra_nibt_read_d(memra_q40t_sb&, const unsigned char*, int) {}

// Q3_K's (SB memra_q3t_sb), IQ4_XS's (memra_iq4t_sb), Q4_0's
// (memra_q40t_sb) and IQ4_NL's (memra_iq4nlt_sb) tiles of B bytes for
// memra_mvt: Q6_K's steps and sums over their codes.
template <class SB, int B>
struct memra_nibt {
    static constexpr int BYTES = B;
    static constexpr bool XSUM = false;
    using sb = SB;
    using keep = typename memra_nib_keep<SB::LUT>::type;
    static __device__ __forceinline__ sb read(const unsigned char* slot, int lane) {
        sb s;
#pragma unroll
        for (int k = 0; k < 4; k++) s.n[k] = reinterpret_cast<const uint4*>(slot + 512 * k)[lane];
        s.scg = reinterpret_cast<const uint4*>(slot + 2048)[lane >> 2];
        s.sch = reinterpret_cast<const uint4*>(slot + 2048)[(lane >> 2) + 8];
        memra_nibt_read_d(s, slot, lane);
        return s;
    }
    static __device__ __forceinline__ void step(float acc[2], keep& bf, const sb& s, int i, const uint4* xsplit, const float*, int lane) {
        memra_q6t_step(acc, bf, s, i, xsplit, lane);
    }
};
using memra_q3t = memra_nibt<memra_q3t_sb, MEMRA_Q3T_BYTES>;
using memra_iq4t = memra_nibt<memra_iq4t_sb, MEMRA_IQ4T_BYTES>;
using memra_q40t = memra_nibt<memra_q40t_sb, MEMRA_Q40T_BYTES>;
using memra_iq4nlt = memra_nibt<memra_iq4nlt_sb, MEMRA_IQ4NLT_BYTES>;

// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols] Q6_K tiled; x: [cols] f32;
// norm_w: [cols] f32 (read when xnorm != 0). KW4 with 2 slots, the fastest
// or within 6% of it on the presets' shapes of more than 2,048 rows (perf.md
// step 39, run86, run89), now those of more than 4,096; the wide kernel (KW8,
// gpu.MatvecWide) on matrices of up to 4,096 rows, where it beat the plain
// one on 4096 x 12288 (step 45, run99), with 2 slots: two blocks an SM at
// 12,288 columns instead of one with 3 (step 73, run163: 18.90 -> 16.99 us
// a node in a graph, 9B Q6_K +1.6%). The minimum of one block an SM, as
// the IQ4 kernels': with one operand a sub-block (step 108) ptxas 11.8 held
// the wide kernel to 64 registers on sm_80-89 and spilled 4 bytes; with it
// none spill and the sm_90 loop is 418 instructions (79 registers). Both
// release their successor early only on rows of 4,096 columns or more
// (MEMRA_RELEASE_WIDE, common.cuh): the 0.8B's rows of 1,024-3,584 decode
// faster with it at a block's last unit, the 9B's not (perf.md steps 150,
// 152).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q6_k(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 2, memra_q6t, MEMRA_RELEASE_WIDE>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm,
                                                   eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q6_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvt<8, 2, memra_q6t, MEMRA_RELEASE_WIDE>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm,
                                                   eps);
}

// Q3_K (ktile.Q3K), on Q6_K's geometry and rules (gpu.MatvecWide): not
// measured against it yet.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q3_k(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 2, memra_q3t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q3_k_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvt<8, 2, memra_q3t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// IQ4_XS (ktile.IQ4XS), on Q6_K's geometry and rules (gpu.MatvecWide): not
// measured against it yet. The minimum of one block an SM, as Q5_K's: without
// it ptxas 11.8 held both to 64 registers, rematerialised the codebook
// words in the loop and spilled 8 bytes in the wide one.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_xs(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 2, memra_iq4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_xs_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                   float eps) {
    memra_mvt<8, 2, memra_iq4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// Q4_0 (ktile.Q40) and IQ4_NL (ktile.IQ4NL), on Q6_K's geometry and rules
// (gpu.MatvecWide) and, as IQ4_XS's, a minimum of one block an SM: not
// measured against them yet.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q4_0(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 2, memra_q40t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q4_0_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                 float eps) {
    memra_mvt<8, 2, memra_q40t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_nl(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 2, memra_iq4nlt>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_nl_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                   float eps) {
    memra_mvt<8, 2, memra_iq4nlt>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}
