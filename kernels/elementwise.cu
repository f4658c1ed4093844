// elementwise.cu: the small element-wise ops of a decode step.
//
// Why it looks like this: each is one thread per element over a few thousand
// floats; they exist as separate kernels only where no neighbour absorbs them
// (matvec's `accumulate` already does the residual adds of the projections,
// attn_combine applies the attention output gate).
//   swiglu:      out[i] = silu(gate[i]) * up[i]      (FFN; out may alias gate or up)
//   add:         y[i] += x[i]
//   sigmoid_mul: x[r][i] *= sigmoid(gate[r*gate_stride + i]), x [rows][n] contiguous
#include "common.cuh"

// out, gate, up: [n] f32
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
swiglu(float* out, const float* gate, const float* up, int n) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = memra_silu(gate[i]) * up[i];
}

// y, x: [n] f32
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
add(float* y, const float* x, int n) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

// x: [rows][n] f32 (in place); gate: row r at gate + r*gate_stride, [n] f32
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
sigmoid_mul(float* x, const float* gate, int rows, int n, int gate_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * n) return;
    const int r = i / n, c = i % n;
    x[i] *= memra_sigmoid(gate[(long long)r * gate_stride + c]);
}
