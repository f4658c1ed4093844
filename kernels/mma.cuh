// mma.cuh: what a matvec on the tensor cores needs besides its weights: the
// m16n8k16 product and the input vector staged as f16 pairs.
//
// Why it looks like this: at n_tokens = 1 a matvec has one input column, and
// mma.m16n8k16 multiplies 16 rows by 16 columns of it per instruction, with
// the products summed in f32. Weight codes that are small integers are exact
// in f16; x is not, so every block scales x' = x * 2^k (max |x'| in
// [2^14, 2^15), inside f16's range) and splits it into hi = f16(x') and
// lo = f16(x' - hi): 22 significant bits, carried in B's columns 0 and 1 (the
// other six columns are zero), so hi + lo is x' to within 2^-22 |x'| (f16
// rounds to 2^-11 twice; an lo below f16's normal range adds at most 2^-25
// 2^-k absolutely) and D[r][0] + D[r][1] = sum_k q[r][k] * x'[k] to that
// accuracy plus the f32 accumulation's. Products of an f16 integer and an f16 are exact
// in the f32 accumulate.
#ifndef MEMRA_MMA_CUH
#define MEMRA_MMA_CUH
#include "common.cuh"
#include <cuda_fp16.h>

// d += A B for one warp: a the lane's four A registers (f16 pairs), b0 b1 its
// two B registers (mma.m16n8k16 fragment order).
__device__ __forceinline__ void memra_mma_f16(float d[4], const unsigned int a[4], unsigned int b0, unsigned int b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The hi (lo = false) or lo (lo = true) halves of the pair (a, b).
__device__ __forceinline__ unsigned int memra_split_pair(float a, float b, bool lo) {
    __half2 h = __floats2half2_rn(a, b);
    if (lo) h = __floats2half2_rn(a - __low2float(h), b - __high2float(h));
    return *reinterpret_cast<unsigned int*>(&h);
}

// The block's prologue: x' = (xnorm ? x / sqrt(mean(x^2) + eps) * norm_w : x)
// * 2^k, split into xsplit[(col/8)*2 + n] (n = 0 hi, 1 lo: the 8 halves of
// columns 8q..8q+7); returns 2^-k. The sum of squares is memra_mv_input's
// (thread-strided partials, xor butterfly, warps in order), so every block,
// and the eager and graph paths, see the same x'. x and norm_w 16-byte
// aligned, cols % 8 == 0.
__device__ __forceinline__ float memra_stage_x(uint4* xsplit, const float* x, const float* norm_w, int cols, int xnorm, float eps) {
    __shared__ float red[2][MEMRA_MV_THREADS / 32];
    float ss = 0.0f, mx = 0.0f;
    for (int i = threadIdx.x; i < cols; i += MEMRA_MV_THREADS) {
        const float v = x[i];
        ss += v * v;
        mx = fmaxf(mx, fabsf(xnorm ? v * norm_w[i] : v));
    }
    ss = memra_warp_sum(ss);
    mx = memra_warp_max(mx);
    if ((threadIdx.x & 31) == 0) red[0][threadIdx.x >> 5] = ss, red[1][threadIdx.x >> 5] = mx;
    __syncthreads();
    float tot = 0.0f, amax = 0.0f;
#pragma unroll
    for (int w = 0; w < MEMRA_MV_THREADS / 32; w++) tot += red[0][w], amax = fmaxf(amax, red[1][w]);
    const float inv = xnorm ? 1.0f / sqrtf(tot / (float)cols + eps) : 1.0f;
    amax *= inv; // max |x'| before the power of two (rounding aside: the 2^15 bound has room)
    int k = 0;
    if (amax > 0.0f && amax <= 3.0e38f) {
        const int ex = ((__float_as_int(amax) >> 23) & 255) - 127;
        k = min(126, max(-126, 14 - ex));
    }
    const float scale = __int_as_float((127 + k) << 23);
    for (int q = threadIdx.x; q < cols / 8 * 2; q += MEMRA_MV_THREADS) {
        const int c0 = (q >> 1) * 8;
        float v[8];
        const float4 x0 = reinterpret_cast<const float4*>(x + c0)[0], x1 = reinterpret_cast<const float4*>(x + c0)[1];
        v[0] = x0.x, v[1] = x0.y, v[2] = x0.z, v[3] = x0.w, v[4] = x1.x, v[5] = x1.y, v[6] = x1.z, v[7] = x1.w;
        if (xnorm) {
            const float4 n0 = reinterpret_cast<const float4*>(norm_w + c0)[0], n1 = reinterpret_cast<const float4*>(norm_w + c0)[1];
            const float nw[8] = {n0.x, n0.y, n0.z, n0.w, n1.x, n1.y, n1.z, n1.w};
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = v[j] * inv * nw[j];
        }
#pragma unroll
        for (int j = 0; j < 8; j++) v[j] *= scale;
        const bool lo = q & 1;
        xsplit[q] = make_uint4(memra_split_pair(v[0], v[1], lo), memra_split_pair(v[2], v[3], lo), memra_split_pair(v[4], v[5], lo),
                               memra_split_pair(v[6], v[7], lo));
    }
    __syncthreads();
    return __int_as_float((127 - k) << 23);
}

#endif // MEMRA_MMA_CUH
