// rmsnorm.cu: RMS normalisation of independent rows, plain and gated.
//
// Why it looks like this: one block per row with a fixed 256-thread tree
// (memra_block_sum), so the sum of squares is added in the same order on
// every call: no atomics, bit-reproducible. Row strides let one kernel serve
// the layer norms (rows = 1), the per-head q/k norms (rows = heads, w shared
// by all heads) and reading q straight out of the interleaved q|gate
// projection of qwen35 (x_stride = 2*Dh, out_stride = Dh), so no deinterleave
// copy is needed. Each thread writes only the elements it read, so out == x
// (in place) is safe.
//
//   rmsnorm:        out[r][i] = x[r][i] * (1/sqrt(mean_i(x[r]^2) + eps)) * w[i]
//   rmsnorm_gated:  out[r][i] = x[r][i] * (1/sqrt(mean_i(x[r]^2) + eps)) * w[i] * silu(z[r][i])
// (the Gated DeltaNet output norm: rows = H_v, n = 128, w = ssm_norm).
// The inverse is 1.0f / sqrtf(.) (IEEE sqrt and divide), not rsqrtf.
#include "common.cuh"

__device__ __forceinline__ float memra_rms_inv(const float* xr, int n, float eps, float* scratch) {
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += MEMRA_NORM_THREADS) {
        const float v = xr[i];
        ss += v * v;
    }
    ss = memra_block_sum<MEMRA_NORM_THREADS>(ss, scratch);
    return 1.0f / sqrtf(ss / (float)n + eps);
}

// out: [rows] rows of out_stride f32; x: [rows] rows of x_stride f32; w: [n] f32 or null (= 1)
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
rmsnorm(float* out, const float* x, const float* w, int rows, int n, int x_stride, int out_stride, float eps) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ float scratch[MEMRA_NORM_THREADS / 32];
    const int r = blockIdx.x;
    if (r >= rows) return;
    const float* xr = x + (long long)r * x_stride;
    float* orow = out + (long long)r * out_stride;
    const float inv = memra_rms_inv(xr, n, eps, scratch);
    for (int i = threadIdx.x; i < n; i += MEMRA_NORM_THREADS) {
        float v = xr[i] * inv;
        if (w) v *= w[i];
        orow[i] = v;
    }
}

// out, x, z: [rows][n] f32 (contiguous); w: [n] f32 shared by rows.
// A thread's first element of w (a weight) and silu(z) (the gate, written by
// the input projection three kernels back, five when its parts launch apart:
// under PDL everything two kernels back has completed when a kernel starts,
// gdn.cu) are ready before the wait, so after it only x (the delta rule's
// output) is read. The products are taken in the same order as before, so
// the bits are the same. Both kernels run these two helpers around their
// wait, on blockIdx.x's row of their token's out, x and z.
struct memra_gated_early {
    float w0, s0;
};

__device__ __forceinline__ memra_gated_early memra_gated_before_wait(const float* w, const float* z, int rows, int n) {
    const int r = blockIdx.x;
    const bool first = r < rows && (int)threadIdx.x < n;
    memra_gated_early e;
    e.w0 = first ? __ldg(w + threadIdx.x) : 0.0f;
    e.s0 = first ? memra_silu(__ldcg(z + (long long)r * n + threadIdx.x)) : 0.0f;
    return e;
}

__device__ __forceinline__ void memra_gated_row(float* out, const float* x, const float* w, const float* z, int rows, int n, float eps,
                                                const memra_gated_early& e) {
    __shared__ float scratch[MEMRA_NORM_THREADS / 32];
    const int r = blockIdx.x;
    const long long off = (long long)r * n;
    if (r >= rows) return;
    const float inv = memra_rms_inv(x + off, n, eps, scratch);
    for (int i = threadIdx.x; i < n; i += MEMRA_NORM_THREADS) {
        const bool own = i == (int)threadIdx.x;
        out[off + i] = x[off + i] * inv * (own ? e.w0 : w[i]) * (own ? e.s0 : memra_silu(z[off + i]));
    }
}

extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
rmsnorm_gated(float* out, const float* x, const float* w, const float* z, int rows, int n, float eps) {
    const memra_gated_early e = memra_gated_before_wait(w, z, rows, n);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_gated_row(out, x, w, z, rows, n, eps, e);
}

// rmsnorm_gated for the n_tok tokens of a prompt chunk, token t's rows
// grid.y = t's (the grid is n_tok tall): its out, x and z start
// t·out_stride, t·x_stride and t·z_stride floats after token 0's, and its
// bits are rmsnorm_gated's.
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
rmsnorm_gated_chunk(float* out, const float* x, const float* w, const float* z, int rows, int n, float eps, int n_tok,
                    int out_stride, int x_stride, int z_stride) {
    const long long t = blockIdx.y;
    const memra_gated_early e = memra_gated_before_wait(w, z + t * z_stride, rows, n);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_gated_row(out + t * out_stride, x + t * x_stride, w, z + t * z_stride, rows, n, eps, e);
}
