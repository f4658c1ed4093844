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

// d += A B for one warp, mma.m16n8k8: a the lane's two A registers, b its
// one B register (f16 pairs, the fragment order of the PTX ISA).
__device__ __forceinline__ void memra_mma_f16_k8(float d[4], unsigned int a0, unsigned int a1, unsigned int b) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(b));
}

// The block's prologue: x' = (xnorm ? x / sqrt(mean(x^2) + eps) * norm_w :
// x) * 2^k, split into xsplit[(col/8)*2 + n] (n = 0 hi, 1 lo: the 8 halves
// of columns 8q..8q+7), and, when xsum is not null, xsum[j] = the sum of
// 32-column run j's x' as the mma sees it (hi + lo), formed as the split is
// written: thread t owns 8-column groups t, t + 256, ..., so a run is 4
// groups on 4 neighbouring lanes, added by two shuffles. Returns 2^-k. Every
// block adds in the same fixed order, so all blocks (and eager and graph
// runs) see the same x'. x and norm_w 16-byte aligned, cols % 8 == 0, and
// with xsum cols % 256 == 0 (the loops over groups are then warp-uniform).
__device__ __forceinline__ float memra_stage_x(uint4* xsplit, float* xsum, const float* x, const float* norm_w, int cols, int xnorm,
                                                 float eps) {
    __shared__ float red[2][MEMRA_MV_THREADS / 32];
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* n4 = reinterpret_cast<const float4*>(norm_w);
    float ss = 0.0f, mx = 0.0f;
    for (int c = threadIdx.x; c < cols / 8; c += MEMRA_MV_THREADS) {
        const float4 a = x4[2 * c], b = x4[2 * c + 1];
        float4 na = make_float4(1.0f, 1.0f, 1.0f, 1.0f), nb = na;
        if (xnorm) na = n4[2 * c], nb = n4[2 * c + 1];
        ss += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w + b.x * b.x + b.y * b.y + b.z * b.z + b.w * b.w;
        mx = fmaxf(mx, fmaxf(fmaxf(fmaxf(fabsf(a.x * na.x), fabsf(a.y * na.y)), fmaxf(fabsf(a.z * na.z), fabsf(a.w * na.w))),
                             fmaxf(fmaxf(fabsf(b.x * nb.x), fabsf(b.y * nb.y)), fmaxf(fabsf(b.z * nb.z), fabsf(b.w * nb.w)))));
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
    for (int c = threadIdx.x; c < cols / 8; c += MEMRA_MV_THREADS) {
        const float4 a = x4[2 * c], b = x4[2 * c + 1];
        float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        if (xnorm) {
            const float4 na = n4[2 * c], nb = n4[2 * c + 1];
            const float nw[8] = {na.x, na.y, na.z, na.w, nb.x, nb.y, nb.z, nb.w};
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = v[j] * inv * nw[j];
        }
        unsigned int hw[4], lw[4];
        float part = 0.0f;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const float p = v[2 * j] * scale, q = v[2 * j + 1] * scale;
            const __half2 h = __floats2half2_rn(p, q);
            const __half2 l = __floats2half2_rn(p - __low2float(h), q - __high2float(h));
            hw[j] = *reinterpret_cast<const unsigned int*>(&h);
            lw[j] = *reinterpret_cast<const unsigned int*>(&l);
            part += (__low2float(h) + __low2float(l)) + (__high2float(h) + __high2float(l));
        }
        xsplit[2 * c] = make_uint4(hw[0], hw[1], hw[2], hw[3]);
        xsplit[2 * c + 1] = make_uint4(lw[0], lw[1], lw[2], lw[3]);
        if (xsum) {
            part += __shfl_xor_sync(MEMRA_FULL_MASK, part, 1);
            part += __shfl_xor_sync(MEMRA_FULL_MASK, part, 2);
            if ((threadIdx.x & 3) == 0) xsum[c >> 2] = part;
        }
    }
    __syncthreads();
    return __int_as_float((127 - k) << 23);
}

#endif // MEMRA_MMA_CUH
