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
// loads of 16 bytes per lane, held in registers. pstream (below) streams
// further ahead through shared memory.
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

// The threads that compute: the whole block in pchain (__syncthreads), the
// 256 consumer threads in pstream (named barrier 1; its producer warp never
// joins).
template <bool NAMED>
__device__ __forceinline__ void pc_sync() {
    if (NAMED) {
        asm volatile("bar.sync 1, %0;" ::"n"(PC_THREADS) : "memory");
    } else {
        __syncthreads();
    }
}

template <bool NAMED = false>
__device__ __forceinline__ void pc_stage_x(const pc_phase& f) {
    const float4* x4 = reinterpret_cast<const float4*>(f.x);
    float ss = 0.0f;
    for (int i = threadIdx.x; i < f.cols / 4; i += PC_THREADS) {
        const float4 v = __ldcg(x4 + i);
        reinterpret_cast<float4*>(pc_xs)[i] = v;
        ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    if (f.norm) {
        // memra_block_sum's order, with this kernel's barrier.
        ss = memra_warp_sum(ss);
        if ((threadIdx.x & 31) == 0) pc_red[threadIdx.x >> 5] = ss;
        pc_sync<NAMED>();
        float t = 0.0f;
#pragma unroll
        for (int w = 0; w < PC_THREADS / 32; w++) t += pc_red[w];
        pc_sync<NAMED>(); // pc_red is rewritten by the next phase
        const float inv = rsqrtf(t / f.cols + PC_EPS);
        for (int i = threadIdx.x; i < f.cols; i += PC_THREADS) pc_xs[i] = pc_xs[i] * inv * f.norm[i];
    }
    pc_sync<NAMED>();
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

// ---- pstream: the weights streamed ahead of the barriers (step 27). One
// block per SM: warps 0-7 compute, warp 8's lane 0 is a producer that copies
// the block's tiles (tiles b, b + grid, ... of each phase, in chain order)
// into a ring of shared-memory slots with bulk copies (cp.async.bulk,
// completion counted on an mbarrier per slot), as far ahead as free slots
// allow, whatever phase the consumers are in: HBM keeps streaming while they
// wait at a grid barrier. A gate|up tile is 16 rows (a warp owns a gate/up
// pair and stores its SwiGLU), a down tile 8 (a warp a row) (other tile
// sizes, to time the ring alone, only stream); a warp frees its
// part of a slot as soon as it has read it, so no block barrier per tile. A
// lane adds the same chunks in the same order as pchain's pc_dot, so the
// sums are pchain's bit for bit. Needs PTX 8.0 (nvcc >= 12): compiled on the
// GPU machine.
// The ring's geometry is the launch's (ps_geom): slots of slot_bytes, gate|up
// tiles of tile_a rows, down tiles of tile_b. The sums assume 16 and 8 (a
// warp per gate/up pair, a warp per down row); other tiles only stream
// (PS_NO_DOT is forced), to time the ring alone.
#define PS_MAX_SLOTS 32

struct ps_geom {
    int tile_a, tile_b, slots, slot_bytes;
};

// Rows of a tile of phase kind k.
__device__ __forceinline__ int ps_tile_rows(const ps_geom& g, int kind) {
    return kind == 0 ? g.tile_a : g.tile_b;
}

__device__ __forceinline__ unsigned ps_smem(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void ps_mb_init(unsigned long long* mb, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(ps_smem(mb)), "r"(count) : "memory");
}

__device__ __forceinline__ void ps_mb_arrive(unsigned long long* mb) {
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared::cta.b64 st, [%0];\n\t}" ::"r"(ps_smem(mb)) : "memory");
}

__device__ __forceinline__ void ps_mb_expect(unsigned long long* mb, unsigned bytes) {
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(ps_smem(mb)), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void ps_mb_wait(unsigned long long* mb, unsigned parity) {
    unsigned ok = 0;
    while (!ok) {
        asm volatile("{\n\t.reg .pred P;\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n\tselp.b32 %0, 1, 0, P;\n\t}"
                     : "=r"(ok)
                     : "r"(ps_smem(mb)), "r"(parity)
                     : "memory");
    }
}

__device__ __forceinline__ void ps_bulk_copy(void* dst, const void* src, unsigned bytes, unsigned long long* mb) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(ps_smem(dst)),
                 "l"(src), "r"(bytes), "r"(ps_smem(mb))
                 : "memory");
}

// One row of a tile in shared memory: C chunks of 16 bytes per lane.
template <int C>
__device__ __forceinline__ float ps_row(const uint4* row, int lane) {
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < C; c++) {
        const uint4 w = row[c * 32 + lane];
        const float4* xp = reinterpret_cast<const float4*>(pc_xs) + 2 * (c * 32 + lane);
        const float4 x0 = xp[0], x1 = xp[1];
        const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
        const unsigned int q[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            acc += __uint_as_float(q[k] << 16) * xv[2 * k];
            acc += __uint_as_float(q[k] & 0xffff0000u) * xv[2 * k + 1];
        }
    }
    return memra_warp_sum(acc);
}

// Lane 0 stores a row's sum the way pc_dot does (mode 0 store, 1 add).
__device__ __forceinline__ void ps_store(const pc_phase& f, int row, float sum) {
    f.y[row] = f.mode == 1 ? __ldcg(f.y + row) + sum : sum;
}

// Flags of pstream that leave a stage out, to time the others (results then
// wrong): PS_NO_STAGE stages x for the first phase only, PS_NO_DOT reads no
// tile (every sum 0; the slots still fill and drain).
#define PS_NO_STAGE 1
#define PS_NO_DOT 2

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pstream(const pc_phase* phases, int n, unsigned* bar, int flags,
                                                                          int tile_a, int tile_b, int slots, int slot_bytes) {
    extern __shared__ __align__(128) unsigned char ps_ring[]; // slots × slot_bytes
    const ps_geom geo = {tile_a, tile_b, slots, slot_bytes};
    __shared__ __align__(8) unsigned long long full[PS_MAX_SLOTS], empty[PS_MAX_SLOTS];
    const int S = min(geo.slots, PS_MAX_SLOTS);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++) {
            ps_mb_init(&full[s], 1);                 // the producer's expect_tx
            ps_mb_init(&empty[s], PC_THREADS / 32); // one arrival per consumer warp
        }
    }
    __syncthreads();
    if (warp == PC_THREADS / 32) { // the producer
        if (lane != 0) return;
        int k = 0;
        for (int p = 0; p < n; p++) {
            const pc_phase f = phases[p];
            const int tr = ps_tile_rows(geo, f.kind);
            const unsigned bytes = tr * f.cols * 2;
            for (int t = blockIdx.x; t < f.rows / tr; t += gridDim.x, k++) {
                const int s = k % S;
                if (k >= S) ps_mb_wait(&empty[s], ((k / S) - 1) & 1);
                ps_mb_expect(&full[s], bytes);
                ps_bulk_copy(ps_ring + (long long)s * geo.slot_bytes, reinterpret_cast<const unsigned char*>(f.w) + (long long)t * bytes, bytes,
                             &full[s]);
            }
        }
        return;
    }
    int k = 0;
    for (int p = 0; p < n; p++) {
        const pc_phase f = phases[p];
        if (f.rows > 0 && (p == 0 || !(flags & PS_NO_STAGE))) pc_stage_x<true>(f);
        const int tr = ps_tile_rows(geo, f.kind);
        const bool dot = !(flags & PS_NO_DOT) && geo.tile_a == 16 && geo.tile_b == 8;
        for (int t = blockIdx.x; t < f.rows / tr; t += gridDim.x, k++) {
            const int s = k % S;
            ps_mb_wait(&full[s], (k / S) & 1);
            const uint4* tile = reinterpret_cast<const uint4*>(ps_ring + (long long)s * geo.slot_bytes);
            const int r0 = t * tr;
            if (f.kind == 0) {
                const float g = dot ? ps_row<4>(tile + (2 * warp) * (f.cols / 8), lane) : 0.0f;
                const float u = dot ? ps_row<4>(tile + (2 * warp + 1) * (f.cols / 8), lane) : 0.0f;
                __syncwarp();
                if (lane == 0) {
                    ps_mb_arrive(&empty[s]);
                    if (2 * warp + 1 < tr) { // the ring-alone tiles may have fewer rows than warps
                        if (f.mode == 2) {
                            f.y[r0 / 2 + warp] = g / (1.0f + expf(-g)) * u;
                        } else {
                            ps_store(f, r0 + 2 * warp, g);
                            ps_store(f, r0 + 2 * warp + 1, u);
                        }
                    }
                }
            } else {
                const float sum = dot ? ps_row<14>(tile + warp * (f.cols / 8), lane) : 0.0f;
                __syncwarp();
                if (lane == 0) {
                    ps_mb_arrive(&empty[s]);
                    if (warp < tr) ps_store(f, r0 + warp, sum);
                }
            }
        }
        if (p + 1 == n) break;
        pc_sync<true>();
        if (threadIdx.x == 0) {
            __threadfence();
            atomicAdd(bar, 1u);
            const unsigned target = (unsigned)(p + 1) * gridDim.x;
            while (pc_ld_acquire(bar) < target) {
            }
        }
        pc_sync<true>();
    }
}

// ---- pwarp: every warp streams its own rows (step 27, after run54 found a
// fixed cost per tile in pstream's shared ring). One block per SM, 8 warps;
// warp w of block b owns gate/up pairs (2 rows, 4 KB) or down rows (7 KB)
// gw, gw + all warps, ... (gw = 8b + w) of every phase, and keeps PW_SLOTS
// of them in flight in its own slots: lane 0 issues the bulk copy of the
// tile PW_SLOTS ahead (across phases: weights never change) as soon as the
// warp has read a slot. The only handshake is the warp's own wait on a
// slot's mbarrier. Sums as pchain's, bit for bit.
#define PW_SLOTS 3
#define PW_SLOT_BYTES (PC_MAX_COLS * 2) // a down row; a gate/up pair is 2 × 1024 × 2

// A warp's walk over its tiles in chain order: phase p, the warp's i-th unit.
struct pw_cursor {
    int p, u;
};

// Units of phase f (gate|up pairs or down rows).
__device__ __forceinline__ int pw_units(const pc_phase& f) {
    return f.kind == 0 ? f.rows / 2 : f.rows;
}

// Moves c to the warp's next tile at or after it; false past the last phase.
__device__ __forceinline__ bool pw_settle(pw_cursor& c, const pc_phase* phases, int n, int gw, int nw) {
    while (c.p < n) {
        if (gw + c.u * nw < pw_units(phases[c.p])) return true;
        c.p++;
        c.u = 0;
    }
    return false;
}

// Issues the copy of c's tile into slot s and moves c past it.
__device__ __forceinline__ void pw_issue(pw_cursor& c, const pc_phase* phases, int n, int gw, int nw, unsigned char* slot,
                                         unsigned long long* mb) {
    if (!pw_settle(c, phases, n, gw, nw)) return;
    const pc_phase f = phases[c.p];
    const int unit = gw + c.u * nw;
    const unsigned bytes = (f.kind == 0 ? 2 : 1) * f.cols * 2;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // the warp's reads of the slot come first
    ps_mb_expect(mb, bytes);
    ps_bulk_copy(slot, reinterpret_cast<const unsigned char*>(f.w) + (long long)unit * bytes, bytes, mb);
    c.u++;
}

extern "C" __global__ void __launch_bounds__(PC_THREADS, 1) pwarp(const pc_phase* phases, int n, unsigned* bar, int flags) {
    extern __shared__ __align__(128) unsigned char pw_ring[]; // 8 warps × PW_SLOTS × PW_SLOT_BYTES
    __shared__ __align__(8) unsigned long long full[PC_THREADS / 32][PW_SLOTS];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int gw = blockIdx.x * (PC_THREADS / 32) + warp, nw = gridDim.x * (PC_THREADS / 32);
    unsigned char* ring = pw_ring + warp * PW_SLOTS * PW_SLOT_BYTES;
    pw_cursor ahead = {0, 0}; // the next tile to copy (lane 0's)
    if (lane == 0) {
        for (int s = 0; s < PW_SLOTS; s++) ps_mb_init(&full[warp][s], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < PW_SLOTS; s++) pw_issue(ahead, phases, n, gw, nw, ring + s * PW_SLOT_BYTES, &full[warp][s]);
    }
    __syncwarp();
    int k = 0; // tiles this warp has consumed
    for (int p = 0; p < n; p++) {
        const pc_phase f = phases[p];
        if (f.rows > 0 && (p == 0 || !(flags & PS_NO_STAGE))) pc_stage_x<false>(f);
        const bool dot = !(flags & PS_NO_DOT);
        for (int unit = gw; unit < pw_units(f); unit += nw, k++) {
            const int s = k % PW_SLOTS;
            ps_mb_wait(&full[warp][s], (k / PW_SLOTS) & 1);
            const uint4* tile = reinterpret_cast<const uint4*>(ring + s * PW_SLOT_BYTES);
            float a = 0.0f, b = 0.0f;
            if (dot) {
                if (f.kind == 0) {
                    a = ps_row<4>(tile, lane);
                    b = ps_row<4>(tile + f.cols / 8, lane);
                } else {
                    a = ps_row<14>(tile, lane);
                }
            }
            __syncwarp();
            if (lane == 0) {
                pw_issue(ahead, phases, n, gw, nw, ring + s * PW_SLOT_BYTES, &full[warp][s]);
                if (f.kind == 0) {
                    if (f.mode == 2) {
                        f.y[unit] = a / (1.0f + expf(-a)) * b;
                    } else {
                        ps_store(f, 2 * unit, a);
                        ps_store(f, 2 * unit + 1, b);
                    }
                } else {
                    ps_store(f, unit, a);
                }
            }
        }
        if (p + 1 == n) break;
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            atomicAdd(bar, 1u);
            const unsigned target = (unsigned)(p + 1) * gridDim.x;
            while (pc_ld_acquire(bar) < target) {
            }
        }
        __syncthreads();
    }
}
