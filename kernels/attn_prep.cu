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
// codecs with a per-(head, token) scale (the amax is order-free).
//
//   q[h]      = rope(rmsnorm(qg[h*q_stride .. +dh]) * q_norm)
//   cache k_j = store(rope(rmsnorm(kraw[j]) * k_norm)),  cache v_j = store(v[j])
#include "common.cuh"

// The normalised, rotated head of xr into out (shared or global), as
// rmsnorm then rope_neox compute it; 256 threads, every thread returns after
// a barrier so out is complete for the block.
__device__ __forceinline__ void memra_prep_head(float* out, const float* xr, const float* w, int dh, int n_rot, int p,
                                                float base, float eps, float* xs, float* scratch) {
    const float inv = memra_rms_inv(xr, dh, eps, scratch);
    for (int i = threadIdx.x; i < dh; i += MEMRA_NORM_THREADS) {
        float v = xr[i] * inv;
        if (w) v *= w[i];
        xs[i] = v;
    }
    __syncthreads();
    const int half = n_rot / 2;
    for (int i = threadIdx.x; i < dh; i += MEMRA_NORM_THREADS) {
        if (i < half) {
            float c, s;
            memra_rope_cs(p, i, n_rot, base, &c, &s);
            memra_rope_pair(xs[i], xs[i + half], c, s, &out[i], &out[i + half]);
        } else if (i >= n_rot) {
            out[i] = xs[i];
        }
    }
    __syncthreads();
}

#define MEMRA_PREP_MAX_DH 256

// q: [n_head][dh] f32 out; qg: q heads at stride q_stride; kraw, v: [n_kv][dh] f32;
// q_norm, k_norm: [dh] f32; kc, vc: [n_kv][capacity][dh] f16 bits; dh <= 256
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
attn_prep_f16(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw, const float* k_norm,
              const float* v, unsigned short* kc, unsigned short* vc, int n_head, int n_kv, int head_dim, int n_rot,
              int capacity, int pos, const int* dpos, float base, float eps) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ float scratch[MEMRA_NORM_THREADS / 32];
    __shared__ float xs[MEMRA_PREP_MAX_DH];
    __shared__ float ks[MEMRA_PREP_MAX_DH];
    const int b = blockIdx.x;
    const int p = memra_load_or(pos, dpos);
    if (b < n_head) {
        memra_prep_head(q + (long long)b * head_dim, qg + (long long)b * q_stride, q_norm, head_dim, n_rot, p, base, eps, xs, scratch);
        return;
    }
    const int j = b - n_head;
    if (j >= n_kv) return;
    memra_prep_head(ks, kraw + (long long)j * head_dim, k_norm, head_dim, n_rot, p, base, eps, xs, scratch);
    if (p < 0 || p >= capacity) return;
    const long long dst = ((long long)j * capacity + p) * head_dim;
    const float* vr = v + (long long)j * head_dim;
    for (int i = threadIdx.x; i < head_dim; i += MEMRA_NORM_THREADS) {
        kc[dst + i] = memra_f32_to_f16(ks[i]);
        vc[dst + i] = memra_f32_to_f16(vr[i]);
    }
}

// As attn_prep_f16 with an e4m3 cache: kc, vc [n_kv][capacity][dh] bytes and
// one f32 scale per (KV head, token) in kscale, vscale [n_kv][capacity].
extern "C" __global__ void __launch_bounds__(MEMRA_NORM_THREADS)
attn_prep_fp8(float* q, const float* qg, int q_stride, const float* q_norm, const float* kraw, const float* k_norm,
              const float* v, unsigned char* kc, unsigned char* vc, float* kscale, float* vscale, int n_head, int n_kv,
              int head_dim, int n_rot, int capacity, int pos, const int* dpos, float base, float eps) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ float scratch[MEMRA_NORM_THREADS / 32];
    __shared__ float xs[MEMRA_PREP_MAX_DH];
    __shared__ float ks[MEMRA_PREP_MAX_DH];
    const int b = blockIdx.x;
    const int p = memra_load_or(pos, dpos);
    if (b < n_head) {
        memra_prep_head(q + (long long)b * head_dim, qg + (long long)b * q_stride, q_norm, head_dim, n_rot, p, base, eps, xs, scratch);
        return;
    }
    const int j = b - n_head;
    if (j >= n_kv) return;
    memra_prep_head(ks, kraw + (long long)j * head_dim, k_norm, head_dim, n_rot, p, base, eps, xs, scratch);
    if (p < 0 || p >= capacity) return;
    const long long dst = ((long long)j * capacity + p) * head_dim;
    const float* vr = v + (long long)j * head_dim;
    float ka = 0.0f, va = 0.0f;
    for (int i = threadIdx.x; i < head_dim; i += MEMRA_NORM_THREADS) {
        ka = fmaxf(ka, fabsf(ks[i]));
        va = fmaxf(va, fabsf(vr[i]));
    }
    ka = memra_block_max<MEMRA_NORM_THREADS>(ka, scratch);
    va = memra_block_max<MEMRA_NORM_THREADS>(va, scratch);
    const float kinv = ka > 0.0f ? 448.0f / ka : 0.0f;
    const float vinv = va > 0.0f ? 448.0f / va : 0.0f;
    for (int i = threadIdx.x; i < head_dim; i += MEMRA_NORM_THREADS) {
        kc[dst + i] = (unsigned char)memra_f32_to_e4m3(ks[i] * kinv);
        vc[dst + i] = (unsigned char)memra_f32_to_e4m3(vr[i] * vinv);
    }
    if (threadIdx.x == 0) {
        kscale[(long long)j * capacity + p] = ka / 448.0f;
        vscale[(long long)j * capacity + p] = va / 448.0f;
    }
}
