// mmk6.cuh: step 31's form of Q6_K on the tensor cores (docs/perf.md step
// 31, run62), kept as a record: measured correct but no faster than the
// CUDA-core kernel the engine ran then (mvexp.cu mvk_q6_cuda). The engine's
// kernel (kernels/matvec_q6k.cu, step 39) has the same tiles (its
// memra_nib_afrag, memra_word and memra_q6t_sb, which this file uses, so
// mvexp.cu includes matvec_q6k.cu first) and had these two A operands a
// sub-block until step 108 made them one; it spreads the scales over a
// quad and streams the tiles through mvring.cuh's ring; here every lane of
// a quad multiplies all 16 scales (memra_q6t_step_all) and a warp holds U
// superblocks ahead in registers (memra_mvq6). Geometry as matvec_q4k.cu.

// 16 * the 2-bit pair K of w (bits 2K and 16 + 2K): (1024 + 4^K h) * 16/4^K - 16384/4^K.
template <int K>
__device__ __forceinline__ unsigned int memra_q6t_top(unsigned int w) {
    constexpr unsigned int scale[4] = {0x4C004C00u, 0x44004400u, 0x3C003C00u, 0x34003400u}; // 16, 4, 1, 1/4
    constexpr unsigned int off[4] = {0xF400F400u, 0xEC00EC00u, 0xE400E400u, 0xDC00DC00u};   // -16384, -4096, -1024, -256
    return memra_hfma2(memra_or1024(w, 0x00030003u << (2 * K)), scale[K], off[K]);
}

// The lane's share of one superblock tile, loaded from global memory.
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

// acc[h] (rows g + 8h of the tile) += superblock sb's d * sum_j sc_j * D_j,
// B columns 0 (x' hi) and 1 (lo) for every sub-block, so lane (g, 0) holds
// the rows' sums.
__device__ __forceinline__ void memra_q6t_step_all(float acc[2], const memra_q6t_sb& s, int sb, const uint4* xsplit, int lane) {
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
        unsigned int a[4];
        memra_nib_afrag<32>(nw, a);
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
            for (int u = 0; u < U; u++) memra_q6t_step_all(acc, cur[u], sb + KW * u, memra_xsplit, lane);
        }
        for (; sb < ns; sb += KW) memra_q6t_step_all(acc, memra_q6t_load(tp + (long long)sb * MEMRA_Q6T_BYTES, lane), sb, memra_xsplit, lane);
        if (unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
        // Lanes 4g hold rows g and g+8 (the quad's other lanes summed zero
        // columns, so memra_tile_put's quad sum adds exact zeros).
        memra_tile_put(y, red, acc, unit, G, KW, lane, rows, mode, unscale);
    }
}
