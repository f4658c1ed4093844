// kquant.cuh: the K-quant blocks (Q4_K, Q5_K, Q6_K, and the tiles of Q3_K,
// IQ4_XS, Q4_0 and IQ4_NL) as the matvec and embedding kernels read them.
// The engine tiles all of them for its tensor-core matvecs (matvec_q4k.cu, matvec_q6k.cu;
// the tiled layouts and their readers are at the end of this file); the
// item reader below serves
// engine/internal/mvexp's CUDA-core baselines of Q4_K and Q6_K (Q5_K's
// CUDA-core kernel, 1.5 TB/s at 24576 x 4096, is gone: step 40).
//
// Why it looks like this: a superblock holds 256 values. The matvec streams
// it in 16-byte "items" of 32 values each (eight per superblock): one 16-byte
// load of 4-bit codes, plus, for Q6_K, one of high bits, plus the
// superblock's 16 bytes of scales (read by the eight lanes that share them,
// so mostly from L1). In every type an item's 32 values are two runs of 16
// consecutive columns, each run with one scale a and one offset m:
// value = a*q - m, q unsigned. That lets one dot routine serve both:
// Σ a*q*x - m*x = a*Σq*x - m*Σx, and Σx is shared by the rows of a warp.
//
// Layouts (gguf/dequant.go decodes the same bytes on the CPU). Q4_K (for
// the items) is ggml's block as it is (144 bytes: a multiple of 16, so rows
// of whole superblocks stay 16-byte aligned):
//   Q4_K: d f16 | dmin f16 | scales[12] | qs[128]
// Q6_K's 210-byte block, for mvexp's baseline, is split as q8_0's are: the
// first 208 bytes, ql[128] | qh[64] | scales[16] int8, stay together in W,
// the f16 d goes to S [rows][cols/256].
#ifndef MEMRA_KQUANT_CUH
#define MEMRA_KQUANT_CUH
#include "common.cuh"

enum { MEMRA_KQ4 = 0, MEMRA_KQ6 = 1 };

// Device bytes per superblock of W.
template <int KQ>
struct memra_kq {
    static constexpr int BB = KQ == MEMRA_KQ4 ? 144 : 208;
};

// Byte i (0..15) of a 16-byte register group, i known only at run time
// (selects, not an indexed array: that would go to local memory).
__device__ __forceinline__ unsigned int memra_byte16(uint4 v, int i) {
    const int w = i >> 2;
    const unsigned int u = w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
    return (u >> (8 * (i & 3))) & 0xffu;
}

// The 6-bit scale and min of sub-block j (0..7) of Q4_K, from the
// 12 packed bytes at bytes 4..15 of the header h.
__device__ __forceinline__ void memra_kq_scale_min(uint4 h, int j, unsigned int* sc, unsigned int* m) {
    if (j < 4) {
        *sc = memra_byte16(h, 4 + j) & 63u;
        *m = memra_byte16(h, 8 + j) & 63u;
    } else {
        const unsigned int b = memra_byte16(h, 8 + j);
        *sc = (b & 0xfu) | ((memra_byte16(h, j) >> 6) << 4);
        *m = (b >> 4) | ((memra_byte16(h, 4 + j) >> 6) << 4);
    }
}

// Unsigned byte k (0..3) of u as an exact f32 (byte under 2^23's exponent).
__device__ __forceinline__ float memra_u8_val(unsigned int u, int k) {
    return __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7440u | k)) - 8388608.0f;
}

// One item's loads: the 4-bit codes q, the high bits hb (Q6_K), the
// header or scales hd, and Q6_K's d.
struct memra_kitem {
    uint4 q, hb, hd;
    float d;
};

// Byte offset of item c's 16 bytes of 4-bit codes in its superblock.
template <int KQ>
__device__ __forceinline__ int memra_kq_code_off(int c) {
    return (KQ == MEMRA_KQ4 ? 16 : 0) + 16 * c;
}

// Item v of a row (superblock v/8, item c = v%8 of it). row: the row's W;
// srow: the row's S (Q6_K).
template <int KQ>
__device__ __forceinline__ memra_kitem memra_kq_load(const unsigned char* row, const unsigned short* srow, int v) {
    const int b = v >> 3, c = v & 7;
    const unsigned char* blk = row + (long long)b * memra_kq<KQ>::BB;
    memra_kitem it;
    if (KQ == MEMRA_KQ4) {
        it.hd = memra_ldg16(blk);
        it.q = memra_ldg16(blk + memra_kq_code_off<KQ>(c));
        it.hb = make_uint4(0, 0, 0, 0);
        it.d = 0.0f;
    } else {
        it.q = memra_ldg16(blk + memra_kq_code_off<KQ>(c));
        it.hb = memra_ldg16(blk + 128 + 32 * (c >> 2) + 16 * (c & 1));
        it.hd = memra_ldg16(blk + 192);
        it.d = memra_f16_to_f32(__ldg(srow + b));
    }
    return it;
}

// The columns of item v's two runs: lo (16 values from column *xl) and hi
// (from *xh).
template <int KQ>
__device__ __forceinline__ void memra_kq_pos(int v, int* xl, int* xh) {
    const int b = v >> 3, c = v & 7;
    if (KQ == MEMRA_KQ6) {
        *xl = 256 * b + 128 * (c >> 2) + 16 * (c & 3);
        *xh = *xl + 64;
    } else {
        *xl = 256 * b + 64 * (c >> 1) + 16 * (c & 1);
        *xh = *xl + 32;
    }
}

// Item v's two runs as (a, m) pairs and their 16 codes each, packed four per
// word (lo[k], hi[k]: bytes of columns 4k..4k+3 of the run).
template <int KQ>
__device__ __forceinline__ void memra_kq_decode(const memra_kitem& it, int v, float* alo, float* mlo, float* ahi, float* mhi,
                                                unsigned int lo[4], unsigned int hi[4]) {
    const int c = v & 7;
    const unsigned int qw[4] = {it.q.x, it.q.y, it.q.z, it.q.w};
    const unsigned int hw[4] = {it.hb.x, it.hb.y, it.hb.z, it.hb.w};
    if (KQ == MEMRA_KQ6) {
        // ql chunk c: half n = c/4; the low nibbles take qh bits (sh, sh+1),
        // the high nibbles bits (sh+4, sh+5), sh = 2 for the second 32 of a
        // half's 64 ql bytes; scales 8n + c%2 + sh (+4 for the high run).
        const int sh = (c & 2) ? 2 : 0;
        const int si = 8 * (c >> 2) + (c & 1) + sh;
        const float alo_ = it.d * (float)(signed char)memra_byte16(it.hd, si);
        const float ahi_ = it.d * (float)(signed char)memra_byte16(it.hd, si + 4);
        *alo = alo_;
        *ahi = ahi_;
        *mlo = 32.0f * alo_;
        *mhi = 32.0f * ahi_;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            lo[k] = (qw[k] & 0x0f0f0f0fu) | (((hw[k] >> sh) & 0x03030303u) << 4);
            hi[k] = ((qw[k] >> 4) & 0x0f0f0f0fu) | (((hw[k] >> (sh + 4)) & 0x03030303u) << 4);
        }
        return;
    }
    // Q4_K: qs chunk c is half of group g = c/2, low nibbles sub-block 2g,
    // high nibbles 2g+1.
    const int g = c >> 1;
    unsigned int sc0, m0, sc1, m1;
    memra_kq_scale_min(it.hd, 2 * g, &sc0, &m0);
    memra_kq_scale_min(it.hd, 2 * g + 1, &sc1, &m1);
    const float d = memra_f16_to_f32((unsigned short)(it.hd.x & 0xffffu));
    const float dmin = memra_f16_to_f32((unsigned short)(it.hd.x >> 16));
    *alo = d * (float)sc0;
    *mlo = dmin * (float)m0;
    *ahi = d * (float)sc1;
    *mhi = dmin * (float)m1;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        lo[k] = qw[k] & 0x0f0f0f0fu;
        hi[k] = (qw[k] >> 4) & 0x0f0f0f0fu;
    }
}

// Value i (0..255) of superblock blk as f32, in the CPU decoder's order of
// operations ((d*sc)*q - dmin*m, or (d*sc)*(q-32)) with no contraction into
// an FMA; byte loads only: the CUDA-core baselines' fallback for unaligned
// W (the tiled readers below keep the same order for the embeddings).
template <int KQ>
__device__ __forceinline__ float memra_kq_value(const unsigned char* blk, const unsigned short* sblk, int i) {
    if (KQ == MEMRA_KQ6) {
        const int n = i >> 7, r = i & 127, g = r >> 5, l = r & 31;
        const unsigned int qlb = blk[64 * n + l + 32 * (g & 1)];
        const unsigned int q = ((g >> 1) ? qlb >> 4 : qlb & 0xfu) | (((blk[128 + 32 * n + l] >> (2 * g)) & 3u) << 4);
        const float ds = __fmul_rn(memra_f16_to_f32(*sblk), (float)(signed char)blk[192 + 8 * n + l / 16 + 2 * g]);
        return __fmul_rn(ds, (float)((int)q - 32));
    }
    const int k = i >> 6, hi = (i >> 5) & 1, l = i & 31, j = 2 * k + hi;
    const unsigned char* sc6 = blk + 4; // the 12 packed scale/min bytes
    unsigned int sc, m;
    if (j < 4) {
        sc = sc6[j] & 63u;
        m = sc6[j + 4] & 63u;
    } else {
        sc = (sc6[j + 4] & 0xfu) | ((unsigned int)(sc6[j - 4] >> 6) << 4);
        m = (sc6[j + 4] >> 4) | ((unsigned int)(sc6[j] >> 6) << 4);
    }
    const unsigned int q = (blk[16 + 32 * k + l] >> (4 * hi)) & 0xfu;
    const float d = memra_f16_to_f32((unsigned short)(blk[0] | (blk[1] << 8)));
    const float dmin = memra_f16_to_f32((unsigned short)(blk[2] | (blk[3] << 8)));
    return __fsub_rn(__fmul_rn(__fmul_rn(d, (float)sc), (float)q), __fmul_rn(dmin, (float)m));
}

// The tiled Q4_K layout the tensor-core matvec streams (matvec_q4k.cu; Go:
// engine/internal/ktile, which documents it): 16 rows x one superblock per
// MEMRA_Q4T_BYTES, tiles row after row, zero rows past the end. Per tile,
// with g = row%8, h = row/8 of its 16 rows: the codes of run pair p at 512p,
// lane 4g+c's 16 bytes = runs 2p, 2p+1, each 4 bytes of row g then of row
// g+8, columns 8c..8c+7 as nibbles c0|c2<<4, c4|c6<<4, c1|c3<<4, c5|c7<<4;
// then at 2048 per row sc[8] and m[8] unpacked; then at 2304 per g d and
// dmin of row g, of row g+8.
#define MEMRA_Q4T_BYTES 2368

// Q5_K's tiles (ktile.Q5K): Q4_K's bytes, then at MEMRA_Q4T_BYTES the
// fifth bits, lane 4g+c's 16 bytes: word p for run pair p, the value at
// nibble n of code word m (run 2p row g, row g+8, run 2p+1 row g, row g+8)
// at bit 4n + m.
#define MEMRA_Q5T_BYTES 2880

// Value (row, col) of a tiled Q4_K (Q5: Q5_K) matrix of ns superblocks per
// row, in the CPU decoder's order of operations like memra_kq_value.
template <bool Q5>
__device__ __forceinline__ float memra_k4t_value(const unsigned char* tiles, int ns, long long row, int col) {
    const unsigned char* t = tiles + ((row >> 4) * ns + (col >> 8)) * (Q5 ? MEMRA_Q5T_BYTES : MEMRA_Q4T_BYTES);
    const int rr = (int)(row & 15), v = col & 255, g = rr & 7, h = rr >> 3;
    const int j = v >> 5, c = (v >> 3) & 3, i = v & 7;
    const unsigned int b = t[512 * (j >> 1) + 16 * (4 * g + c) + 8 * (j & 1) + 4 * h + 2 * (i & 1) + (i >> 2)];
    unsigned int q = (b >> (4 * ((i >> 1) & 1))) & 15u;
    if (Q5) {
        const int bit = 4 * (4 * (i & 1) + (i >> 1)) + 2 * (j & 1) + h;
        q |= ((t[MEMRA_Q4T_BYTES + 16 * (4 * g + c) + 4 * (j >> 1) + (bit >> 3)] >> (bit & 7)) & 1u) << 4;
    }
    const unsigned int sc = t[2048 + 16 * rr + j], m = t[2048 + 16 * rr + 8 + j];
    const unsigned char* dd = t + 2304 + 8 * g + 4 * h;
    const float d = memra_f16_to_f32((unsigned short)(dd[0] | (dd[1] << 8)));
    const float dmin = memra_f16_to_f32((unsigned short)(dd[2] | (dd[3] << 8)));
    return __fsub_rn(__fmul_rn(__fmul_rn(d, (float)sc), (float)q), __fmul_rn(dmin, (float)m));
}

// The tiled Q6_K layout (matvec_q6k.cu; engine/internal/ktile documents
// it): 16 rows x one superblock per MEMRA_Q6T_BYTES, as Q4_K's. Per tile,
// with g = row%8, h = row/8: the low nibbles of sub-blocks 4p..4p+3 at
// 512p, lane 4g+c's 16 bytes = one word per sub-block, columns 4c..4c+3 of
// rows g and g+8; the high bit pairs of sub-blocks 8q..8q+7 at 2048 + 512q,
// one word per sub-block pair; then at 3072 per row the 16 int8 scales; at
// 3328 per g d of row g, of row g+8.
#define MEMRA_Q6T_BYTES 3360

// Value (row, col) of a tiled Q6_K matrix of ns superblocks per row, in the
// CPU decoder's order of operations like memra_kq_value.
__device__ __forceinline__ float memra_q6t_value(const unsigned char* tiles, int ns, long long row, int col) {
    const unsigned char* t = tiles + ((row >> 4) * ns + (col >> 8)) * MEMRA_Q6T_BYTES;
    const int rr = (int)(row & 15), v = col & 255, g = rr & 7, h = rr >> 3;
    const int j = v >> 4, c = (v >> 2) & 3, p = v & 3; // sub-block j, lane column group c, column p of it
    const unsigned int nb = t[512 * (j >> 2) + 16 * (4 * g + c) + 4 * (j & 3) + 2 * (p & 1) + h];
    const int bit = 2 * (h + 2 * (p >> 1)) + 8 * (j & 1) + 16 * (p & 1); // of the pair word
    const unsigned int hb = t[2048 + 512 * (j >> 3) + 16 * (4 * g + c) + 4 * ((j & 7) >> 1) + (bit >> 3)];
    const int q = (int)(((nb >> (4 * (p >> 1))) & 15u) | (((hb >> (bit & 7)) & 3u) << 4));
    const unsigned char* dd = t + 3328 + 4 * g + 2 * h;
    const float d = memra_f16_to_f32((unsigned short)(dd[0] | (dd[1] << 8)));
    return __fmul_rn(__fmul_rn(d, (float)(signed char)t[3072 + 16 * rr + j]), (float)(q - 32));
}

// The tiled Q3_K layout (matvec_q6k.cu's memra_q3t; engine/internal/ktile
// Q3K): Q6_K's low-nibble plane with the codes q + 8 (4..11), then at 2048
// per row the 16 int8 scales sc - 32, at 2304 per g d of row g, of row g+8.
#define MEMRA_Q3T_BYTES 2336

// Value (row, col) of a tiled Q3_K matrix of ns superblocks per row, in the
// CPU decoder's order of operations like memra_kq_value.
__device__ __forceinline__ float memra_q3t_value(const unsigned char* tiles, int ns, long long row, int col) {
    const unsigned char* t = tiles + ((row >> 4) * ns + (col >> 8)) * MEMRA_Q3T_BYTES;
    const int rr = (int)(row & 15), v = col & 255, g = rr & 7, h = rr >> 3;
    const int j = v >> 4, c = (v >> 2) & 3, p = v & 3;
    const unsigned int nb = t[512 * (j >> 2) + 16 * (4 * g + c) + 4 * (j & 3) + 2 * (p & 1) + h];
    const int q = (int)((nb >> (4 * (p >> 1))) & 15u);
    const unsigned char* dd = t + 2304 + 4 * g + 2 * h;
    const float d = memra_f16_to_f32((unsigned short)(dd[0] | (dd[1] << 8)));
    return __fmul_rn(__fmul_rn(d, (float)(signed char)t[2048 + 16 * rr + j]), (float)(q - 8));
}

// The tiled IQ4_XS layout (matvec_q6k.cu's memra_iq4t; engine/internal/ktile
// IQ4XS): Q3_K's shape, 4-bit codes (memra_iq4_lut's, one per codebook
// index) in the low-nibble plane, lane 4g+c's word for a sub-block of 16
// columns holding columns (4c, 4c+1) of row g, of row g+8, then (4c+2,
// 4c+3) of each, nibble by nibble; at 2048 per row the 16 int8 scales ls -
// 32 (each 32-column scale twice), at 2304 per g d of row g, of row g+8.
#define MEMRA_IQ4T_BYTES 2336

// The codebook + 128 (1..241) as bytes, split for memra_iq4_lut: code n =
// i + 8h holds codebook index 2i + h (ktile.iq4Code), A byte i is index
// 2i's value + 128, B byte i index 2i+1's, inverted (~) where 2i's is
// positive (i >= 4), so that every B byte's top bit is 0. The Go test
// TestIQ4Table runs this lookup over every index against gguf's decoder.
#define MEMRA_IQ4_A0 0x6A4F2D01u
#define MEMRA_IQ4_A1 0xD9B59981u
#define MEMRA_IQ4_B0 0x765D3F18u
#define MEMRA_IQ4_B1 0x0E3A5972u

__device__ __forceinline__ unsigned int memra_prmt(unsigned int a, unsigned int b, unsigned int c) {
    unsigned int r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}

// The codebook bytes (+ 128) of the four codes in the low 16 bits of s, byte
// k from code k, given sx = s ^ 0x8888 and the words A0 (a0) and B0 (b0).
// prmt picks a byte by a selector nibble's low 3 bits, and with bit 3 set
// gives that byte's top bit in all 8 (a sign fill). So the XOR of the two
// permutes gives code i + 8h A[i] ^ fill(B[i]) = A[i] when h = 0, and
// fill(A[i]) ^ B[i] when h = 1: B[i] for i < 4, ~B[i] for i >= 4, index 2i+1's
// byte either way. A pair (2i, 2i+1) shares a sign, so A[i]'s top bit
// tells whether B[i] is stored inverted, and no third permute has to choose
// between the lookups (perf.md step 107). a0 and b0 come in registers: as
// immediates ptxas rebuilt them from uniform registers before every use.
__device__ __forceinline__ unsigned int memra_iq4_lut(unsigned int s, unsigned int sx, unsigned int a0 = MEMRA_IQ4_A0,
                                                      unsigned int b0 = MEMRA_IQ4_B0) {
    return memra_prmt(a0, MEMRA_IQ4_A1, s) ^ memra_prmt(b0, MEMRA_IQ4_B1, sx);
}

// Value (row, col) of a tiled IQ4_XS matrix of ns superblocks per row, in
// the CPU decoder's order of operations ((d * (ls - 32)) * v).
__device__ __forceinline__ float memra_iq4t_value(const unsigned char* tiles, int ns, long long row, int col) {
    const unsigned char* t = tiles + ((row >> 4) * ns + (col >> 8)) * MEMRA_IQ4T_BYTES;
    const int rr = (int)(row & 15), v = col & 255, g = rr & 7, h = rr >> 3;
    const int j = v >> 4, c = (v >> 2) & 3, p = v & 3;
    const unsigned int n = (t[512 * (j >> 2) + 16 * (4 * g + c) + 4 * (j & 3) + 2 * (p >> 1) + h] >> (4 * (p & 1))) & 15u;
    const int q = (int)(memra_iq4_lut(n, n ^ 8u) & 0xffu) - 128;
    const unsigned char* dd = t + 2304 + 4 * g + 2 * h;
    const float d = memra_f16_to_f32((unsigned short)(dd[0] | (dd[1] << 8)));
    return __fmul_rn(__fmul_rn(d, (float)(signed char)t[2048 + 16 * rr + j]), (float)q);
}

// The tiled Q4_0 and IQ4_NL layouts (matvec_q6k.cu's memra_q40t and
// memra_iq4nlt; engine/internal/ktile Q40, IQ4NL): the low-nibble plane of
// Q3_K's tiles (Q4_0: the codes 0..15 in its order; IQ4_NL: IQ4_XS's
// codes in IQ4_XS's order), then at 2048 per row the f16 d of its eight
// 32-column blocks.
#define MEMRA_Q40T_BYTES 2304
#define MEMRA_IQ4NLT_BYTES 2304

// Value (row, col) of a tiled Q4_0 (IQ: IQ4_NL) matrix of ns superblocks
// per row, in the CPU decoder's order of operations ((q - 8) * d, d * v).
template <bool IQ>
__device__ __forceinline__ float memra_b32t_value(const unsigned char* tiles, int ns, long long row, int col) {
    const unsigned char* t = tiles + ((row >> 4) * ns + (col >> 8)) * MEMRA_Q40T_BYTES;
    const int rr = (int)(row & 15), v = col & 255, g = rr & 7, h = rr >> 3;
    const int j = v >> 4, c = (v >> 2) & 3, p = v & 3;
    const unsigned char* w = t + 512 * (j >> 2) + 16 * (4 * g + c) + 4 * (j & 3);
    const unsigned char* dd = t + 2048 + 16 * rr + 2 * (v >> 5);
    const float d = memra_f16_to_f32((unsigned short)(dd[0] | (dd[1] << 8)));
    if (IQ) {
        const unsigned int n = (w[2 * (p >> 1) + h] >> (4 * (p & 1))) & 15u;
        return __fmul_rn(d, (float)((int)(memra_iq4_lut(n, n ^ 8u) & 0xffu) - 128));
    }
    const int q = (int)((w[2 * (p & 1) + h] >> (4 * (p >> 1))) & 15u);
    return __fmul_rn((float)(q - 8), d);
}

#endif // MEMRA_KQUANT_CUH
