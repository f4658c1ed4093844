// attn_prep.cu: one launch that prepares a token for attention.
//
// Why it looks like this: before attention, q and k each get a per-head
// RMSNorm and RoPE, and k and v go into the KV cache: five one-block-per-head
// kernels (rmsnorm q, rmsnorm k, rope q, rope k, kv_store) whose launches cost
// more than their work at decode. Here block b < n_head prepares q head b and
// block n_head + j prepares KV head j (norm, rope, then the cache store of k
// and v) with those kernels' own device functions, so the bits are theirs:
// the norm's 256-thread sum (memra_rms_inv), the rope angle and rotation
// (memra_rope_cs, memra_rope_pair: no FMA contraction), the f16 / e4m3
// codecs with a per-(head, token) scale (the amax is order-free). The
// position, the angles' cos and sin and the norm weights are taken before
// griddepcontrol.wait (memra_prep_before_wait): the step counter was written
// by the previous step's last kernel, and under PDL everything two kernels
// back has completed when a kernel starts (gdn.cu), so after the wait only
// the projections' q, k and v are read.
//
//   q[h]      = rope(rmsnorm(qg[h*q_stride .. +dh]) * q_norm)
//   cache k_j = store(rope(rmsnorm(kraw[j]) * k_norm)),  cache v_j = store(v[j])
#include "common.cuh"

// What a thread of a block can know before the wait: the position (the
// step counter, written by the previous step's last kernel), its pair's cos
// and sin (float64 pow and sincos, the longest arithmetic here), and its
// element of the block's norm weight. Thread i < dh owns element i, and pair
// i when i < n_rot/2 (dh <= 256 = the block).
struct memra_prep_early {
    int p;
    float c, s, w;
};

__device__ __forceinline__ memra_prep_early memra_prep_before_wait(int pos, const int* dpos, const float* q_norm, const float* k_norm,
                                                                   int n_head, int head_dim, int n_rot, float base) {
    memra_prep_early e;
    e.p = dpos ? __ldcg(dpos) : pos;
    e.c = 0.0f, e.s = 0.0f, e.w = 1.0f;
    const int i = threadIdx.x;
    if (i < n_rot / 2) memra_rope_cs(e.p, i, n_rot, base, &e.c, &e.s);
    const float* w = (int)blockIdx.x < n_head ? q_norm : k_norm;
    if (w && i < head_dim) e.w = __ldg(w + i);
    return e;
}

// The normalised, rotated head of xr into out (shared or global), as
// rmsnorm then rope_neox compute it (e: this thread's memra_prep_early; w
// null means no norm weight); 256 threads, every thread returns after a
// barrier so out is complete for the block.
__device__ __forceinline__ void memra_prep_head(float* out, const float* xr, const float* w, int dh, int n_rot, const memra_prep_early& e,
                                                float eps, float* xs, float* scratch) {
    const float inv = memra_rms_inv(xr, dh, eps, scratch);
    const int i = threadIdx.x;
    if (i < dh) {
        float v = xr[i] * inv;
        if (w) v *= e.w;
        xs[i] = v;
    }
    __syncthreads();
    const int half = n_rot / 2;
    if (i < half) {
        memra_rope_pair(xs[i], xs[i + half], e.c, e.s, &out[i], &out[i + half]);
    } else if (i >= n_rot && i < dh) {
        out[i] = xs[i];
    }
    __syncthreads();
}

#define MEMRA_PREP_MAX_DH 256

// What both kernels do first: block b < n_head prepares q head b and returns
// -1; block n_head + j prepares k head j into ks and returns the cache row
// j * capacity + p to store k and v[j] at, or -1 when the slot is outside
// the cache.
__device__ __forceinline__ long long memra_prep_block(float* q, const float* qg, int q_stride, const float* q_norm,
                                                      const float* kraw, const float* k_norm, int n_head, int n_kv,
                                                      int head_dim, int n_rot, int capacity, const memra_prep_early& e, float eps,
                                                      float* ks, float* xs, float* scratch) {
    const int b = blockIdx.x;
    if (b < n_head) {
        memra_prep_head(q + (long long)b * head_dim, qg + (long long)b * q_stride, q_norm, head_dim, n_rot, e, eps, xs, scratch);
        return -1;
    }
    const int j = b - n_head;
    if (j >= n_kv) return -1;
    memra_prep_head(ks, kraw + (long long)j * head_dim, k_norm, head_dim, n_rot, e, eps, xs, scratch);
    if (e.p < 0 || e.p >= capacity) return -1;
    return (long long)j * capacity + e.p;
}

// A step's preparation after its wait (both kernels below, and their chunk
// forms a token at a time; e is memra_prep_before_wait's): kc and vc are
// f16 bits, or e4m3 bytes with kscale and vscale, one f32 per (KV head,
// token), where FP8.
template <bool FP8>
__device__ __forceinline__ void memra_attn_prep(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw,
                                                const float* k_norm, const float* v, void* kc, void* vc, float* kscale, float* vscale,
                                                int n_head, int n_kv, int head_dim, int n_rot, int capacity, const memra_prep_early& e,
                                                float eps) {
    __shared__ float scratch[MEMRA_NORM_THREADS / 32];
    __shared__ float xs[MEMRA_PREP_MAX_DH];
    __shared__ float ks[MEMRA_PREP_MAX_DH];
    const long long row = memra_prep_block(q, qg, q_stride, q_norm, kraw, k_norm, n_head, n_kv, head_dim, n_rot, capacity, e, eps, ks,
                                           xs, scratch);
    if (row < 0) return;
    const float* vr = v + (long long)(blockIdx.x - n_head) * head_dim;
    if (FP8) {
        memra_kv_row_fp8<MEMRA_NORM_THREADS>(static_cast<unsigned char*>(kc), static_cast<unsigned char*>(vc), kscale, vscale, row, ks,
                                             vr, head_dim, scratch);
    } else {
        memra_kv_row_f16<MEMRA_NORM_THREADS>(static_cast<unsigned short*>(kc), static_cast<unsigned short*>(vc), row * head_dim, ks, vr,
                                             head_dim);
    }
}

// q: [n_head][dh] f32 out; qg: q heads at stride q_stride; kraw, v: [n_kv][dh] f32;
// q_norm, k_norm: [dh] f32; kc, vc: [n_kv][capacity][dh] f16 bits; dh <= 256
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
attn_prep_f16(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw, const float* k_norm,
              const float* v, unsigned short* kc, unsigned short* vc, int n_head, int n_kv, int head_dim, int n_rot,
              int capacity, int pos, const int* dpos, float base, float eps) {
    const memra_prep_early e = memra_prep_before_wait(pos, dpos, q_norm, k_norm, n_head, head_dim, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep<false>(q, qg, q_stride, q_norm, kraw, k_norm, v, kc, vc, nullptr, nullptr, n_head, n_kv, head_dim, n_rot, capacity,
                           e, eps);
}

// As attn_prep_f16 with an e4m3 cache: kc, vc [n_kv][capacity][dh] bytes and
// one f32 scale per (KV head, token) in kscale, vscale [n_kv][capacity].
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
attn_prep_fp8(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw, const float* k_norm,
              const float* v, unsigned char* kc, unsigned char* vc, float* kscale, float* vscale, int n_head, int n_kv,
              int head_dim, int n_rot, int capacity, int pos, const int* dpos, float base, float eps) {
    const memra_prep_early e = memra_prep_before_wait(pos, dpos, q_norm, k_norm, n_head, head_dim, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep<true>(q, qg, q_stride, q_norm, kraw, k_norm, v, kc, vc, kscale, vscale, n_head, n_kv, head_dim, n_rot, capacity,
                          e, eps);
}

// The chunk forms: attn_prep_f16 and attn_prep_fp8 for the n_tok tokens of
// a prompt chunk at positions pos, pos + 1, ..., token t's blocks grid.y =
// t's (the grid is n_tok tall). Token t's q starts t·q_tok floats after
// token 0's and its qg, kraw and v (the fused projection's output, one
// buffer) t·in_tok floats after; each token's bits, and the cache slot it
// fills, are the step kernel's at its position. The prompt's positions are
// the host's, never a device counter.
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
attn_prep_f16_chunk(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw, const float* k_norm,
                    const float* v, unsigned short* kc, unsigned short* vc, int n_head, int n_kv, int head_dim, int n_rot,
                    int capacity, int pos, float base, float eps, int n_tok, int q_tok, int in_tok) {
    const long long t = blockIdx.y;
    const memra_prep_early e = memra_prep_before_wait(pos + (int)t, nullptr, q_norm, k_norm, n_head, head_dim, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep<false>(q + t * q_tok, qg + t * in_tok, q_stride, q_norm, kraw + t * in_tok, k_norm, v + t * in_tok, kc, vc, nullptr,
                           nullptr, n_head, n_kv, head_dim, n_rot, capacity, e, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
attn_prep_fp8_chunk(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw, const float* k_norm,
                    const float* v, unsigned char* kc, unsigned char* vc, float* kscale, float* vscale, int n_head, int n_kv,
                    int head_dim, int n_rot, int capacity, int pos, float base, float eps, int n_tok, int q_tok, int in_tok) {
    const long long t = blockIdx.y;
    const memra_prep_early e = memra_prep_before_wait(pos + (int)t, nullptr, q_norm, k_norm, n_head, head_dim, n_rot, base);
    memra_grid_wait();
    memra_grid_launch_dependents();
    memra_attn_prep<true>(q + t * q_tok, qg + t * in_tok, q_stride, q_norm, kraw + t * in_tok, k_norm, v + t * in_tok, kc, vc, kscale,
                          vscale, n_head, n_kv, head_dim, n_rot, capacity, e, eps);
}
