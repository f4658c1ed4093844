// mvq4s.cuh: the engine's Q4_K tensor-core matvec (kernels/matvec_q4k.cu)
// with its tiles streamed through shared memory (docs/perf.md step 34).
//
// Why: the engine's kernel holds one superblock tile ahead in registers
// (26 of its 99), so a warp has at most ~2.4 KB in flight, and each unit
// (its 4 superblocks of a 16-row tile at 4,096 columns, KW4) starts with a
// round trip of its own: 16 warps an SM keep ~38 KB in flight against the
// ~60 KB that copy bandwidth needs at this latency, and the big shapes run at
// ~2.3 TB/s. Here every warp owns a ring of S tile slots in shared memory
// filled by cp.async S - 1 tiles ahead, across unit boundaries and the
// partials' reduction, and the registers hold only the tile being summed.
// Same warps, same superblocks per warp and the same memra_q4t_step in the
// same order as memra_mvq4<KW, U>, so the bits equal the engine's for equal KW.
#ifndef MVQ4S_CUH
#define MVQ4S_CUH

__device__ __forceinline__ void mvq4s_copy16(unsigned int dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void mvq4s_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void mvq4s_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// The lane's share of one tile's copy: 148 chunks of 16 bytes.
__device__ __forceinline__ void mvq4s_issue(unsigned int slot, const unsigned char* tile, int lane) {
#pragma unroll
    for (int c = lane; c < MEMRA_Q4T_BYTES / 16; c += 32) mvq4s_copy16(slot + 16 * c, tile + 16 * c);
}

// memra_q4t_load's fields, from a slot.
__device__ __forceinline__ memra_q4t_sb mvq4s_read(const unsigned char* slot, int lane) {
    memra_q4t_sb s;
#pragma unroll
    for (int k = 0; k < 4; k++) s.q[k] = reinterpret_cast<const uint4*>(slot + 512 * k)[lane];
    s.scg = reinterpret_cast<const uint4*>(slot + 2048)[lane >> 2];
    s.sch = reinterpret_cast<const uint4*>(slot + 2048)[(lane >> 2) + 8];
    s.dd = reinterpret_cast<const uint2*>(slot + 2304)[lane >> 2];
    return s;
}

// memra_q4t_step with the runs' sums spread over the quad (C4 = true): run j's
// two mma write B columns 2(j%4), 2(j%4)+1 (x' hi, lo), so after runs 0-3
// (dA) and 4-7 (dB) lane (g, c) holds rows g, g+8 of runs c and c+4 in its
// own D registers, and does the scale and min arithmetic for those two runs
// only: a quarter of memra_q4t_step's, where every lane of a quad repeated
// lane 4g's work on zero columns. acc[h] is this lane's share of row g + 8h;
// the quad's four shares are added once per unit (mvq4s).
__device__ __forceinline__ void mvq4s_step4(float acc[2], const memra_q4t_sb& s, int sb, const uint4* xsplit, const float* xsum,
                                            int lane) {
    const int lg = lane >> 2, lc = lane & 3;
    const int t = lg >> 1, hl = lg & 1; // this lane's B column 2t + hl carries runs j with j % 4 == t
    float dA[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dB[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int blk = sb * 8 + j;
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

// X_j, the sum of run j's x' (hi + lo) in column order, as memra_mvq4 sums it.
__device__ __forceinline__ void mvq4s_xsums(float* xsum, const uint4* xsplit, int cols) {
    for (int j = threadIdx.x; j < cols / 32; j += MEMRA_MV_THREADS) {
        float sum = 0.0f;
        for (int q = 0; q < 4; q++) {
            const uint4 h = xsplit[(j * 4 + q) * 2], l = xsplit[(j * 4 + q) * 2 + 1];
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
}

// The end of a unit: with quad (the step4 forms) the quad's shares of rows
// g, g + 8 added in lane order, then memra_mvq4's reduction over the KW warps.
__device__ __forceinline__ void mvq4s_put(float* y, float (*red)[16], float acc[2], int unit, int G, int g, int KW, int kw, int warp,
                                          int lane, int rows, int mode, float unscale, bool quad) {
    const int lg = lane >> 2;
#pragma unroll
    for (int h = 0; h < 2 && quad; h++) {
        const float s1 = acc[h] + __shfl_xor_sync(MEMRA_FULL_MASK, acc[h], 1);
        acc[h] = s1 + __shfl_xor_sync(MEMRA_FULL_MASK, s1, 2);
    }
    if ((lane & 3) == 0) red[warp][lg] = acc[0], red[warp][lg + 8] = acc[1];
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
    __syncthreads();
}

// Dynamic shared memory: memra_mvq4's (cols * 4 bytes of split x, cols/32
// run sums), then 8 warps x S slots of MEMRA_Q4T_BYTES.
template <int KW, int S, bool C4>
__device__ __forceinline__ void mvq4s(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                      const float* norm_w, int xnorm, float eps) {
    static_assert(S >= 2, "a ring needs a slot being summed and one in flight");
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

    // Producer cursor: unit pu, its pj-th superblock; one commit group per
    // item (empty past the last) so that wait_group counts items.
    int pu = blockIdx.x, pj = 0, pi = 0;
    auto issue = [&]() {
        if (per > 0 && pu < units) {
            const long long tile = min(pu * G + g, tiles - 1); // a group past the end re-reads the last tile, never stored
            mvq4s_issue(ring_s + (pi % S) * MEMRA_Q4T_BYTES, W + (tile * ns + kw + pj * KW) * MEMRA_Q4T_BYTES, lane);
            if (++pj == per) pj = 0, pu += gridDim.x;
        }
        mvq4s_commit();
        pi++;
    };
    // Weights are never written: the first S - 1 tiles leave before the wait.
#pragma unroll
    for (int k = 0; k < S - 1; k++) issue();
    memra_grid_wait();
    const float unscale = memra_stage_x(memra_xsplit, x, norm_w, cols, xnorm, eps);
    mvq4s_xsums(xsum, memra_xsplit, cols);
    __syncthreads();
    int ci = 0;
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        float acc[2] = {0.0f, 0.0f};
        for (int j = 0; j < per; j++, ci++) {
            mvq4s_wait<S - 2>(); // this lane's copies of item ci have landed
            __syncwarp();        // ... and every lane's; item ci - 1's slot is free
            issue();
            const memra_q4t_sb s = mvq4s_read(ring + (ci % S) * MEMRA_Q4T_BYTES, lane);
            if (C4)
                mvq4s_step4(acc, s, kw + j * KW, memra_xsplit, xsum, lane);
            else
                memra_q4t_step(acc, s, kw + j * KW, memra_xsplit, xsum, lane);
        }
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents();
        mvq4s_put(y, red, acc, unit, G, g, KW, kw, warp, lane, rows, mode, unscale, C4);
    }
    mvq4s_wait<0>();
}

// The engine's register form (memra_mvq4<KW, U>: one trip of U superblocks
// ahead) with mvq4s_step4: mmakr_q4_k<KW>_u<U>_b<B>.
template <int KW, int U>
__device__ __forceinline__ void mvq4r(float* y, const unsigned char* W, const float* x, int rows, int cols, int mode,
                                      const float* norm_w, int xnorm, float eps) {
    constexpr int G = (MEMRA_MV_THREADS / 32) / KW;
    extern __shared__ uint4 memra_xsplit[];
    __shared__ float red[MEMRA_MV_THREADS / 32][16];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int ns = cols >> 8;
    const int units = (rows + G * 16 - 1) / (G * 16);
    float* xsum = reinterpret_cast<float*>(memra_xsplit + cols / 4);
    memra_grid_wait();
    const float unscale = memra_stage_x(memra_xsplit, x, norm_w, cols, xnorm, eps);
    mvq4s_xsums(xsum, memra_xsplit, cols);
    __syncthreads();
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const long long tile = min(unit * G + g, (rows + 15) / 16 - 1);
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
            for (int u = 0; u < U; u++) mvq4s_step4(acc, cur[u], sb + KW * u, memra_xsplit, xsum, lane);
        }
        for (; sb < ns; sb += KW) mvq4s_step4(acc, memra_q4t_load(tp + (long long)sb * MEMRA_Q4T_BYTES, lane), sb, memra_xsplit, xsum, lane);
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents();
        mvq4s_put(y, red, acc, unit, G, g, KW, kw, warp, lane, rows, mode, unscale, true);
    }
}

// mmaks_q4_k<KW>_s<S>_b<B>: KW warps per tile row, S slots per warp, B the
// blocks per SM __launch_bounds__ asks for (0: none); mmakc_ the same with
// the runs spread over the quad (mvq4s_step4).
#define MMAKS_Q4(KW, S, B)                                                                                                   \
    extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, B) mmaks_q4_k##KW##_s##S##_b##B(                          \
        float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) { \
        mvq4s<KW, S, false>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);         \
    }
#define MMAKR_Q4(KW, U, B)                                                                                                   \
    extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, B) mmakr_q4_k##KW##_u##U##_b##B(                          \
        float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) { \
        mvq4r<KW, U>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);               \
    }
#define MMAKC_Q4(KW, S, B)                                                                                                   \
    extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, B) mmakc_q4_k##KW##_s##S##_b##B(                          \
        float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) { \
        mvq4s<KW, S, true>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);          \
    }

MMAKS_Q4(4, 3, 0)
MMAKS_Q4(4, 4, 0)
MMAKS_Q4(4, 6, 0)
MMAKS_Q4(8, 3, 0)
MMAKS_Q4(8, 4, 0)
MMAKS_Q4(2, 4, 0)
MMAKS_Q4(1, 4, 0)
MMAKS_Q4(4, 2, 0)
MMAKR_Q4(4, 1, 0)
MMAKR_Q4(8, 1, 0)
MMAKR_Q4(2, 1, 0)
MMAKR_Q4(1, 2, 0)
MMAKR_Q4(4, 2, 0)
MMAKR_Q4(8, 2, 0)
MMAKR_Q4(2, 2, 0)
MMAKC_Q4(4, 2, 0)
MMAKC_Q4(4, 3, 0)
MMAKC_Q4(4, 4, 0)
MMAKC_Q4(8, 3, 0)
MMAKC_Q4(8, 4, 0)
MMAKC_Q4(2, 4, 0)
MMAKC_Q4(1, 4, 0)
MMAKC_Q4(2, 2, 0)
MMAKC_Q4(1, 2, 0)

#endif // MVQ4S_CUH
