// mvexp.cu: the 25 matvec variants of docs/perf.md step 6, benchmarked side by
// side on the H200 by main.go (an experiment record; the engine does not load
// it). Build: nvcc -O3 -arch=sm_90 -cubin -o mvexp.cubin mvexp.cu
#include "../../../kernels/common.cuh"

template <bool BF16>
__device__ __forceinline__ float xdot8(uint4 w, float4 x0, float4 x1, float acc) {
    const unsigned int u[4] = {w.x, w.y, w.z, w.w};
    float f[8];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        f[2 * k] = BF16 ? __uint_as_float(u[k] << 16) : memra_f16_to_f32(memra_lo16(u[k]));
        f[2 * k + 1] = BF16 ? __uint_as_float(u[k] & 0xffff0000u) : memra_f16_to_f32(memra_hi16(u[k]));
    }
    acc += f[0] * x0.x;
    acc += f[1] * x0.y;
    acc += f[2] * x0.z;
    acc += f[3] * x0.w;
    acc += f[4] * x1.x;
    acc += f[5] * x1.y;
    acc += f[6] * x1.z;
    acc += f[7] * x1.w;
    return acc;
}

// R rows per warp group, KW warps split each row's K, U steps unrolled.
template <int R, int KW, int U, bool XS>
__device__ __forceinline__ void mv16x(float* y, const unsigned short* W, const float* x, int rows, int cols) {
    constexpr int G = 8 / KW;
    extern __shared__ float xs[];
    if (XS) {
        for (int i = threadIdx.x; i < cols; i += 256) xs[i] = x[i];
        __syncthreads();
        x = xs;
    }
    __shared__ float red[8][R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int r0 = (blockIdx.x * G + g) * R;
    const int nv = cols >> 3;
    const uint4* wr[R];
#pragma unroll
    for (int i = 0; i < R; i++) wr[i] = reinterpret_cast<const uint4*>(W) + (long long)min(r0 + i, rows - 1) * nv;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0.0f;
    constexpr int step = KW * 32;
    int v = kw * 32 + lane;
    for (; v + step * (U - 1) < nv; v += step * U) {
        uint4 wv[U][R];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int i = 0; i < R; i++) wv[u][i] = memra_ldg16(wr[i] + v + step * u);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int vv = v + step * u;
            const float4 xa = x4[2 * vv], xb = x4[2 * vv + 1];
#pragma unroll
            for (int i = 0; i < R; i++) acc[i] = xdot8<true>(wv[u][i], xa, xb, acc[i]);
        }
    }
    for (; v < nv; v += step) {
        const float4 xa = x4[2 * v], xb = x4[2 * v + 1];
#pragma unroll
        for (int i = 0; i < R; i++) acc[i] = xdot8<true>(memra_ldg16(wr[i] + v), xa, xb, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = memra_warp_sum(acc[i]);
    if (KW == 1) {
#pragma unroll
        for (int i = 0; i < R; i++)
            if (lane == i && r0 + i < rows) y[r0 + i] = acc[i];
        return;
    }
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < R; i++) red[warp][i] = acc[i];
    }
    __syncthreads();
    if (kw == 0 && lane < R && r0 + lane < rows) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < KW; k++) s += red[g * KW + k][lane];
        y[r0 + lane] = s;
    }
}

// int8 quant k (0..3) of q as an exact float: 2^23 + (q_k + 128) - (2^23 + 128).
__device__ __forceinline__ float q8f(unsigned int ux, int k) {
    return __uint_as_float(__byte_perm(ux, 0x4B000000u, 0x7440u | k)) - 8388736.0f;
}

__device__ __forceinline__ float q8dot16(uint4 q, const float4* xp) {
    const unsigned int u[4] = {q.x ^ 0x80808080u, q.y ^ 0x80808080u, q.z ^ 0x80808080u, q.w ^ 0x80808080u};
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float4 xv = xp[k];
        s += q8f(u[k], 0) * xv.x;
        s += q8f(u[k], 1) * xv.y;
        s += q8f(u[k], 2) * xv.z;
        s += q8f(u[k], 3) * xv.w;
    }
    return s;
}

// Repacked q8_0: Q [rows][cols] int8, S [rows][cols/32] f16.
template <int R, int KW, int U>
__device__ __forceinline__ void mvq8x(float* y, const unsigned char* Q, const unsigned short* S, const float* x, int rows, int cols) {
    constexpr int G = 8 / KW;
    __shared__ float red[8][R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int r0 = (blockIdx.x * G + g) * R;
    const int nv = cols >> 4;
    const uint4* qr[R];
    const unsigned short* sr[R];
#pragma unroll
    for (int i = 0; i < R; i++) {
        const long long rr = min(r0 + i, rows - 1);
        qr[i] = reinterpret_cast<const uint4*>(Q + rr * cols);
        sr[i] = S + rr * (cols >> 5);
    }
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0.0f;
    constexpr int step = KW * 32;
    int v = kw * 32 + lane;
    for (; v + step * (U - 1) < nv; v += step * U) {
        uint4 wv[U][R];
        unsigned short sv[U][R];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int i = 0; i < R; i++) {
                wv[u][i] = memra_ldg16(qr[i] + v + step * u);
                sv[u][i] = __ldg(sr[i] + ((v + step * u) >> 1));
            }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int vv = v + step * u;
#pragma unroll
            for (int i = 0; i < R; i++) acc[i] += memra_f16_to_f32(sv[u][i]) * q8dot16(wv[u][i], x4 + 4 * vv);
        }
    }
    for (; v < nv; v += step) {
#pragma unroll
        for (int i = 0; i < R; i++)
            acc[i] += memra_f16_to_f32(__ldg(sr[i] + (v >> 1))) * q8dot16(memra_ldg16(qr[i] + v), x4 + 4 * v);
    }
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = memra_warp_sum(acc[i]);
    if (KW == 1) {
#pragma unroll
        for (int i = 0; i < R; i++)
            if (lane == i && r0 + i < rows) y[r0 + i] = acc[i];
        return;
    }
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < R; i++) red[warp][i] = acc[i];
    }
    __syncthreads();
    if (kw == 0 && lane < R && r0 + lane < rows) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < KW; k++) s += red[g * KW + k][lane];
        y[r0 + lane] = s;
    }
}

#define BF(R, KW, U, XS)                                                                                         \
    extern "C" __global__ void __launch_bounds__(256) mvx_bf16_r##R##_k##KW##_u##U##_s##XS(                      \
        float* y, const unsigned short* W, const float* x, int rows, int cols) {                                 \
        mv16x<R, KW, U, XS>(y, W, x, rows, cols);                                                               \
    }
#define Q8(R, KW, U)                                                                                             \
    extern "C" __global__ void __launch_bounds__(256) mvx_q8_r##R##_k##KW##_u##U(                                \
        float* y, const unsigned char* Q, const unsigned short* S, const float* x, int rows, int cols) {        \
        mvq8x<R, KW, U>(y, Q, S, x, rows, cols);                                                                \
    }

BF(1, 1, 4, 0)
BF(2, 1, 2, 0)
BF(2, 1, 4, 0)
BF(4, 1, 2, 0)
BF(4, 1, 4, 0)
BF(2, 2, 4, 0)
BF(4, 2, 2, 0)
BF(4, 4, 2, 0)
BF(8, 8, 2, 0)
BF(2, 8, 4, 0)
BF(4, 8, 4, 0)
BF(2, 1, 4, 1)
BF(4, 2, 2, 1)
BF(4, 4, 4, 1)

Q8(1, 1, 4)
Q8(2, 1, 2)
Q8(2, 1, 4)
Q8(4, 1, 2)
Q8(4, 1, 4)
Q8(2, 2, 4)
Q8(4, 2, 2)
Q8(4, 4, 2)
Q8(2, 8, 4)
Q8(4, 8, 2)
Q8(8, 8, 2)

// Session 3 (docs/perf.md step 12): the engine's own template (matvec.cu)
// with its experiment switches, TB (tail loads at once) and PF (next unit's
// first lines prefetched into L2), and more rows per warp for the wide q8_0
// kernel. main.go times each on one block per row unit and on the engine's
// grid (the resident blocks, each looping over units).
// Names: mvg_<bf16|q8>_r<R>_k<KW>_u<U>_t<TB>_p<PF>[_b<B>: bounded to B blocks per SM].
#include "../../../kernels/matvec.cu"
#include "../../../kernels/matvec_q4k.cu"
#include "../../../kernels/matvec_q6k.cu"

// The CUDA-core Q4_K kernel the engine ran before step 30 landed (ggml's
// blocks, R4 KW2 U1), the baseline of the tensor-core one.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
mvk_q4_cuda(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_Q4K, 4, 2, 1>(y, W, nullptr, x, rows, cols, mode, norm_w, xnorm, eps);
}

// The CUDA-core Q6_K kernel the engine ran before step 39 landed (R4 KW2
// U1), the baseline of the tensor-core one: W the 208 bytes of each block
// less d, S [rows][cols/256] the f16 d.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
mvk_q6_cuda(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode, const float* norm_w,
            int xnorm, float eps) {
    memra_mv<MEMRA_MV_Q6K, 4, 2, 1>(y, W, S, x, rows, cols, mode, norm_w, xnorm, eps);
}

#define MVG_KERNEL(NAME, BOUNDS, KIND, R, KW, U, TB, PF)                                                         \
    extern "C" __global__ void BOUNDS NAME(float* y, const void* W, const unsigned short* S, const float* x,     \
                                           int rows, int cols) {                                                 \
        memra_mv<KIND, R, KW, U, TB, PF>(y, W, S, x, rows, cols, 0, nullptr, 0, 1e-6f);                          \
    }
#define MVG_BF(R, KW, U, TB, PF)                                                                                 \
    MVG_KERNEL(mvg_bf16_r##R##_k##KW##_u##U##_t##TB##_p##PF, __launch_bounds__(256), MEMRA_MV_BF16, R, KW, U, TB, PF)
#define MVG_Q8(R, KW, U, TB, PF)                                                                                 \
    MVG_KERNEL(mvg_q8_r##R##_k##KW##_u##U##_t##TB##_p##PF, __launch_bounds__(256), MEMRA_MV_Q8, R, KW, U, TB, PF)
#define MVG_Q8B(R, KW, U, TB, PF, B)                                                                             \
    MVG_KERNEL(mvg_q8_r##R##_k##KW##_u##U##_t##TB##_p##PF##_b##B, __launch_bounds__(256, B), MEMRA_MV_Q8, R, KW, U, \
               TB, PF)

MVG_BF(4, 4, 2, 0, 0) // matvec_bf16's geometry, without its HL = 1 head
MVG_BF(4, 4, 2, 0, 1)
MVG_BF(4, 8, 4, 0, 0) // matvec_bf16_wide's geometry, without its HL = 1 head
MVG_BF(4, 8, 4, 1, 0)
MVG_BF(4, 8, 4, 0, 1)
MVG_BF(4, 8, 4, 1, 1)
MVG_BF(1, 1, 4, 0, 0)
MVG_BF(1, 1, 4, 0, 1)

MVG_Q8B(4, 1, 2, 0, 0, 3) // = matvec_q8_0
MVG_Q8B(4, 1, 2, 0, 1, 3)
MVG_Q8B(2, 8, 4, 0, 0, 3) // = matvec_q8_0_wide (unbounded there, 80 registers either way)
MVG_Q8B(2, 8, 4, 1, 0, 3)
MVG_Q8B(2, 8, 4, 0, 1, 3)
MVG_Q8B(2, 8, 4, 1, 1, 3)
MVG_Q8(4, 8, 2, 0, 0)
MVG_Q8(4, 8, 2, 1, 0)
MVG_Q8(4, 8, 4, 1, 0)
MVG_Q8(8, 8, 2, 1, 0)
MVG_Q8(4, 4, 2, 1, 0)

// Session 5: every load of a block's unit in flight at once (R16 / R8 with
// KW8: one 16-byte chunk per thread per row of 4,096 q8_0 columns), and the
// register bounds that give 2, 3 or 4 resident blocks, for the <= 4,096-row
// (wide) and the 10,240 / 12,352-row input projections.
MVG_Q8B(16, 8, 1, 1, 0, 2)
MVG_Q8B(8, 8, 1, 1, 0, 2)
MVG_Q8B(8, 8, 1, 1, 0, 3)
MVG_Q8B(8, 4, 2, 1, 0, 2)
MVG_Q8B(4, 4, 2, 1, 0, 3)
MVG_Q8B(2, 4, 2, 1, 0, 4)
MVG_Q8B(4, 8, 1, 1, 0, 3)
MVG_Q8B(4, 2, 2, 1, 0, 3)
MVG_Q8B(8, 1, 2, 0, 0, 2)
MVG_Q8B(4, 1, 4, 0, 0, 2)
MVG_Q8B(2, 1, 4, 0, 0, 4)
#include "mma.cuh"
