// rope.cu: rotary position embedding, NEOX pairing, in place.
//
// Why it looks like this: decode rotates one token's q or k, [heads][head_dim]
// f32, so it is one block per head and one thread per rotated pair. Only the
// first n_rot dims rotate (qwen35: 64 of 256); pair i is (i, i + n_rot/2) and
// its angle is pos * base^(-2i/n_rot). The angle and its sine/cosine are
// computed in float64 and rounded to f32 once, so they are accurate even at
// large positions (pos * theta_0 = pos radians) and a CPU reference written
// with math.Pow / math.Sincos in float64 agrees to the last f32 bit or so;
// the cost (32 sincos per head per layer) is nothing. The position comes from
// `pos, dpos` (dpos ? *dpos : pos) like every position-dependent kernel.
//
//   x0' = x0*cos - x1*sin,  x1' = x0*sin + x1*cos   (f32, with the f32 cos/sin)
#include "common.cuh"

// x: [heads][head_dim] f32, rotated in place; n_rot even, n_rot <= head_dim
extern "C" __global__ void __launch_bounds__(MEMRA_ROPE_THREADS)
rope_neox(float* x, int heads, int head_dim, int n_rot, int pos, const int* dpos, float base) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int h = blockIdx.x;
    if (h >= heads) return;
    const int p = memra_load_or(pos, dpos);
    const int half = n_rot / 2;
    float* xh = x + (long long)h * head_dim;
    for (int i = threadIdx.x; i < half; i += MEMRA_ROPE_THREADS) {
        const double theta = (double)p * pow((double)base, -2.0 * (double)i / (double)n_rot);
        double sd, cd;
        sincos(theta, &sd, &cd);
        const float s = (float)sd;
        const float c = (float)cd;
        const float x0 = xh[i];
        const float x1 = xh[i + half];
        xh[i] = x0 * c - x1 * s;
        xh[i + half] = x0 * s + x1 * c;
    }
}
