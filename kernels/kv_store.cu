// kv_store.cu: append one token's k and v to the KV cache.
//
// Why it looks like this: the cache is [n_kv][capacity][head_dim], each KV
// head's keys contiguous over tokens, so the attention kernel of one head
// streams one contiguous region; the slot is the token's position, read from
// `pos, dpos` (dpos ? *dpos : pos) so the device-counter path writes without
// a host value. One block per KV head. A slot outside [0, capacity) writes
// nothing (the host checks capacity; this only keeps memory safe).
//
// f16: round to nearest even (cvt.rn), overflow -> inf.
// fp8 e4m3 (OCP E4M3FN, max 448): one f32 scale per (kv head, token) vector,
// separately for k and v, stored in parallel arrays [n_kv][capacity]:
//   amax  = max_i |x_i|                      (exact, order-free)
//   scale = amax / 448                       (stored; 0 when amax == 0)
//   inv   = amax > 0 ? 448 / amax : 0        (f32 IEEE divide)
//   code  = e4m3_rne_satfinite(x_i * inv)    (memra_f32_to_e4m3)
//   x_i  ~= e4m3_decode(code) * scale        (what attention reads)
// Every step is a correctly rounded f32 operation, so a CPU reference that
// does the same produces the same bytes.
#include "common.cuh"

// One KV head's k and v rows kr, vr [head_dim] f32 into the f16 cache at
// element offset dst, by the block's NT threads.
template <int NT>
__device__ __forceinline__ void memra_kv_row_f16(unsigned short* kc, unsigned short* vc, long long dst, const float* kr,
                                                 const float* vr, int head_dim) {
    for (int i = threadIdx.x; i < head_dim; i += NT) {
        kc[dst + i] = memra_f32_to_f16(kr[i]);
        vc[dst + i] = memra_f32_to_f16(vr[i]);
    }
}

// One KV head's k and v rows into the e4m3 cache at row `row` (= head *
// capacity + slot) with their scales; NT threads, scratch NT/32 floats.
template <int NT>
__device__ __forceinline__ void memra_kv_row_fp8(unsigned char* kc, unsigned char* vc, float* ks, float* vs, long long row,
                                                 const float* kr, const float* vr, int head_dim, float* scratch) {
    const long long dst = row * head_dim;
    float ka = 0.0f, va = 0.0f;
    for (int i = threadIdx.x; i < head_dim; i += NT) {
        ka = fmaxf(ka, fabsf(kr[i]));
        va = fmaxf(va, fabsf(vr[i]));
    }
    ka = memra_block_max<NT>(ka, scratch);
    va = memra_block_max<NT>(va, scratch);
    const float kinv = ka > 0.0f ? 448.0f / ka : 0.0f;
    const float vinv = va > 0.0f ? 448.0f / va : 0.0f;
    for (int i = threadIdx.x; i < head_dim; i += NT) {
        kc[dst + i] = (unsigned char)memra_f32_to_e4m3(kr[i] * kinv);
        vc[dst + i] = (unsigned char)memra_f32_to_e4m3(vr[i] * vinv);
    }
    if (threadIdx.x == 0) {
        ks[row] = ka / 448.0f;
        vs[row] = va / 448.0f;
    }
}

// kc, vc: [n_kv][capacity][head_dim] f16 bits; k, v: [n_kv][head_dim] f32
extern "C" __global__ void __launch_bounds__(MEMRA_KV_THREADS)
kv_store_f16(unsigned short* kc, unsigned short* vc, const float* k, const float* v,
             int n_kv, int head_dim, int capacity, int pos, const int* dpos) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int g = blockIdx.x;
    const int p = memra_load_or(pos, dpos);
    if (g >= n_kv || p < 0 || p >= capacity) return;
    const long long src = (long long)g * head_dim;
    memra_kv_row_f16<MEMRA_KV_THREADS>(kc, vc, ((long long)g * capacity + p) * head_dim, k + src, v + src, head_dim);
}

// kc, vc: [n_kv][capacity][head_dim] e4m3 bytes; ks, vs: [n_kv][capacity] f32 scales;
// k, v: [n_kv][head_dim] f32
extern "C" __global__ void __launch_bounds__(MEMRA_KV_THREADS)
kv_store_fp8(unsigned char* kc, unsigned char* vc, float* ks, float* vs, const float* k, const float* v,
             int n_kv, int head_dim, int capacity, int pos, const int* dpos) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ float scratch[MEMRA_KV_THREADS / 32];
    const int g = blockIdx.x;
    const int p = memra_load_or(pos, dpos);
    if (g >= n_kv || p < 0 || p >= capacity) return;
    const long long src = (long long)g * head_dim;
    memra_kv_row_fp8<MEMRA_KV_THREADS>(kc, vc, ks, vs, (long long)g * capacity + p, k + src, v + src, head_dim, scratch);
}
