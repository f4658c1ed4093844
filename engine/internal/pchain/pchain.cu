// pchain.cu: a chain of bf16 matvecs in ONE persistent kernel, phases split by
// grid barriers (docs/perf.md step 25, an experiment record; the engine does
// not load it). Build: nvcc -O3 -arch=sm_90 -cubin -o pchain.cubin pchain.cu
//
// Why it is shaped this way: step 22 says a matvec node in a graph costs its
// bytes plus 2.3-5.2 µs, and the persistent decode kernel of the next steps is
// meant to remove that. This measures its core on the 0.8B FFN shapes before
// anyone writes it: every block stays resident, each warp owns one row unit
// (R rows) of a phase, and with `prefetch` it issues the loads of its unit of
// the NEXT phase (weights are never written) between arriving at the barrier
// and waiting on it, so HBM streams through the barrier. A unit is at most 16
// loads of 16 bytes per lane, held in registers.
#include "../../../kernels/common.cuh"

// One matvec: W rows × cols bf16 row-major (cols % 256 == 0) times x', where
// x' = x, or rmsnorm(x)·norm when norm is set (the FFN's pre-norm, computed
// by every block as the engine's fused-norm matvecs do); mode 0 stores y =
// W x', 1 adds it into y (the residual), 2 stores the SwiGLU of row pairs,
// y[r/2] = silu(row r)·row r+1 (gate and up interleaved, as the engine
// uploads them). kind 0 is the gate|up shape (R 4 rows per warp, cols/256 =
// 4 loads per row per lane), kind 1 the down shape (R 1, cols/256 = 14).
struct pc_phase {
    const uint4* w;
    const float* x;
    float* y;
    const float* norm;
    int rows, cols, kind, mode;
};

#define PC_EPS 1e-6f

#define PC_BUF 16
#define PC_THREADS 256
#define PC_MAX_COLS 3584

// The phase's input, staged once per block: x was written by other blocks in
// this launch, so it is read from L2 (__ldcg), and every warp of the block
// then reads it here instead of from L2 (run44 read it per warp: 2x the
// weight bytes of L2 traffic on the down shape).
__shared__ __align__(16) float pc_xs[PC_MAX_COLS];

__shared__ float pc_red[PC_THREADS / 32];

__device__ __forceinline__ void pc_stage_x(const pc_phase& f) {
    const float4* x4 = reinterpret_cast<const float4*>(f.x);
    float ss = 0.0f;
    for (int i = threadIdx.x; i < f.cols / 4; i += PC_THREADS) {
        const float4 v = __ldcg(x4 + i);
        reinterpret_cast<float4*>(pc_xs)[i] = v;
        ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    if (f.norm) {
        const float inv = rsqrtf(memra_block_sum<PC_THREADS>(ss, pc_red) / f.cols + PC_EPS);
        for (int i = threadIdx.x; i < f.cols; i += PC_THREADS) pc_xs[i] = pc_xs[i] * inv * f.norm[i];
    }
    __syncthreads();
}

// Loads unit u of phase f (R rows × C chunks per lane) into buf.
template <int R, int C>
__device__ __forceinline__ void pc_load(uint4 (&buf)[PC_BUF], const pc_phase& f, int u, int lane) {
    const int chunks = f.cols / 8; // 16-byte chunks per row
#pragma unroll
    for (int i = 0; i < R; i++)
#pragma unroll
        for (int c = 0; c < C; c++) buf[i * C + c] = memra_ldg16(f.w + (long long)(u * R + i) * chunks + c * 32 + lane);
}

// y rows of unit u from buf and the staged x': a lane adds its chunks in
// ascending order, then the warp's xor butterfly; lane i stores row i (mode
// 2: the even lane of each pair stores its SwiGLU).
template <int R, int C>
__device__ __forceinline__ void pc_dot(const uint4 (&buf)[PC_BUF], const pc_phase& f, int u, int lane) {
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0.0f;
#pragma unroll
    for (int c = 0; c < C; c++) {
        const float4* xp = reinterpret_cast<const float4*>(pc_xs) + 2 * (c * 32 + lane);
        const float4 x0 = xp[0], x1 = xp[1];
        const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
        for (int i = 0; i < R; i++) {
            const unsigned int q[4] = {buf[i * C + c].x, buf[i * C + c].y, buf[i * C + c].z, buf[i * C + c].w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                acc[i] += __uint_as_float(q[k] << 16) * xv[2 * k];
                acc[i] += __uint_as_float(q[k] & 0xffff0000u) * xv[2 * k + 1];
            }
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = memra_warp_sum(acc[i]);
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int row = u * R + i;
        if (f.mode == 2) {
            if (i % 2 == 0 && i + 1 < R && lane == i) f.y[row / 2] = acc[i] / (1.0f + expf(-acc[i])) * acc[i + 1];
        } else if (lane == i) {
            f.y[row] = f.mode == 1 ? __ldcg(f.y + row) + acc[i] : acc[i];
        }
    }
}

template <int R, int C>
__device__ __forceinline__ void pc_run(uint4 (&buf)[PC_BUF], const pc_phase& f, int gw, int nw, int lane, bool have) {
    if (f.rows > 0) pc_stage_x(f);
    for (int u = gw; u < f.rows / R; u += nw) {
        if (!(have && u == gw)) pc_load<R, C>(buf, f, u, lane);
        pc_dot<R, C>(buf, f, u, lane);
    }
}

__device__ __forceinline__ void pc_prefetch(uint4 (&buf)[PC_BUF], const pc_phase& f, int gw, int lane) {
    if (f.kind == 0) {
        if (gw < f.rows / 4) pc_load<4, 4>(buf, f, gw, lane);
    } else if (gw < f.rows) {
        pc_load<1, 14>(buf, f, gw, lane);
    }
}

__device__ __forceinline__ unsigned pc_ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Arrival with release semantics on the add itself (no full fence).
__device__ __forceinline__ void pc_red_release(unsigned* p) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

// Flags of pchain: PC_PREFETCH issues the next phase's loads before the wait;
// PC_RED arrives with red.release instead of __threadfence + atomicAdd.
#define PC_PREFETCH 1
#define PC_RED 2

// phases[0..n) run in order; bar is zero at launch and counts arrivals (one
// per block per barrier). The grid must be resident (the host sizes it from
// the occupancy query), or the spin never ends. A phase of 0 rows does no
// work: a chain of them times the barrier alone.
extern "C" __global__ void __launch_bounds__(PC_THREADS) pchain(const pc_phase* phases, int n, unsigned* bar, int flags) {
    const int lane = threadIdx.x & 31;
    const int gw = blockIdx.x * (PC_THREADS / 32) + (threadIdx.x >> 5), nw = gridDim.x * (PC_THREADS / 32);
    const bool prefetch = flags & PC_PREFETCH;
    uint4 buf[PC_BUF];
    pc_phase f = phases[0];
    if (prefetch) pc_prefetch(buf, f, gw, lane);
    for (int p = 0;; p++) {
        // The next phase's description, read before this phase's work.
        const pc_phase next = phases[min(p + 1, n - 1)];
        if (f.kind == 0) {
            pc_run<4, 4>(buf, f, gw, nw, lane, prefetch);
        } else {
            pc_run<1, 14>(buf, f, gw, nw, lane, prefetch);
        }
        if (p + 1 == n) break;
        // Arrive (this block's stores, made visible GPU-wide), then the next
        // phase's weight loads, then wait for every block's arrival.
        __syncthreads();
        if (threadIdx.x == 0) {
            if (flags & PC_RED) {
                pc_red_release(bar);
            } else {
                __threadfence();
                atomicAdd(bar, 1u);
            }
        }
        f = next;
        if (prefetch) pc_prefetch(buf, f, gw, lane);
        if (threadIdx.x == 0) {
            const unsigned target = (unsigned)(p + 1) * gridDim.x;
            while (pc_ld_acquire(bar) < target) {
            }
        }
        __syncthreads();
    }
}
