// matvec.cu: y[rows] (+)= W x for the weight types of a decode step.
//
// Why it looks like this: at n_tokens = 1 every projection is a matrix-vector
// product whose cost is streaming W from memory once, so each row is read by
// one warp with 16-byte loads (8 f16/bf16, 4 f32, or staged q8_0 blocks),
// four loads in flight per lane, f32 accumulation (eight were tried and
// measured no faster: docs/perf.md). One warp per row keeps the
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

// With xnorm != 0 the block first normalises its input: xs = x / sqrt(mean(x^2)
// + eps) * norm_w, staged in dynamic shared memory (cols floats), and the
// rows read xs instead of x. This fuses the RMSNorm that precedes every
// projection into the projection: one launch and one pass fewer per norm.
// Every block computes the same sum in the same order (thread-strided
// partials, xor butterfly, warps in index order), so all blocks, and the
// eager and graph paths, see identical xs.
__device__ __forceinline__ const float* memra_mv_input(const float* x, const float* norm_w, int xnorm, int cols, float eps) {
    extern __shared__ float memra_xs[];
    if (!xnorm) return x;
    __shared__ float red[MEMRA_MV_THREADS / 32];
    float ss = 0.0f;
    for (int i = threadIdx.x; i < cols; i += MEMRA_MV_THREADS) {
        const float v = x[i];
        ss += v * v;
    }
    ss = memra_warp_sum(ss);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
    __syncthreads();
    float tot = 0.0f;
#pragma unroll
    for (int w = 0; w < MEMRA_MV_THREADS / 32; w++) tot += red[w];
    const float inv = 1.0f / sqrtf(tot / (float)cols + eps);
    for (int i = threadIdx.x; i < cols; i += MEMRA_MV_THREADS) memra_xs[i] = x[i] * inv * norm_w[i];
    __syncthreads();
    return memra_xs;
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
__device__ __forceinline__ void memra_mv16(float* y, const unsigned short* W, const float* x, int rows, int cols, int accumulate,
                                           const float* norm_w, int xnorm, float eps) {
    x = memra_mv_input(x, norm_w, xnorm, cols, eps);
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

// y: [rows] f32; W: [rows][cols] f32; x: [cols] f32; norm_w: [cols] f32 (read when xnorm != 0)
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_f32(float* y, const float* W, const float* x, int rows, int cols, int accumulate,
           const float* norm_w, int xnorm, float eps) {
    x = memra_mv_input(x, norm_w, xnorm, cols, eps);
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

// y: [rows] f32; W: [rows][cols] f16 bits; x: [cols] f32; norm_w: [cols] f32 (read when xnorm != 0)
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_f16(float* y, const unsigned short* W, const float* x, int rows, int cols, int accumulate,
           const float* norm_w, int xnorm, float eps) {
    memra_mv16<false>(y, W, x, rows, cols, accumulate, norm_w, xnorm, eps);
}

// y: [rows] f32; W: [rows][cols] bf16 bits; x: [cols] f32; norm_w: [cols] f32 (read when xnorm != 0)
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_bf16(float* y, const unsigned short* W, const float* x, int rows, int cols, int accumulate,
            const float* norm_w, int xnorm, float eps) {
    memra_mv16<true>(y, W, x, rows, cols, accumulate, norm_w, xnorm, eps);
}

// Four int8 quants (bytes b0..b3 of q, little-endian) dotted with x0..x3.
__device__ __forceinline__ float memra_q8_dot4(unsigned int q, float4 xv) {
    float s = (float)(signed char)(q & 0xff) * xv.x;
    s += (float)(signed char)((q >> 8) & 0xff) * xv.y;
    s += (float)(signed char)((q >> 16) & 0xff) * xv.z;
    s += (float)(signed char)(q >> 24) * xv.w;
    return s;
}

// y: [rows] f32; W: [rows][cols/32] q8_0 blocks (34 bytes: f16 d, int8 q[32]); x: [cols] f32; cols % 32 == 0
//
// Each warp streams its row 32 blocks (1088 bytes = 68 aligned 16-byte
// chunks) at a time into shared memory with coalesced 16-byte loads, the
// next chunk's loads issued before the current chunk is consumed (two
// chunks ahead measured slower: docs/perf.md). From the
// stage, 8 lanes share a block (4 quants each, x read as one float4: a warp
// reads 4 blocks' x = 512 contiguous bytes per step, coalesced), and every
// lane adds d * (its 4-quant partial) to its accumulator in a fixed order.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q8_0(float* y, const unsigned char* W, const float* x, int rows, int cols, int accumulate,
            const float* norm_w, int xnorm, float eps) {
    __shared__ uint4 stage[MEMRA_MV_ROWS][68];
    x = memra_mv_input(x, norm_w, xnorm, cols, eps);
    const int warp = threadIdx.x >> 5;
    const int r = blockIdx.x * MEMRA_MV_ROWS + warp;
    const int lane = threadIdx.x & 31;
    if (r >= rows) return; // whole warps leave: no block-wide barrier below
    const int nb = cols >> 5;
    const unsigned char* wr = W + (long long)r * nb * 34;
    float acc = 0.0f;
    int b0 = 0;
    if ((nb & 7) == 0 && memra_aligned16(W) && memra_aligned16(x) && nb >= 32) {
        const uint4* src = reinterpret_cast<const uint4*>(wr);
        uint4* st = stage[warp];
        const unsigned char* sb = reinterpret_cast<const unsigned char*>(st);
        const int sub = lane >> 3;        // which of 4 blocks this lane reads per step
        const int j = (lane & 7) * 4;     // its first quant in the block
        uint4 c0 = memra_ldg16(src + lane);
        uint4 c1 = memra_ldg16(src + 32 + lane);
        uint4 c2 = make_uint4(0, 0, 0, 0);
        if (lane < 4) c2 = memra_ldg16(src + 64 + lane);
        for (; b0 + 32 <= nb; b0 += 32) {
            __syncwarp();
            st[lane] = c0;
            st[32 + lane] = c1;
            if (lane < 4) st[64 + lane] = c2;
            __syncwarp();
            if (b0 + 64 <= nb) { // prefetch the next 32 blocks
                const uint4* s = src + (b0 / 32 + 1) * 68;
                c0 = memra_ldg16(s + lane);
                c1 = memra_ldg16(s + 32 + lane);
                if (lane < 4) c2 = memra_ldg16(s + 64 + lane);
            }
            const float4* xb = reinterpret_cast<const float4*>(x + (long long)b0 * 32 + j);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                const int b = k * 4 + sub;
                const unsigned char* blk = sb + b * 34;
                const float d = memra_f16_to_f32(*reinterpret_cast<const unsigned short*>(blk));
                const unsigned short* q16 = reinterpret_cast<const unsigned short*>(blk + 2 + j);
                const unsigned int q = (unsigned int)q16[0] | ((unsigned int)q16[1] << 16);
                acc += d * memra_q8_dot4(q, xb[b * 8]);
            }
        }
    }
    // Remaining blocks (or the whole row when unaligned): one block per lane.
    for (int b = b0 + lane; b < nb; b += 32) {
        const unsigned char* blk = wr + (long long)b * 34;
        const float d = memra_f16_to_f32(__ldg(reinterpret_cast<const unsigned short*>(blk)));
        const unsigned short* q16 = reinterpret_cast<const unsigned short*>(blk + 2);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 16; k++) {
            const unsigned short p = q16[k];
            s += (float)(signed char)(p & 0xff) * x[b * 32 + 2 * k];
            s += (float)(signed char)(p >> 8) * x[b * 32 + 2 * k + 1];
        }
        acc += d * s;
    }
    acc = memra_warp_sum(acc);
    memra_mv_store(y, r, acc, accumulate);
}
