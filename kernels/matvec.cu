// matvec.cu: y[rows] (+)= W x for the weight types of a decode step.
//
// Why it looks like this: at n_tokens = 1 every projection is a matrix-vector
// product whose cost is streaming W from memory once, so each row is read by
// one warp with 16-byte loads (8 f16/bf16, 4 f32, or staged q8_0 blocks),
// four loads in flight per lane, f32 accumulation. One warp per row keeps the
// reduction fixed: lane l adds its chunks in ascending order, then a xor
// butterfly across the warp; the same geometry always gives the same bits.
// `accumulate` != 0 adds the product into y (the residual add of x += W_o a and
// x += W_down h), saving a separate kernel; y must not alias x.
//
// Layout (ggml): W row-major, row r = output r, `cols` contiguous inputs.
// 16-byte loads need 16-byte aligned rows: cols % 8 == 0 (f16/bf16),
// cols % 4 == 0 (f32) and W, x 16-byte aligned; otherwise the row is read with
// scalar loads (any cols works, only slower). q8_0 needs cols % 32 == 0; its
// 34-byte blocks are staged 32 at a time (1088 bytes = 68 aligned 16-byte
// chunks) through shared memory when cols % 256 == 0 (every row then starts
// 16-byte aligned), and read with 2-byte loads otherwise.
#include "common.cuh"

#define MEMRA_MV_UNROLL 4

__device__ __forceinline__ void memra_mv_store(float* y, int r, float acc, int accumulate) {
    if ((threadIdx.x & 31) == 0) {
        y[r] = accumulate ? y[r] + acc : acc;
    }
}

// dot of 8 packed 16-bit floats with x[0..7]
template <bool BF16>
__device__ __forceinline__ float memra_dot8(uint4 w, float4 x0, float4 x1, float acc) {
    float f[8];
    const unsigned int u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        f[2 * k] = BF16 ? memra_bf16_to_f32(memra_lo16(u[k])) : memra_f16_to_f32(memra_lo16(u[k]));
        f[2 * k + 1] = BF16 ? memra_bf16_to_f32(memra_hi16(u[k])) : memra_f16_to_f32(memra_hi16(u[k]));
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

template <bool BF16>
__device__ __forceinline__ void memra_mv16(float* y, const unsigned short* W, const float* x, int rows, int cols, int accumulate) {
    const int r = blockIdx.x * MEMRA_MV_ROWS + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const unsigned short* wr = W + (long long)r * cols;
    float acc = 0.0f;
    if ((cols & 7) == 0 && memra_aligned16(W) && memra_aligned16(x)) {
        const int nv = cols >> 3; // 16-byte vectors per row
        const uint4* w4 = reinterpret_cast<const uint4*>(wr);
        const float4* x4 = reinterpret_cast<const float4*>(x);
        int v = lane;
        for (; v + 32 * (MEMRA_MV_UNROLL - 1) < nv; v += 32 * MEMRA_MV_UNROLL) {
            uint4 wv[MEMRA_MV_UNROLL];
#pragma unroll
            for (int u = 0; u < MEMRA_MV_UNROLL; u++) wv[u] = memra_ldg16(w4 + v + 32 * u);
#pragma unroll
            for (int u = 0; u < MEMRA_MV_UNROLL; u++) {
                const int vv = v + 32 * u;
                acc = memra_dot8<BF16>(wv[u], x4[2 * vv], x4[2 * vv + 1], acc);
            }
        }
        for (; v < nv; v += 32) {
            acc = memra_dot8<BF16>(memra_ldg16(w4 + v), x4[2 * v], x4[2 * v + 1], acc);
        }
    } else {
        for (int i = lane; i < cols; i += 32) {
            const unsigned short h = wr[i];
            acc += (BF16 ? memra_bf16_to_f32(h) : memra_f16_to_f32(h)) * x[i];
        }
    }
    acc = memra_warp_sum(acc);
    memra_mv_store(y, r, acc, accumulate);
}

// y: [rows] f32; W: [rows][cols] f32; x: [cols] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_f32(float* y, const float* W, const float* x, int rows, int cols, int accumulate) {
    const int r = blockIdx.x * MEMRA_MV_ROWS + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float* wr = W + (long long)r * cols;
    float acc = 0.0f;
    if ((cols & 3) == 0 && memra_aligned16(W) && memra_aligned16(x)) {
        const int nv = cols >> 2;
        const float4* w4 = reinterpret_cast<const float4*>(wr);
        const float4* x4 = reinterpret_cast<const float4*>(x);
        int v = lane;
        for (; v + 32 * (MEMRA_MV_UNROLL - 1) < nv; v += 32 * MEMRA_MV_UNROLL) {
            float4 wv[MEMRA_MV_UNROLL];
#pragma unroll
            for (int u = 0; u < MEMRA_MV_UNROLL; u++) wv[u] = __ldg(w4 + v + 32 * u);
#pragma unroll
            for (int u = 0; u < MEMRA_MV_UNROLL; u++) {
                const float4 xv = x4[v + 32 * u];
                acc += wv[u].x * xv.x;
                acc += wv[u].y * xv.y;
                acc += wv[u].z * xv.z;
                acc += wv[u].w * xv.w;
            }
        }
        for (; v < nv; v += 32) {
            const float4 wv = __ldg(w4 + v);
            const float4 xv = x4[v];
            acc += wv.x * xv.x;
            acc += wv.y * xv.y;
            acc += wv.z * xv.z;
            acc += wv.w * xv.w;
        }
    } else {
        for (int i = lane; i < cols; i += 32) {
            acc += wr[i] * x[i];
        }
    }
    acc = memra_warp_sum(acc);
    memra_mv_store(y, r, acc, accumulate);
}

// y: [rows] f32; W: [rows][cols] f16 bits; x: [cols] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_f16(float* y, const unsigned short* W, const float* x, int rows, int cols, int accumulate) {
    memra_mv16<false>(y, W, x, rows, cols, accumulate);
}

// y: [rows] f32; W: [rows][cols] bf16 bits; x: [cols] f32
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_bf16(float* y, const unsigned short* W, const float* x, int rows, int cols, int accumulate) {
    memra_mv16<true>(y, W, x, rows, cols, accumulate);
}

// One q8_0 block: returns d * sum_k(q_k * x_k), the sum taken in k order.
// q points at 32 int8 (2-byte aligned), x at 32 f32 (16-byte aligned when xal).
__device__ __forceinline__ float memra_q8_block(float d, const unsigned short* q16, const float* x) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; k++) {
        const unsigned short p = q16[k];
        s += (float)(signed char)(p & 0xff) * x[2 * k];
        s += (float)(signed char)(p >> 8) * x[2 * k + 1];
    }
    return d * s;
}

// y: [rows] f32; W: [rows][cols/32] q8_0 blocks (34 bytes: f16 d, int8 q[32]); x: [cols] f32; cols % 32 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q8_0(float* y, const unsigned char* W, const float* x, int rows, int cols, int accumulate) {
    // 32 blocks x 34 bytes per warp stage = 68 chunks of 16 bytes.
    __shared__ uint4 stage[MEMRA_MV_ROWS][68];
    const int warp = threadIdx.x >> 5;
    const int r = blockIdx.x * MEMRA_MV_ROWS + warp;
    const int lane = threadIdx.x & 31;
    if (r >= rows) return; // whole warps leave: no block-wide barrier below
    const int nb = cols >> 5;
    const unsigned char* wr = W + (long long)r * nb * 34;
    float acc = 0.0f;
    int b0 = 0;
    if ((nb & 7) == 0 && memra_aligned16(W)) {
        const uint4* src = reinterpret_cast<const uint4*>(wr);
        uint4* st = stage[warp];
        const unsigned char* sb = reinterpret_cast<const unsigned char*>(st);
        for (; b0 + 32 <= nb; b0 += 32) {
            const uint4* s = src + (b0 / 32) * 68;
            const uint4 c0 = memra_ldg16(s + lane);
            const uint4 c1 = memra_ldg16(s + 32 + lane);
            uint4 c2;
            if (lane < 4) c2 = memra_ldg16(s + 64 + lane);
            __syncwarp();
            st[lane] = c0;
            st[32 + lane] = c1;
            if (lane < 4) st[64 + lane] = c2;
            __syncwarp();
            const unsigned char* blk = sb + lane * 34;
            const float d = memra_f16_to_f32(*reinterpret_cast<const unsigned short*>(blk));
            acc += memra_q8_block(d, reinterpret_cast<const unsigned short*>(blk + 2), x + (b0 + lane) * 32);
        }
    }
    // Remaining blocks (or the whole row when unaligned): one block per lane.
    for (int b = b0 + lane; b < nb; b += 32) {
        const unsigned char* blk = wr + (long long)b * 34;
        const float d = memra_f16_to_f32(__ldg(reinterpret_cast<const unsigned short*>(blk)));
        acc += memra_q8_block(d, reinterpret_cast<const unsigned short*>(blk + 2), x + b * 32);
    }
    acc = memra_warp_sum(acc);
    memra_mv_store(y, r, acc, accumulate);
}
