// matvec_mix.cu: one launch for two matrices of different K-quant types
// that read the same input, as llama-quantize's mixed files (Q4_K_M,
// Q5_K_M) give a layer's input projections: a Gated DeltaNet layer's
// attn_qkv in Q6_K beside its gate, beta and alpha in Q4_K, an attention
// layer's attn_v in Q6_K beside q and k. Each would otherwise be two
// launches, 16 of the 9B Q4_K_M's 244 graph nodes a token and 12 of the
// 0.8B's 184, and one node fewer saved 4.2 us a token on the 9B and
// 2.3-2.7 on the 0.8B (docs/perf.md step 113, on an H100).
//
// Why it is shaped so: the grid is split, blocks [0, blocks_a) run matrix
// A's kernel as if it were launched alone on blocks_a blocks, the others
// B's on the rest. Each part keeps its usual kernel's geometry (KW) and
// steps, so its sums and bits are that kernel's (the ring does not enter
// the sums), and the two parts' units overlap in one wave instead of
// following each other. A is always the Q6_K part, whichever comes first
// in the layer: each part has its own output.
#include "common.cuh"
#include "mvring.cuh"

template <int KWA, int SA, class TA, int KWB, int SB, class TB>
__device__ __forceinline__ void memra_mvt_mix(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b,
                                              const float* x, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    const unsigned int b = blockIdx.x;
    if (b < (unsigned int)blocks_a)
        memra_mvt<KWA, SA, TA>(ya, reinterpret_cast<const unsigned char*>(Wa), x, rows_a, cols, mode, norm_w, xnorm, eps, b, blocks_a);
    else
        memra_mvt<KWB, SB, TB>(yb, reinterpret_cast<const unsigned char*>(Wb), x, rows_b, cols, mode, norm_w, xnorm, eps, b - blocks_a,
                               gridDim.x - blocks_a);
}

// ya: [rows_a] f32, Wa: [rows_a][cols] Q6_K tiled; yb: [rows_b] f32, Wb:
// [rows_b][cols] Q4_K or Q5_K tiled; x: [cols] f32; norm_w: [cols] f32
// (read when xnorm != 0); mode 0 or 1 (a pair's SwiGLU is never mixed).
// Each part plain (KW4) or wide (KW8) as its type's kernels, with 2 ring
// slots (Q4_K's own kernels take 3 and 4): at most 70,656 bytes of shared
// memory a block at 4,096 columns, so that three blocks fit an SM, and the
// minimum of three keeps the registers to that (70-71 at sm_90, none
// spilled, where Q6_K's own take 79).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_q4_k(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                     int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<4, 2, memra_q6t, 4, 2, memra_q4t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_q4_k_wide(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                          int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<4, 2, memra_q6t, 8, 2, memra_q4t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_wide_q4_k(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                          int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<8, 2, memra_q6t, 4, 2, memra_q4t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_wide_q4_k_wide(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                               int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<8, 2, memra_q6t, 8, 2, memra_q4t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_q5_k(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                     int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<4, 2, memra_q6t, 4, 2, memra_q5t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_q5_k_wide(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                          int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<4, 2, memra_q6t, 8, 2, memra_q5t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_wide_q5_k(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                          int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<8, 2, memra_q6t, 4, 2, memra_q5t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_mix_q6_k_wide_q5_k_wide(float* ya, const void* Wa, int rows_a, int blocks_a, float* yb, const void* Wb, int rows_b, const float* x,
                               int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt_mix<8, 2, memra_q6t, 8, 2, memra_q5t>(ya, Wa, rows_a, blocks_a, yb, Wb, rows_b, x, cols, mode, norm_w, xnorm, eps);
}
