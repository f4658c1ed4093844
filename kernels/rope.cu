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
//   x0' = x0*cos - x1*sin,  x1' = x0*sin + x1*cos   (f32, with the f32 cos/sin;
//   each product and sum rounded, never fused: memra_rope_pair)
#include "common.cuh"

// cos and sin of pair i's angle at position p, in float64, rounded to f32 once.
__device__ __forceinline__ void memra_rope_cs(int p, int i, int n_rot, float base, float* c, float* s) {
    const double theta = (double)p * pow((double)base, -2.0 * (double)i / (double)n_rot);
    double sd, cd;
    sincos(theta, &sd, &cd);
    *s = (float)sd;
    *c = (float)cd;
}

// The rotation of one pair with explicitly rounded products and sums (no
// FMA contraction), so every kernel that rotates (rope_neox, attn_prep)
// produces the same bits.
__device__ __forceinline__ void memra_rope_pair(float x0, float x1, float c, float s, float* y0, float* y1) {
    *y0 = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    *y1 = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
}

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
        float c, s;
        memra_rope_cs(p, i, n_rot, base, &c, &s);
        memra_rope_pair(xh[i], xh[i + half], c, s, &xh[i], &xh[i + half]);
    }
}
