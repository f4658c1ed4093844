// matvec_lean.cu: the K-quant tensor-core matvecs with a ring of one slot a
// warp, for matrices whose rows are too long for their usual kernel's
// shared memory on the GPU at hand.
//
// Why it exists: a tensor-core matvec stages the block's x (cols * 4 bytes
// as f16 hi + lo, cols / 8 of run sums) beside 8 warps' rings of tiles. At
// 12,288 columns (the 9B down projection) Q6_K's 2-slot kernels need
// 104,448 bytes and Q4_K's 3-slot plain one 107,520: more than the 99 KiB
// (101,376 bytes) a block may take on sm_86 and sm_89, where those files
// would not load. Each slot dropped saves 8 warps' tiles (2,368-3,360
// bytes each): with one, 12,288 columns take 69,632-77,568 bytes, and rows
// of up to 17,920 (Q6_K) to 19,712 (Q4_K) columns fit (the 27B's 17,408:
// 90,752-98,688 bytes).
//
// What it costs: with one slot a warp's next tile is copied while it sums
// the last one from registers (mvring.cuh's S = 1 path), so it has one tile
// in flight, where the usual rings keep S - 1 in flight beside the sums.
// gpu.Load picks these kernels only where no form with more slots fits.
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

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q6_k_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mvt<4, 1, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q6_k_wide_lean(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm,
                      float eps) {
    memra_mvt<8, 1, memra_q6t>(y, reinterpret_cast<const unsigned char*>(W), x, rows, cols, mode, norm_w, xnorm, eps);
}
