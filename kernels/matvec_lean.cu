// matvec_lean.cu: the K-quant tensor-core matvecs with a ring of one slot a
// warp, for matrices whose rows are too long for their usual kernel's
// shared memory on the GPU at hand.
//
// Why it exists: a tensor-core matvec stages the block's x (cols * 4 bytes
// as f16 hi + lo, cols / 8 of run sums) beside 8 warps' rings of tiles, and
// sm_86 and sm_89 allow a block 99 KiB (101,376 bytes) of shared memory.
// At 12,288 columns (the 9B down projection) Q6_K's wide kernel needs
// 104,448 bytes (its static arrays aside); at 17,408 (the 27B's) every
// K-quant kernel needs more. Each slot dropped saves 8 warps' tiles
// (2,368-3,360 bytes each): with one, 12,288 columns take 69,632-77,568
// bytes, and rows of up to 17,920 (Q6_K) to 19,712 (Q4_K) columns fit (the
// 27B's 17,408: 90,752-98,688 bytes).
//
// What it costs: the lanes read their share of a tile into registers before
// the next tile is copied into the slot, so a warp has one tile in flight
// while it sums, as with a 2-slot ring; but the held share costs registers
// (74-90 at sm_90, against 64-74) and takes the shared-memory reads out from
// among the mma work. The same read in the usual kernels was 5-13% slower
// on the 9B K-quants on the H200 (docs/perf.md step 76). gpu.Load picks
// these kernels only where no form with more slots fits.
//
// The sums: the same geometry (KW) and the same steps as matvec_q4k.cu's and
// matvec_q6k.cu's kernels, so the same order and the same bits (the ring
// does not enter the sums); the prompt's batch kernels repeat them as they
// repeat those.
#include "common.cuh"
#include "mvring.cuh"

// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols] tiled (kquant.cuh);
// x: [cols] f32; norm_w: [cols] f32 (read when xnorm != 0). KW4 (plain)
// and KW8 (wide) as matvec_q4_k and matvec_q4_k_wide.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_k_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                      float eps) {
    memra_mvt<8, 1, memra_q4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// Q5_K's keep the minimum of one block an SM that matvec_q5_k's need under
// ptxas 11.8 (matvec_q4k.cu).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q5_k_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q5_k_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                      float eps) {
    memra_mvt<8, 1, memra_q5t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// Q6_K's as its usual kernels' (matvec_q6k.cu): without the minimum the
// lean ones spilled 4 bytes on sm_80-89.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q6_k_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_q6_k_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                      float eps) {
    memra_mvt<8, 1, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q3_k_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_q3t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q3_k_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                      float eps) {
    memra_mvt<8, 1, memra_q3t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

// The IQ4 forms keep their usual kernels' minimum of one block an SM
// (matvec_q6k.cu): without it ptxas 11.8 held them to 80 registers and
// rebuilt the codebook words in the loop (IQ4_XS: 471 instructions an item
// against 411).
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_xs_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_iq4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_xs_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                        float eps) {
    memra_mvt<8, 1, memra_iq4t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_0_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_q40t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q4_0_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                        float eps) {
    memra_mvt<8, 1, memra_q40t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_nl_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_iq4nlt>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_iq4_nl_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                        float eps) {
    memra_mvt<8, 1, memra_iq4nlt>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}
