// mvring.cuh: the tensor-core matvecs' loop over tiles (matvec_q4k.cu,
// matvec_q6k.cu, and the prefill's matvec_batch_kq.cu), one type's tile
// read and its sums given as policies.
//
// Why it looks like this: both K-quant kernels are bound by their
// instructions and their latency more than by bytes in flight (perf.md
// step 35: ncu issued 0.5 warps a cycle per scheduler at 41% of DRAM), so
// the tiles stream through a ring of S slots per warp in shared memory,
// filled by cp.async S - 1 tiles ahead, across the ends of units: the
// registers are left to the arithmetic (Q4_K: 66 against 99 with a
// superblock held ahead in registers). A type's tile (memra_q4t, memra_q6t)
// says its bytes, how a lane reads its share from a slot, its step, whether
// the step needs the run sums of x, and what it keeps across items.
//
// Geometry: a warp owns a tile row (16 rows); KW warps split its
// superblocks (superblock kw, kw + KW, ...). Rows per unit: (8/KW) * 16.
// The order of every sum is fixed by the geometry, so eager and graph runs
// give the same bits. W, x and norm_w 16-byte aligned; cols % 256 == 0.
#ifndef MEMRA_MVRING_CUH
#define MEMRA_MVRING_CUH
#include "common.cuh"
#include "mma.cuh"

// The lane's share of copying one tile of BYTES (a multiple of 16) into a
// slot at shared address slot; ld.global.cg, as weights are read once. The
// lane's 16-byte chunks lie 512 bytes apart on both sides, so they are
// written as immediate offsets from one address pair: per-chunk 64-bit
// addresses and the slot taken modulo S cost Q4_K's loop 29 of its 327
// instructions an item (perf.md step 79, branch next/ring-issue). With the
// next unit's address stepped too (memra_mvt) the loops are Q4_K 289, Q5_K
// 389, Q6_K 480 (472 since step 80), and 9B K-quant decode 2.4-3.5% faster
// (step 79, run173).
template <int K>
__device__ __forceinline__ void memra_chunk_copy(unsigned int s, const unsigned char* g) {
    asm volatile("cp.async.cg.shared.global [%0+%2], [%1+%2], 16;" ::"r"(s), "l"(g), "n"(512 * K) : "memory");
}
template <int K, int FULL>
__device__ __forceinline__ void memra_chunk_copies(unsigned int s, const unsigned char* g) {
    if constexpr (K < FULL) {
        memra_chunk_copy<K>(s, g);
        memra_chunk_copies<K + 1, FULL>(s, g);
    }
}
template <int BYTES>
__device__ __forceinline__ void memra_tile_copy(unsigned int slot, const unsigned char* tile, int lane) {
    constexpr int CHUNKS = BYTES / 16, FULL = CHUNKS / 32, REST = CHUNKS % 32;
    const unsigned int s = slot + 16 * lane;
    const unsigned char* g = tile + 16 * lane;
    memra_chunk_copies<0, FULL>(s, g);
    if (REST > 0 && lane < REST) memra_chunk_copy<FULL>(s, g);
}

// The end of a unit: the quad's shares of rows g and g+8 added in lane
// order, then the KW warps' partials of a row in warp order, unscaled, put.
__device__ __forceinline__ void memra_tile_put(float* y, float (*red)[16], float acc[2], int unit, int G, int KW, int lane, int rows,
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

// The ring loop over 16-row tiles of one superblock, tile type T, for
// the sums of one token (memra_mvt) or of a prompt chunk's
// (matvec_batch_kq.cu): stage() stages the block's inputs after the wait,
// zero() clears a unit's sums, step(kept, s, i) adds one item (s its lane's
// share read from the slot, i the superblock, kept what T keeps across
// items, zero-initialised here; Q6_K: its B fragments) and put(unit) puts
// a unit's rows. A warp's items are its superblocks kw, kw + KW, ... of
// every unit the block loops over, in order, through its ring of S slots
// (warp w's at rings + w * S * T::BYTES): S - 1 of them in flight, across
// the ends of units (with S = 1, one while the lanes sum the last from
// registers). The next item to copy is unit pu's pj-th superblock,
// at src, into the slot at byte ps of the ring (slots are counted, not
// taken modulo S); src steps KW tiles an item and, at the end of a unit,
// on to the next unit of this block; a group past the end re-reads the
// last tile (at last), never stored. One commit group per item (empty past
// the last) keeps cp.async.wait_group counting items. The block is blk of
// nblk: blockIdx.x of gridDim.x, or a share of the grid (matvec_mix.cu).
// REL: when a block releases the grid's successor (common.cuh).
template <int KW, int S, class T, memra_release REL = MEMRA_RELEASE_EARLY, class Stage, class Zero, class Step, class Put>
__device__ __forceinline__ void memra_mvt_loop(const unsigned char* W, int rows, int cols, unsigned char* rings, Stage stage, Zero zero,
                                               Step step, Put put, unsigned int blk, unsigned int nblk) {
    static_assert(S >= 1, "a ring needs a slot");
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int ns = cols >> 8;
    const int units = (rows + G * 16 - 1) / (G * 16);
    const int tiles = (rows + 15) / 16;
    const int per = kw < ns ? (ns - kw + KW - 1) / KW : 0; // this warp's superblocks per unit
    unsigned char* ring = rings + (long long)warp * S * T::BYTES;
    const unsigned int ring_s = (unsigned int)__cvta_generic_to_shared(ring);
    int pu = blk, pj = 0, ps = 0, tile = pu * G + g;
    const unsigned char* last = W + ((long long)(tiles - 1) * ns + kw) * T::BYTES;
    const long long unit_step = ((long long)nblk * G * ns - (long long)per * KW) * T::BYTES;
    const unsigned char* src = tile < tiles ? W + ((long long)tile * ns + kw) * T::BYTES : last;
    auto issue = [&]() {
        if (per > 0 && pu < units) {
            memra_tile_copy<T::BYTES>(ring_s + ps, tile < tiles ? src : last, lane);
            src += KW * T::BYTES;
            if (++pj == per) pj = 0, pu += nblk, tile += nblk * G, src += unit_step;
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        ps = ps + T::BYTES == S * T::BYTES ? 0 : ps + T::BYTES;
    };
    // Weights are never written: the first S - 1 items (one with one slot)
    // leave before the wait, and so do the loads of what T keeps (the IQ4
    // codebook words).
#pragma unroll
    for (int k = 0; k < (S > 1 ? S - 1 : 1); k++) issue();
    typename T::keep kept = {};
    memra_grid_wait();
    const bool early = memra_release_early<REL>(cols);
    if (early) memra_grid_launch_dependents();
    stage();
    int cs = 0; // the byte in the ring of the item being summed
    for (int unit = blk; unit < units; unit += nblk) {
        zero();
        for (int j = 0; j < per; j++) {
            if constexpr (S == 1) {
                // One slot (matvec_lean.cu): the lanes take their shares into
                // registers, then the next item refills the slot while they sum.
                asm volatile("cp.async.wait_group 0;" ::: "memory");
                __syncwarp(); // every lane's copies have landed
                const typename T::sb s = T::read(ring, lane);
                __syncwarp(); // ... and every lane has read its share
                issue();
                step(kept, s, kw + j * KW);
            } else {
                asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory"); // this lane's copies of the item have landed
                __syncwarp(); // ... and every lane's, and the previous item's slot is free
                issue();
                step(kept, T::read(ring + cs, lane), kw + j * KW);
                cs = cs + T::BYTES == S * T::BYTES ? 0 : cs + T::BYTES;
            }
        }
        if (!early && unit + (int)nblk >= units) memra_grid_launch_dependents(); // this block's last unit
        put(unit);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// The ring matvec of one token: x' staged by memra_stage_x, a lane's share
// of rows g, g+8 in acc (T::step), the quad's shares added by
// memra_tile_put. Dynamic shared memory (kernels.MatvecKernel.Shared): cols
// * 4 bytes of split x, cols/32 f32 run sums (filled when T::XSUM), then
// each warp's ring of S tile slots. The block is blk of nblk
// (memra_mvt_loop).
template <int KW, int S, class T, memra_release REL = MEMRA_RELEASE_EARLY>
__device__ __forceinline__ void memra_mvt(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                          const float* norm_w, int xnorm, float eps, unsigned int blk = blockIdx.x,
                                          unsigned int nblk = gridDim.x) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 memra_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][16];
    const int lane = threadIdx.x & 31;
    float* xsum = reinterpret_cast<float*>(memra_xsplit + cols / 4);
    float unscale, acc[2];
    memra_mvt_loop<KW, S, T, REL>(
        W, rows, cols, reinterpret_cast<unsigned char*>(xsum + cols / 32),
        [&]() { unscale = memra_stage_x(memra_xsplit, T::XSUM ? xsum : nullptr, x, norm_w, cols, xnorm, eps); },
        [&]() { acc[0] = acc[1] = 0.0f; },
        [&](typename T::keep& kept, const typename T::sb& s, int i) { T::step(acc, kept, s, i, memra_xsplit, xsum, lane); },
        [&](int unit) { memra_tile_put(y, red, acc, unit, G, KW, lane, rows, mode, unscale); }, blk, nblk);
}

// (w & mask) | top in one LOP3: with top = 1024s (f16 0x6400) the A pair of
// f16s 1024 + b for the bits b of w under mask (each half's bits below
// f16's 10 mantissa bits).
__device__ __forceinline__ unsigned int memra_or_bits(unsigned int w, unsigned int mask, unsigned int top) {
    unsigned int r;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(r) : "r"(w), "r"(mask), "r"(top));
    return r;
}
__device__ __forceinline__ unsigned int memra_or1024(unsigned int w, unsigned int mask) { return memra_or_bits(w, mask, 0x64006400u); }

// f16x2 arithmetic on packed words, rounding once (rn): a + b, a - b and
// a * b + c, for the A operands built from codes under 1024's exponent.
__device__ __forceinline__ unsigned int memra_hadd2(unsigned int a, unsigned int b) {
    unsigned int r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ unsigned int memra_hsub2(unsigned int a, unsigned int b) {
    unsigned int r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ unsigned int memra_hfma2(unsigned int a, unsigned int b, unsigned int c) {
    unsigned int r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}

// Word i of v, i known at compile time after unrolling.
__device__ __forceinline__ unsigned int memra_word(uint4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

#endif // MEMRA_MVRING_CUH
