// pchain.cu: a chain of bf16 matvecs in ONE persistent kernel, phases split by
// grid barriers (docs/perf.md step 25, an experiment record; the engine does
// not load it). Steps 86 and 87 added the deep kernels below and their q8_0
// forms, and pring for the 9B q8_0 FFN; step 88 pring_hx and its trace;
// steps 89-91 its forms up to pring_hx_brl, a DeltaNet layer's three
// products after its mixer; step 92 the mixer itself as a phase
// (pring_hx_brm and its forms).
// Build: nvcc -O3 -arch=sm_90 -cubin -o pchain.cubin pchain.cu
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
// 4 loads per row per lane), kind 1 the down shape (R 1, cols/256 = 14);
// kinds 2 and 3 are the same shapes in q8_0 (pc_unit), which only the
// producer kernels (pfeed, pfreg, pfpre) take; 4 and 5 the 9B preset's
// FFN in q8_0, which only pring takes; 7 the 9B preset's 4096 × 4096
// output projections (ssm_out, attn_output) into the residual, a down
// kind (odd), which only pring_hx_brl and pring_hx_brlp take.
struct pc_phase {
    const uint4* w;
    const float* x;
    float* y;
    const float* norm;
    int rows, cols, kind, mode;
};

// A phase kind's row unit: R rows a warp, C 16-byte chunks a lane a row.
// q8_0 (Q8): w holds the quants, rows × cols int8 row-major, then the block
// scales, rows × cols/32 f16 (the engine's repacked order); a chunk is 16
// quants, half a block, and a unit's scales are SC = 2 R C chunks, which
// the slots hold after its quants. H: the units of a phase a warp holds in
// registers in pfreg and pfpre (the host's pfregHeld).
template <int K>
struct pc_unit;
#define PC_UNIT(K, R_, C_, Q8_, SC_, H_)                         \
    template <>                                                  \
    struct pc_unit<K> {                                          \
        enum { R = R_, C = C_, Q8 = Q8_, SC = SC_, H = H_ }; \
    };
PC_UNIT(0, 4, 4, 0, 0, 2)  // bf16 gate|up, 1,024 columns
PC_UNIT(1, 1, 14, 0, 0, 1) // bf16 down, 3,584 columns
PC_UNIT(2, 4, 2, 1, 16, 2) // q8_0 gate|up
PC_UNIT(3, 1, 7, 1, 14, 1) // q8_0 down
PC_UNIT(4, 2, 8, 1, 32, 0) // q8_0 9B gate|up, 4,096 columns (pring)
PC_UNIT(5, 1, 24, 1, 48, 0) // q8_0 9B down, 12,288 columns (pring)
PC_UNIT(7, 1, 8, 1, 16, 0)  // q8_0 9B output projection, 4,096 columns, a down kind (pring_hx_brl)

// 16-byte chunks of a unit in a slot: its weights, then its scales.
template <int K>
__device__ __forceinline__ constexpr int pc_stride() {
    return pc_unit<K>::R * pc_unit<K>::C * 32 + pc_unit<K>::SC;
}

// The down kinds (their output is the residual, x = y += W h).
__device__ __forceinline__ bool pc_down(int kind) { return kind & 1; }

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

// The norm's 1/rms from each thread's sum of squares: memra_block_sum's
// order, with this kernel's barrier.
template <bool NAMED>
__device__ __forceinline__ float pc_inv_rms(float ss, int cols) {
    ss = memra_warp_sum(ss);
    if ((threadIdx.x & 31) == 0) pc_red[threadIdx.x >> 5] = ss;
    pc_sync<NAMED>();
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < PC_THREADS / 32; w++) t += pc_red[w];
    pc_sync<NAMED>(); // pc_red is rewritten by the next phase
    return rsqrtf(t / cols + PC_EPS);
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
        const float inv = pc_inv_rms<NAMED>(ss, f.cols);
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

// Stores unit u's row sums (each lane's; the butterfly gives all lanes the
// total): lane i stores row i (mode 2: the even lane of each pair stores its
// SwiGLU). With PRE, mode 1 adds the residual yres that the storing lane
// loaded earlier (pfpre) instead of loading it here; with NS each sum is
// multiplied by ns first (pq_dot's).
template <int R, bool PRE, bool NS = false>
__device__ __forceinline__ void pc_store(float (&acc)[R], const pc_phase& f, int u, int lane, float yres, float ns = 1.0f) {
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = NS ? memra_warp_sum(acc[i]) * ns : memra_warp_sum(acc[i]);
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int row = u * R + i;
        if (f.mode == 2) {
            if (i % 2 == 0 && i + 1 < R && lane == i) f.y[row / 2] = acc[i] / (1.0f + expf(-acc[i])) * acc[i + 1];
        } else if (lane == i) {
            f.y[row] = f.mode == 1 ? (PRE ? yres : __ldcg(f.y + row)) + acc[i] : acc[i];
        }
    }
}

// y rows of unit u from buf and the staged x': a lane adds its chunks in
// ascending order, then the warp's xor butterfly (pc_store). Chunk j of the
// lane's unit is buf[j * S]: registers (S 1) or a warp's slot in shared
// memory offset by the lane (pdeep and pfeed, S 32).
template <int R, int C, int S = 1, bool PRE = false, class B>
__device__ __forceinline__ void pc_dot(const B& buf, const pc_phase& f, int u, int lane, float yres = 0.0f) {
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
            const uint4 w = buf[(i * C + c) * S];
            const unsigned int q[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                acc[i] += __uint_as_float(q[k] << 16) * xv[2 * k];
                acc[i] += __uint_as_float(q[k] & 0xffff0000u) * xv[2 * k + 1];
            }
        }
    }
    pc_store<R, PRE>(acc, f, u, lane, yres);
}

// x' in int8 (PQ_X8): blocks of 32 as the weights' blocks, each with its
// f32 scale, written by pq_quantize_x after the staging.
#define PQ_MAX_COLS 12288 // the 9B down projection's input (pring)
__shared__ __align__(16) signed char pq_xq[PQ_MAX_COLS];
__shared__ __align__(16) float pq_xd[PQ_MAX_COLS / 32]; // prg_stage_hq writes it as float4s

// Flag of the q8_0 kernels: the sums take x' quantised to int8 and add
// each chunk's 16 products in one integer dot (dp4a) instead of 16 f32
// products (step 87: after the barrier the q8_0 sums are the chain's
// critical path, ~1 µs a phase). Not the engine's numerics: x' is rounded
// to 8 bits, as ggml's q8_0 product with q8_1 does.
#define PQ_X8 32

// x' float4 i (v) into xq[i] (4 int8), and its block's scale into xd[i /
// 8]: d = max|x'|/127 over the block of 32 (the 8 lanes i & ~7 to i | 7,
// which call this together), q = x'·(1/d) rounded to even. xq and xd are
// pq_xq and pq_xd, or pring_hq's h in int8 in global memory; a lane
// with store false only helps its block's maximum.
__device__ __forceinline__ void pq_quant4(float4 v, int i, unsigned int* xq, float* xd, bool store = true) {
    float a = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) a = fmaxf(a, __shfl_xor_sync(MEMRA_FULL_MASK, a, o));
    const float d = a / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
    const unsigned int q = (__float2int_rn(v.x * id) & 0xff) | (__float2int_rn(v.y * id) & 0xff) << 8 | (__float2int_rn(v.z * id) & 0xff) << 16 |
                           (unsigned int)__float2int_rn(v.w * id) << 24;
    if (!store) return;
    xq[i] = q;
    if ((threadIdx.x & 7) == 0) xd[i / 8] = d;
}

// Quantises the staged x' (cols of them, a multiple of 128, so that every
// warp of a pass is whole) per block of 32, a float4 a thread.
__device__ __forceinline__ void pq_quantize_x(int cols) {
    for (int i = threadIdx.x; i < cols / 4; i += PC_THREADS)
        pq_quant4(reinterpret_cast<const float4*>(pc_xs)[i], i, reinterpret_cast<unsigned int*>(pq_xq), pq_xd);
    pc_sync<true>();
}

// q8_0's pc_dot (kinds 2 and 3): per chunk the 16 quants' sum with x', as
// the engine's memra_mv_dot adds it, times the chunk's block scale sc[i C +
// c] (registers, or pq_slot_scales), added to the row's sum in ascending
// chunk order. With X8 the chunk's sum is the integer dot with x' in int8,
// times both blocks' scales. With NS each row's sum is multiplied by ns
// before it is stored (pring_hx: x' quantised before its norm's 1/rms).
template <int R, int C, int S = 1, bool PRE = false, bool X8 = false, bool NS = false, class B, class D>
__device__ __forceinline__ void pq_dot(const B& buf, const D& sc, const pc_phase& f, int u, int lane, float yres = 0.0f, float ns = 1.0f) {
    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0.0f;
#pragma unroll
    for (int c = 0; c < C; c++) {
        if (X8) {
            const int4 xq = reinterpret_cast<const int4*>(pq_xq)[c * 32 + lane];
            const float xd = pq_xd[(c * 32 + lane) >> 1];
#pragma unroll
            for (int i = 0; i < R; i++) {
                const uint4 w = buf[(i * C + c) * S];
                int d = __dp4a((int)w.x, xq.x, 0);
                d = __dp4a((int)w.y, xq.y, d);
                d = __dp4a((int)w.z, xq.z, d);
                d = __dp4a((int)w.w, xq.w, d);
                acc[i] += sc[i * C + c] * xd * (float)d;
            }
            continue;
        }
        const float4* xp = reinterpret_cast<const float4*>(pc_xs) + 4 * (c * 32 + lane);
        const float4 xv[4] = {xp[0], xp[1], xp[2], xp[3]};
#pragma unroll
        for (int i = 0; i < R; i++) {
            const uint4 w = buf[(i * C + c) * S];
            const unsigned int q[4] = {w.x, w.y, w.z, w.w};
            float s = 0.0f;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const unsigned int b = q[k] ^ 0x80808080u;
                s += memra_q8_val(b, 0) * xv[k].x;
                s += memra_q8_val(b, 1) * xv[k].y;
                s += memra_q8_val(b, 2) * xv[k].z;
                s += memra_q8_val(b, 3) * xv[k].w;
            }
            acc[i] += sc[i * C + c] * s;
        }
    }
    pc_store<R, PRE, NS>(acc, f, u, lane, yres, ns);
}

// A q8_0 unit's scales read from its slot: chunk c of row i is lane's
// 16 quants of block (c 32 + lane)/2 of the row, whose cols/32 = 16 C f16
// scales follow the rows before it.
struct pq_slot_scales {
    const unsigned short* h;
    int lane;
    __device__ __forceinline__ float operator[](int j) const { return memra_f16_to_f32(h[16 * j + lane / 2]); }
};

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

// ---- pdeep: every warp's units of the next two phases in shared memory
// (step 86). pstream's and pwarp's bulk copies carried a fixed cost each
// (~20 GB/s an SM in few-KB copies), and pchain's register prefetch reaches
// one unit of one phase ahead. Here each lane copies its own 16-byte chunks
// with cp.async (LDGSTS, sm_80): a warp's whole share of phase p + 2 leaves
// as soon as it has summed phase p, into the slot that p's units held, so
// two phases stream through every grid barrier while x is staged and summed
// after it. A lane reads back only the chunks it copied, in pc_dot's order,
// so it waits on its own copy groups, no warp waits on another, and the
// sums are pchain's bit for bit. One block an SM: 8 warps that copy and sum,
// each with a slot for the even phases and one for the odd ones, sized by
// the host (a warp's most units of a phase of that parity), and a barrier
// warp.
// The deep kernels' slots, in dynamic shared memory: 8 warps × (slot0 + slot1).
extern __shared__ __align__(128) uint4 pd_ring[];

__device__ __forceinline__ void pd_copy16(uint4* dst, const uint4* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(ps_smem(dst)), "l"(src) : "memory");
}

// Copies unit u of phase f (kind K) to d: its weights' chunk j of a lane to
// d + j 32 + lane, and a q8_0 unit's SC chunks of scales after them, chunk
// j by lane j mod 32.
template <int K>
__device__ __forceinline__ void pd_fill_unit(uint4* d, const pc_phase& f, int u, int lane) {
    using U = pc_unit<K>;
    const int chunks = U::Q8 ? f.cols / 16 : f.cols / 8;
#pragma unroll
    for (int i = 0; i < U::R; i++)
#pragma unroll
        for (int c = 0; c < U::C; c++) pd_copy16(d + (i * U::C + c) * 32 + lane, f.w + (long long)(u * U::R + i) * chunks + c * 32 + lane);
    if (U::Q8) {
        const uint4* sc = reinterpret_cast<const uint4*>(reinterpret_cast<const unsigned char*>(f.w) + (long long)f.rows * f.cols);
        for (int j = lane; j < U::SC; j += 32) pd_copy16(d + U::R * U::C * 32 + j, sc + (long long)u * U::SC + j);
    }
}

// Copies the warp's units of phase f into slot, its k-th at k pc_stride.
template <int K>
__device__ __forceinline__ void pd_fill(uint4* slot, const pc_phase& f, int gw, int nw, int lane) {
    for (int u = gw, k = 0; u < f.rows / pc_unit<K>::R; u += nw, k++) pd_fill_unit<K>(slot + k * pc_stride<K>(), f, u, lane);
}

// pdeep's fill of phase f, committed as one group, empty or not, so that
// "all but the newest group" is always the phase to sum. bf16 kinds only: a
// lane reads back only its own copies there, and a q8_0 unit's scales are
// other lanes' (the host keeps q8_0 chains from pdeep).
__device__ __forceinline__ void pd_fill_phase(uint4* slot, const pc_phase& f, int gw, int nw, int lane) {
    if (f.kind == 0) {
        pd_fill<0>(slot, f, gw, nw, lane);
    } else {
        pd_fill<1>(slot, f, gw, nw, lane);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// The sums of unit u of a kind-K phase from its place p in a slot (x8:
// PQ_X8's int8 x'; NS: each sum times ns, pq_dot's).
template <int K, bool NS = false>
__device__ __forceinline__ void pd_unit_sums(const uint4* p, const pc_phase& f, int u, int lane, bool x8, float ns = 1.0f) {
    using U = pc_unit<K>;
    if (U::Q8) {
        const pq_slot_scales sc = {reinterpret_cast<const unsigned short*>(p + U::R * U::C * 32), lane};
        if (x8) {
            pq_dot<U::R, U::C, 32, false, true, NS>(p + lane, sc, f, u, lane, 0.0f, ns);
        } else {
            pq_dot<U::R, U::C, 32>(p + lane, sc, f, u, lane);
        }
    } else {
        pc_dot<U::R, U::C, 32>(p + lane, f, u, lane);
    }
}

template <int K>
__device__ __forceinline__ void pd_sums(const uint4* slot, const pc_phase& f, int gw, int nw, int lane, bool x8 = false) {
    for (int u = gw, k = 0; u < f.rows / pc_unit<K>::R; u += nw, k++) pd_unit_sums<K>(slot + k * pc_stride<K>(), f, u, lane, x8);
}

// Flags of the deep kernels beside PS_NO_STAGE and PS_NO_DOT: how a block
// arrives at the grid barrier. By default __threadfence + atomicAdd; PD_RED
// red.release; PD_RELAXED a plain atomicAdd with no fence (timing only: the
// stores are then not ordered before the arrival); PD_NOBAR not at all, and
// nobody waits (timing only: phases overlap across blocks).
#define PD_RED 4
#define PD_RELAXED 8
#define PD_NOBAR 16

// The arriving thread's part of the grid barrier after phase p: its
// arrival, then (after whatever the kernel does between) its wait.
__device__ __forceinline__ void pd_arrive(unsigned* bar, int flags) {
    if (flags & PD_NOBAR) return;
    if (flags & PD_RED) {
        pc_red_release(bar);
    } else if (flags & PD_RELAXED) {
        atomicAdd(bar, 1u);
    } else {
        __threadfence();
        atomicAdd(bar, 1u);
    }
}

__device__ __forceinline__ void pd_await(const unsigned* bar, int p, int flags) {
    if (flags & PD_NOBAR) return;
    const unsigned target = (unsigned)(p + 1) * gridDim.x;
    while (pc_ld_acquire(bar) < target) {
    }
}

// The consumer threads' grid barrier after phase p: every consumer's
// stores done, thread 0 arrives for the block and waits for all.
__device__ __forceinline__ void pd_grid_sync(unsigned* bar, int p, int flags) {
    pc_sync<true>();
    if (threadIdx.x == 0) {
        pd_arrive(bar, flags);
        pd_await(bar, p, flags);
    }
    pc_sync<true>();
}

// slot0 and slot1: 16-byte chunks per warp for the even and odd phases.
// Warps 0-7 copy and sum; warp 8 only arrives at and waits on the grid
// barrier, and arrives as the copies of phase p + 2 start (it passes the
// same block barrier first): with thread 0 of a copying warp arriving after
// its copies (run196), or warp 8 arriving after all of them (run197), the
// copies and the barrier added up.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pdeep(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                       int slot1) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (warp == PC_THREADS / 32) {
        for (int p = 0; p + 1 < n; p++) {
            __syncthreads(); // every copying warp has stored phase p
            if (lane == 0) {
                pd_arrive(bar, flags);
                pd_await(bar, p, flags);
            }
            __syncthreads();
        }
        return;
    }
    const int gw = blockIdx.x * (PC_THREADS / 32) + warp, nw = gridDim.x * (PC_THREADS / 32);
    uint4* const mine = pd_ring + warp * (slot0 + slot1); // the even phases' slot, then the odd ones'
    pd_fill_phase(mine, phases[0], gw, nw, lane);
    if (n > 1) {
        pd_fill_phase(mine + slot0, phases[1], gw, nw, lane);
    } else {
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int p = 0;; p++) {
        const pc_phase f = phases[p];
        if (f.rows > 0 && (p == 0 || !(flags & PS_NO_STAGE))) pc_stage_x<true>(f);
        uint4* const slot = mine + (p & 1) * slot0;
        asm volatile("cp.async.wait_group 1;" ::: "memory"); // this lane's copies of phase p have landed
        if (!(flags & PS_NO_DOT)) {
            if (f.kind == 0) {
                pd_sums<0>(slot, f, gw, nw, lane);
            } else {
                pd_sums<1>(slot, f, gw, nw, lane);
            }
        }
        if (p + 1 == n) break;
        __syncthreads(); // the barrier warp arrives for the block while
        if (p + 2 < n) { // the copies of phase p + 2 are issued
            pd_fill_phase(slot, phases[p + 2], gw, nw, lane);
        } else {
            asm volatile("cp.async.commit_group;" ::: "memory");
        }
        __syncthreads(); // the barrier warp has seen every block's arrival
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// ---- pfeed: pdeep's slots filled by producer warps (step 86). In pdeep
// (run196-run198) the copies of phase p + 2 sat in the copying warps'
// critical path: moving only the arrival at the barrier cut a phase from
// 6.5 to 5.6 µs, as if issuing a copy stalls with that much in flight (not
// timed apart). Here the warps after the 8 consumers (one in run199-run203,
// up to 4) issue every copy, slot by slot in chain order as the consumers
// free them, and stall alone; each copy lands on the slot's mbarrier
// (cp.async.mbarrier.arrive.noinc, one arrival per producer lane), which
// its consumer warp waits on. The consumers, warps 0-7, sum as pdeep's do
// (the same bits) and pass the grid barrier as pchain does (thread 0,
// which has no copies of its own in flight).
__device__ __forceinline__ void pf_arrive_on_copies(unsigned long long* mb) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ps_smem(mb)) : "memory");
}

// A block's slot mbarriers: full[w][s] completes when the producer's copies
// of warp w's units into slot s have landed, empty[w][s] when warp w has
// read them.
struct pf_bars {
    unsigned long long full[PC_THREADS / 32][2], empty[PC_THREADS / 32][2];
};

__device__ __forceinline__ void pf_init(pf_bars& b) {
    if (threadIdx.x == 0) {
        for (int w = 0; w < PC_THREADS / 32; w++)
            for (int s = 0; s < 2; s++) {
                ps_mb_init(&b.full[w][s], 32); // the producer's lanes
                ps_mb_init(&b.empty[w][s], 1); // the consumer warp's lane 0
            }
    }
    __syncthreads();
}

// Producer warp k of P: every phase's copies in chain order for consumer
// warps k, k + P, ..., each slot's as soon as its warp has read what it held
// two phases before. K0 is the kernel's gate|up kind (0 bf16, 2 q8_0), K0 +
// 1 its down kind: a kernel is built for one weight type, so that the other
// type's registers (q8_0's scales) do not count against it.
template <int K0>
__device__ __forceinline__ void pf_produce(pf_bars& b, uint4* ring, const pc_phase* phases, int n, int slot0, int slot1, int lane, int k,
                                           int P) {
    const int nw = gridDim.x * (PC_THREADS / 32);
    for (int p = 0; p < n; p++) {
        const pc_phase f = phases[p];
        const int s = p & 1;
        for (int w = k; w < PC_THREADS / 32; w += P) {
            if (p >= 2) ps_mb_wait(&b.empty[w][s], ((p >> 1) - 1) & 1);
            uint4* slot = ring + w * (slot0 + slot1) + s * slot0;
            const int gw = blockIdx.x * (PC_THREADS / 32) + w;
            if (pc_down(f.kind)) {
                pd_fill<K0 + 1>(slot, f, gw, nw, lane);
            } else {
                pd_fill<K0>(slot, f, gw, nw, lane);
            }
            pf_arrive_on_copies(&b.full[w][s]);
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// pfeed's consumers: the sums read the weights from the slots.
template <int K0>
__device__ __forceinline__ void pf_consume(pf_bars& b, const uint4* ring, const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                           int slot1, int warp, int lane) {
    const int gw = blockIdx.x * (PC_THREADS / 32) + warp, nw = gridDim.x * (PC_THREADS / 32);
    for (int p = 0;; p++) {
        const pc_phase f = phases[p];
        if (f.rows > 0 && (p == 0 || !(flags & PS_NO_STAGE))) {
            pc_stage_x<true>(f);
            if (K0 == 2 && (flags & PQ_X8)) pq_quantize_x(f.cols);
        }
        const int s = p & 1;
        const uint4* slot = ring + warp * (slot0 + slot1) + s * slot0;
        ps_mb_wait(&b.full[warp][s], (p >> 1) & 1);
        if (!(flags & PS_NO_DOT)) {
            if (pc_down(f.kind)) {
                pd_sums<K0 + 1>(slot, f, gw, nw, lane, flags & PQ_X8);
            } else {
                pd_sums<K0>(slot, f, gw, nw, lane, flags & PQ_X8);
            }
        }
        __syncwarp();
        if (lane == 0) ps_mb_arrive(&b.empty[warp][s]);
        if (p + 1 == n) break;
        pd_grid_sync(bar, p, flags);
    }
}

// ---- pfreg: pfeed with each warp's units of the next phase moved from its
// slot into registers between arriving at the grid barrier and waiting on
// it (step 86). In pfeed (run199) the sums read their weights from shared
// memory after the barrier and took ~1.6 µs a phase (5.26 whole, 3.66
// without them); here only x is read after it, as in pchain. A warp holds at
// most 2 units of a phase (the host checks), in b0 and b1. The loads are
// volatile so that ptxas cannot sink them past the wait (step 70), and so
// PS_NO_DOT leaves out only the sums here, not the loads from the slots.
__device__ __forceinline__ uint4 pr_lds16(const uint4* p) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(ps_smem(p)) : "memory");
    return v;
}

__device__ __forceinline__ unsigned short pr_lds2(const unsigned short* p) {
    unsigned short v;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(ps_smem(p)) : "memory");
    return v;
}

// A q8_0 unit's scales a lane holds: its R C chunks' (pq_dot's sc).
#define PQ_SC 8

// Unit k of the warp (k < H) from its slot into buf, and a q8_0 unit's
// scales into sc (pq_slot_scales's order).
template <int K>
__device__ __forceinline__ void pr_take(uint4 (&buf)[PC_BUF], float (&sc)[PQ_SC], const uint4* slot, int k, int lane) {
    using U = pc_unit<K>;
    const uint4* p = slot + k * pc_stride<K>();
#pragma unroll
    for (int j = 0; j < U::R * U::C; j++) buf[j] = pr_lds16(p + j * 32 + lane);
    if (U::Q8) {
        const unsigned short* h = reinterpret_cast<const unsigned short*>(p + U::R * U::C * 32);
#pragma unroll
        for (int j = 0; j < U::R * U::C; j++) sc[j] = memra_f16_to_f32(pr_lds2(h + 16 * j + lane / 2));
    }
}

template <int K>
__device__ __forceinline__ void pr_take_units(uint4 (&b0)[PC_BUF], uint4 (&b1)[PC_BUF], float (&s0)[PQ_SC], float (&s1)[PQ_SC], const uint4* slot,
                                              const pc_phase& f, int gw, int nw, int lane) {
    using U = pc_unit<K>;
    if (gw < f.rows / U::R) pr_take<K>(b0, s0, slot, 0, lane);
    if (U::H > 1 && gw + nw < f.rows / U::R) pr_take<K>(b1, s1, slot, 1, lane);
}

// Waits for warp's slot of phase p, takes its units into b0 and b1 (a
// q8_0 phase's scales into s0 and s1), and frees the slot.
template <int K0>
__device__ __forceinline__ void pr_take_phase(uint4 (&b0)[PC_BUF], uint4 (&b1)[PC_BUF], float (&s0)[PQ_SC], float (&s1)[PQ_SC], pf_bars& b,
                                              const uint4* ring, const pc_phase& f, int p, int slot0, int slot1, int warp, int gw, int nw,
                                              int lane) {
    const int s = p & 1;
    const uint4* slot = ring + warp * (slot0 + slot1) + s * slot0;
    ps_mb_wait(&b.full[warp][s], (p >> 1) & 1);
    if (pc_down(f.kind)) {
        pr_take_units<K0 + 1>(b0, b1, s0, s1, slot, f, gw, nw, lane);
    } else {
        pr_take_units<K0>(b0, b1, s0, s1, slot, f, gw, nw, lane);
    }
    __syncwarp();
    if (lane == 0) ps_mb_arrive(&b.empty[warp][s]);
}

// ---- pfpre: pfreg with what a phase reads after its barrier besides x
// loaded between arriving and waiting too (step 86): the norm weights of
// the thread's float4s of x (held in registers, so x is normalised as it is
// staged, in pc_stage_x's order of operations) and, for the down rows, the
// residual the storing lane adds to. In run200 the staging and the sums
// after the barrier cost pfreg ~1.5 µs a phase over its stream. Safe here
// because in these chains the residual was last written two phases back
// (the FFN) or by the same lane (the down chain), and the norm weights are
// never written. The loads are volatile, as pfreg's are. A normed phase
// has at most PC_THREADS float4s (1,024 columns: one a thread), so that
// one float4 of weights a thread is held through the wait (168 registers,
// ptxas's bound for 288 to 384 threads, spilled with four).
#define PR_V 4 // float4s of x a thread stages: PC_MAX_COLS / 4 / PC_THREADS, rounded up

__device__ __forceinline__ float4 pr_ldg4(const float4* p) {
    float4 v;
    asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ float pr_ldcg(const float* p) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
    return v;
}

// The norm weights of this thread's float4 of phase f's x, and lane 0's
// residual of its down row.
__device__ __forceinline__ void pr_pre(float4& nv, float& yres, const pc_phase& f, int gw, int lane) {
    if (f.norm && threadIdx.x < f.cols / 4) nv = pr_ldg4(reinterpret_cast<const float4*>(f.norm) + threadIdx.x);
    if (pc_down(f.kind) && f.mode == 1 && gw < f.rows && lane == 0) yres = pr_ldcg(f.y + gw);
}

// pc_stage_x<true> with the norm weights in nv: each thread keeps its
// float4s of x and stores them normalised, (x·inv)·w as pc_stage_x rounds
// (a normed x is one float4 a thread, v[0]).
__device__ __forceinline__ void pr_stage_x(const pc_phase& f, const float4& nv) {
    const float4* x4 = reinterpret_cast<const float4*>(f.x);
    float4 v[PR_V];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < PR_V; k++) {
        const int i = threadIdx.x + k * PC_THREADS;
        if (i < f.cols / 4) {
            v[k] = __ldcg(x4 + i);
            ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
            if (!f.norm) reinterpret_cast<float4*>(pc_xs)[i] = v[k];
        }
    }
    if (f.norm) {
        const float inv = pc_inv_rms<true>(ss, f.cols);
        if (threadIdx.x < f.cols / 4)
            reinterpret_cast<float4*>(pc_xs)[threadIdx.x] =
                make_float4(v[0].x * inv * nv.x, v[0].y * inv * nv.y, v[0].z * inv * nv.z, v[0].w * inv * nv.w);
    }
    pc_sync<true>();
}

// The sums of the warp's units of a kind-K phase held in b0 and b1 (s0
// and s1); with PRE a down row adds the residual in yres.
template <int K, bool PRE>
__device__ __forceinline__ void pr_sums(const uint4 (&b0)[PC_BUF], const uint4 (&b1)[PC_BUF], const float (&s0)[PQ_SC], const float (&s1)[PQ_SC],
                                        const pc_phase& f, int gw, int nw, int lane, float yres, bool x8) {
    using U = pc_unit<K>;
    constexpr bool P = PRE && U::R == 1;
    if (gw < f.rows / U::R) {
        if (U::Q8 && x8) {
            pq_dot<U::R, U::C, 1, P, true>(b0, s0, f, gw, lane, yres);
        } else if (U::Q8) {
            pq_dot<U::R, U::C, 1, P>(b0, s0, f, gw, lane, yres);
        } else {
            pc_dot<U::R, U::C, 1, P>(b0, f, gw, lane, yres);
        }
    }
    if (U::H > 1 && gw + nw < f.rows / U::R) {
        if (U::Q8 && x8) {
            pq_dot<U::R, U::C, 1, false, true>(b1, s1, f, gw + nw, lane);
        } else if (U::Q8) {
            pq_dot<U::R, U::C>(b1, s1, f, gw + nw, lane);
        } else {
            pc_dot<U::R, U::C>(b1, f, gw + nw, lane);
        }
    }
}

// pfreg's consumers, and pfpre's with PRE.
template <int K0, bool PRE>
__device__ __forceinline__ void pr_consume(pf_bars& b, const uint4* ring, const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                           int slot1, int warp, int lane) {
    const int gw = blockIdx.x * (PC_THREADS / 32) + warp, nw = gridDim.x * (PC_THREADS / 32);
    uint4 b0[PC_BUF], b1[PC_BUF];
    float s0[PQ_SC], s1[PQ_SC];
    float4 nv = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float yres = 0.0f;
    pc_phase f = phases[0];
    pr_take_phase<K0>(b0, b1, s0, s1, b, ring, f, 0, slot0, slot1, warp, gw, nw, lane);
    if (PRE) pr_pre(nv, yres, f, gw, lane);
    for (int p = 0;; p++) {
        if (f.rows > 0 && (p == 0 || !(flags & PS_NO_STAGE))) {
            if (PRE) {
                pr_stage_x(f, nv);
            } else {
                pc_stage_x<true>(f);
            }
            if (K0 == 2 && (flags & PQ_X8)) pq_quantize_x(f.cols);
        }
        if (!(flags & PS_NO_DOT)) {
            if (pc_down(f.kind)) {
                pr_sums<K0 + 1, PRE>(b0, b1, s0, s1, f, gw, nw, lane, yres, flags & PQ_X8);
            } else {
                pr_sums<K0, PRE>(b0, b1, s0, s1, f, gw, nw, lane, yres, flags & PQ_X8);
            }
        }
        if (p + 1 == n) break;
        pc_sync<true>();
        if (threadIdx.x == 0) pd_arrive(bar, flags);
        f = phases[p + 1];
        pr_take_phase<K0>(b0, b1, s0, s1, b, ring, f, p + 1, slot0, slot1, warp, gw, nw, lane);
        if (PRE) pr_pre(nv, yres, f, gw, lane);
        if (threadIdx.x == 0) pd_await(bar, p, flags);
        pc_sync<true>();
    }
}

// The producer kernels' body: warps 0-7 consume as pfeed (MODE 0), pfreg
// (1) or pfpre (2) does; the block's other warps (1, 2 or 4: PF_MAX_THREADS)
// produce, each for an equal share of the consumers.
#define PF_MAX_THREADS (PC_THREADS + 4 * 32)

template <int MODE, int K0 = 0>
__device__ __forceinline__ void pf_kernel(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0, int slot1) {
    __shared__ pf_bars b;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    pf_init(b);
    if (warp >= PC_THREADS / 32) {
        pf_produce<K0>(b, pd_ring, phases, n, slot0, slot1, lane, warp - PC_THREADS / 32, blockDim.x / 32 - PC_THREADS / 32);
    } else if (MODE == 0) {
        pf_consume<K0>(b, pd_ring, phases, n, bar, flags, slot0, slot1, warp, lane);
    } else {
        pr_consume<K0, MODE == 2>(b, pd_ring, phases, n, bar, flags, slot0, slot1, warp, lane);
    }
}

extern "C" __global__ void __launch_bounds__(PF_MAX_THREADS, 1) pfeed(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                       int slot1) {
    pf_kernel<0>(phases, n, bar, flags, slot0, slot1);
}

extern "C" __global__ void __launch_bounds__(PF_MAX_THREADS, 1) pfreg(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                       int slot1) {
    pf_kernel<1>(phases, n, bar, flags, slot0, slot1);
}

extern "C" __global__ void __launch_bounds__(PF_MAX_THREADS, 1) pfpre(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                       int slot1) {
    pf_kernel<2>(phases, n, bar, flags, slot0, slot1);
}

// The same three kernels on q8_0 chains (kinds 2 and 3 only).
extern "C" __global__ void __launch_bounds__(PF_MAX_THREADS, 1) pfeed_q8(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                          int slot1) {
    pf_kernel<0, 2>(phases, n, bar, flags, slot0, slot1);
}

extern "C" __global__ void __launch_bounds__(PF_MAX_THREADS, 1) pfreg_q8(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                          int slot1) {
    pf_kernel<1, 2>(phases, n, bar, flags, slot0, slot1);
}

extern "C" __global__ void __launch_bounds__(PF_MAX_THREADS, 1) pfpre_q8(const pc_phase* phases, int n, unsigned* bar, int flags, int slot0,
                                                                          int slot1) {
    pf_kernel<2, 2>(phases, n, bar, flags, slot0, slot1);
}

// ---- pring: the 9B preset's FFN in q8_0 (gate|up 24576 × 4096 with the
// pre-norm and the SwiGLU, down 4096 × 12288 into the residual; step 87).
// A phase is 400-800 KB an SM there, more than pfeed's slots of whole
// phases hold, so each consumer warp has a ring of `slots` unit slots
// (a unit: a gate/up pair, or a down row, with its scales), which the
// producer warp fills in chain order across phases as they free: the ring
// streams through every grid barrier, and a phase's first sums wait only
// for x. The sums take x' in int8 (PQ_X8's dp4a, staged and quantised in
// one pass), read the weights from the slots (pfeed's way) and store as
// pc_store does.
#define PRG_MAX_SLOTS 4

struct prg_bars {
    unsigned long long full[PC_THREADS / 32][PRG_MAX_SLOTS], empty[PC_THREADS / 32][PRG_MAX_SLOTS];
};

// x' = x or rmsnorm(x)·norm (pc_stage_x's rounding), quantised as
// pq_quantize_x does, from registers: no f32 copy in shared memory. cols is
// a multiple of 128 and at most PQ_MAX_COLS (12 float4s a thread).
__device__ __forceinline__ void prg_stage(const pc_phase& f) {
    const float4* x4 = reinterpret_cast<const float4*>(f.x);
    float4 v[PQ_MAX_COLS / 4 / PC_THREADS];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < PQ_MAX_COLS / 4 / PC_THREADS; k++) {
        const int i = threadIdx.x + k * PC_THREADS;
        if (i < f.cols / 4) {
            v[k] = __ldcg(x4 + i);
            ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
        }
    }
    const float inv = f.norm ? pc_inv_rms<true>(ss, f.cols) : 1.0f;
#pragma unroll
    for (int k = 0; k < PQ_MAX_COLS / 4 / PC_THREADS; k++) {
        const int i = threadIdx.x + k * PC_THREADS;
        if (i < f.cols / 4) {
            float4 a = v[k];
            if (f.norm) {
                const float4 w = __ldg(reinterpret_cast<const float4*>(f.norm) + i);
                a = make_float4(a.x * inv * w.x, a.y * inv * w.y, a.z * inv * w.z, a.w * inv * w.w);
            }
            pq_quant4(a, i, reinterpret_cast<unsigned int*>(pq_xq), pq_xd);
        }
    }
    pc_sync<true>();
}

// pring_hq: h is quantised once, by the blocks that write it (each block's
// gate|up units are then whole groups of 32 consecutive outputs, which it
// quantises after its sums), and a down phase copies h in int8 instead of
// staging and quantising all of it in every block. h in int8 follows h in
// memory: rows/2 floats of h, then its int8, then one f32 scale a 32. A
// kernel of its own, not a flag of pring's: with both walks in one kernel
// ptxas (nvcc 13) spilled 56 bytes, and pring slowed by 17% (run214).

// h in int8 and its scales after the n floats of h.
__device__ __forceinline__ unsigned int* prg_hq(float* h, int n) { return reinterpret_cast<unsigned int*>(h + n); }
__device__ __forceinline__ float* prg_hd(float* h, int n) { return reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(h + n) + n); }

// pring_hx: pring_hq with the gate|up phases' x' quantised once too, by
// the blocks that write x. The norm's 1/rms is one scalar for all of x,
// so x' can be rounded before it is applied: a gate|up phase takes x·w
// (w the norm weights) in int8 per 32 and multiplies each row's sum by
// 1/rms after the butterfly, 1/rms coming from x's sums of squares per
// 32. A down phase's blocks then each take whole groups of 32 rows (as
// pring_hq's gate|up blocks take groups of h), and after their sums warp 0
// quantises its groups of x with the next phase's norm weights and stores
// each group's sum of squares; the next gate|up phase copies 4 KB of int8,
// 512 B of scales and 512 B of sums instead of staging, normalising and
// quantising 16 KB of f32 (step 88). Not pring's numerics: x·w is rounded
// to 8 bits, then scaled by 1/rms. x in int8, its scales and its sums
// follow x in memory as h's int8 and scales follow h (prg_hs). Unlike
// pring, it needs the chain to alternate gate|up and down phases and every
// gate|up phase to have its norm weights (the host's chains do).
__device__ __forceinline__ float* prg_hs(float* x, int n) { return prg_hd(x, n) + n / 32; }

// A gate|up phase's sums of squares per 32 of x (pring_hx).
__shared__ __align__(16) float prg_ss[PQ_MAX_COLS / 32];

// A down phase's x' in pring_hq, or (SS) a gate|up phase's in pring_hx:
// x's int8 and scales copied into pq_xq and pq_xd (cols/16 int4s and
// cols/32 floats, read from the L2), and with SS its sums of squares into
// prg_ss.
template <bool SS = false>
__device__ __forceinline__ void prg_stage_hq(const pc_phase& f) {
    float* h = const_cast<float*>(f.x);
    const int4* q = reinterpret_cast<const int4*>(prg_hq(h, f.cols));
    for (int i = threadIdx.x; i < f.cols / 16; i += PC_THREADS) reinterpret_cast<int4*>(pq_xq)[i] = __ldcg(q + i);
    const float4* d = reinterpret_cast<const float4*>(prg_hd(h, f.cols));
    for (int i = threadIdx.x; i < f.cols / 128; i += PC_THREADS) reinterpret_cast<float4*>(pq_xd)[i] = __ldcg(d + i);
    if (SS) {
        const float4* ss = reinterpret_cast<const float4*>(prg_hs(h, f.cols));
        for (int i = threadIdx.x; i < f.cols / 128; i += PC_THREADS) reinterpret_cast<float4*>(prg_ss)[i] = __ldcg(ss + i);
    }
    pc_sync<true>();
}

// pring_hx_brs's staging of prg_stage_hq<SS>'s bytes: thread 0 copies
// x's int8, its scales and (SS) its sums of squares with one bulk copy
// each (the TMA, PTX 8.0), counted on mb, and every consumer thread waits
// for mb's phase of parity (step 90: under pring_hx_br's stream the 16-byte
// loads of a 5 KB staging take twice as long as under pring_hx_er's; if
// they queue behind the ring's copies in the SM, bulk copies skip that
// queue. They were no faster: rejected). The fences: the consumers' last reads
// of the staging buffers (ordered by the grid barrier's block barrier)
// before the async proxy's writes, and the other blocks' stores, acquired
// through the grid barrier, before its reads.
template <bool SS = false>
__device__ __forceinline__ void prg_stage_bulk(const pc_phase& f, unsigned long long* mb, unsigned parity) {
    if (threadIdx.x == 0) {
        float* h = const_cast<float*>(f.x);
        const unsigned q = f.cols, d = f.cols / 32 * 4;
        asm volatile("fence.proxy.async;" ::: "memory");
        ps_mb_expect(mb, q + d + (SS ? d : 0));
        ps_bulk_copy(pq_xq, prg_hq(h, f.cols), q, mb);
        ps_bulk_copy(pq_xd, prg_hd(h, f.cols), d, mb);
        if (SS) ps_bulk_copy(prg_ss, prg_hs(h, f.cols), d, mb);
    }
    ps_mb_wait(mb, parity);
}

// pring_hx's rounding: x float4 i (v) times its norm weights (w) into xq
// and xd as pq_quant4 rounds, and its block of 32's sum of squares (in
// one order: each float4's by fmaf, then the 8 lanes' xor butterfly) into
// xs[i / 8]. The 8 lanes i & ~7 to i | 7 call it together; a lane with
// store false only helps.
__device__ __forceinline__ void prg_quant_xn(float4 v, float4 w, int i, unsigned int* xq, float* xd, float* xs, bool store) {
    float ss = fmaf(v.w, v.w, fmaf(v.z, v.z, fmaf(v.y, v.y, v.x * v.x)));
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) ss += __shfl_xor_sync(MEMRA_FULL_MASK, ss, o);
    pq_quant4(make_float4(v.x * w.x, v.y * w.y, v.z * w.z, v.w * w.w), i, xq, xd, store);
    if (store && (threadIdx.x & 7) == 0) xs[i / 8] = ss;
}

// The chain's first gate|up phase in pring_hx, whose x no down phase
// wrote: every block rounds all of it from f32 into pq_xq, pq_xd and
// prg_ss (cols a multiple of 128, so every warp of a pass is whole).
__device__ __forceinline__ void prg_stage_xn(const pc_phase& f) {
    const float4* x4 = reinterpret_cast<const float4*>(f.x);
    const float4* w4 = reinterpret_cast<const float4*>(f.norm);
    for (int i = threadIdx.x; i < f.cols / 4; i += PC_THREADS)
        prg_quant_xn(__ldcg(x4 + i), __ldg(w4 + i), i, reinterpret_cast<unsigned int*>(pq_xq), pq_xd, prg_ss, true);
    pc_sync<true>();
}

// 1/rms of a gate|up phase's x in pring_hx from prg_ss, added in one order
// (a float4 a lane, then memra_warp_sum) by every warp of every block, so
// all of them scale by the same bits.
__device__ __forceinline__ float prg_inv(int cols) {
    float t = 0.0f;
    for (int i = threadIdx.x & 31; i < cols / 128; i += 32) {
        const float4 s = reinterpret_cast<const float4*>(prg_ss)[i];
        t += (s.x + s.y) + (s.z + s.w);
    }
    return rsqrtf(memra_warp_sum(t) / cols + PC_EPS);
}

// Flag of pring_hx: the host stores both matrices in the order the grid
// takes their units (prg_wrow), so that with each block on its own groups
// the grid still sweeps a matrix in order, as pring's walk does (pring_hq's
// first walk, whole groups a block, slowed the stream by 45%: run213).
// Without it unit u is unit u of the matrix.
#define PRG_PERM 64

// Flags of pring_hx for timing only (its results are then wrong): with
// PRG_NO_EPI warp 0 quantises nothing after the sums (h's and x's int8
// copies keep what they held); with PRG_NO_QSTORE it quantises as ever but
// stores nothing. Step 88: what the epilogue costs the phase, and whether
// its stores are that cost.
#define PRG_NO_EPI 128
#define PRG_NO_QSTORE 256

// Flag of pring_hx (results unchanged): the producer starts no new round of
// copies (a unit for each warp) from the block's sums' end to its next
// phase's x staged (prg_hold, set and cleared by thread 0; a round under
// way finishes, and its 32 lanes spin on the flag meanwhile), so that the
// epilogue's stores, the grid barrier and the staging queue behind fewer
// copies (run225: the window between two phases' sums took as long
// without the epilogue). Measured slower (runs 226, 227; perf.md step 88).
#define PRG_HOLD 512
__shared__ volatile int prg_hold;

// A warp's units of a phase: n of them, the k-th prg_unit(k). The grid's
// warps take units in turn (base + k step), but in pring_hq's gate|up
// phases (G), whose groups of 32 units (32 consecutive outputs of h) go to
// the blocks in turn (group g to block g mod grid, so that the grid still
// sweeps the matrix in order; run213's whole groups a block, contiguous,
// slowed the stream by 45%) and a group's units to the block's warps in
// turn (4 a warp, base = w).
struct prg_walk {
    int n, base, step;
};

template <bool G>
__device__ __forceinline__ int prg_unit(const prg_walk& w, int k) {
    return G ? 32 * ((int)blockIdx.x + (k >> 2) * (int)gridDim.x) + w.base + 8 * (k & 3) : w.base + k * w.step;
}

// The groups of 32 gate|up units block b takes in pring_hq (of g).
__device__ __forceinline__ int prg_groups(int g) { return g > (int)blockIdx.x ? (g - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x : 0; }

// Warp w's walk over phase f (kind K), grouped when G.
template <int K, bool G>
__device__ __forceinline__ prg_walk prg_walk_of(const pc_phase& f, int w) {
    const int units = f.rows / pc_unit<K>::R;
    if (G) return {4 * prg_groups(units / 32), w, 0};
    const int gw = (int)blockIdx.x * (PC_THREADS / 32) + w, nw = (int)gridDim.x * (PC_THREADS / 32);
    return {gw < units ? (units - gw + nw - 1) / nw : 0, gw, nw};
}

// Where warp w's k-th unit of a grouped phase is stored with PRG_PERM:
// step k of every block's warps in block order, then step k + 1; the steps
// past a block's last group (the extra blocks with one group more than the
// lo of the rest) follow all the others, in the same order. lo and extra
// come from the caller, once a phase: with the division here, once a unit,
// pring_hx streamed 17% slower on these matrices than on plain ones
// (run219), and as fast once it was hoisted (run220).
__device__ __forceinline__ int prg_wrow(int lo, int extra, int w, int k) {
    const int grid = (int)gridDim.x, b = (int)blockIdx.x;
    return 8 * (k < 4 * lo ? k * grid + b : 4 * lo * grid + (k - 4 * lo) * extra + b) + w;
}

// In pring_hx, after a down phase's sums: warp 0 rounds the block's groups
// of x (at most 4, as prg_quant_h's of h) with the next phase's norm
// weights nw into x's int8, scales and sums of squares (none stored with
// nostore).
__device__ __forceinline__ void prg_quant_x(const pc_phase& f, const float* nw, bool nostore = false) {
    if (threadIdx.x >= 32) return;
    const int j = threadIdx.x / 8, i = 8 * ((int)blockIdx.x + j * (int)gridDim.x) + threadIdx.x % 8;
    const bool mine = j < prg_groups(f.rows / 32);
    const float4 z = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const float4 v = mine ? __ldcg(reinterpret_cast<const float4*>(f.y) + i) : z;
    const float4 w = mine ? __ldg(reinterpret_cast<const float4*>(nw) + i) : z;
    prg_quant_xn(v, w, i, prg_hq(f.y, f.rows), prg_hd(f.y, f.rows), prg_hs(f.y, f.rows), mine && !nostore);
}

// In pring_hq, after a gate|up phase's sums: warp 0 quantises the block's
// groups of h (at most 4, lane l a float4 of group l / 8; lanes past them
// take zeros and store nothing) into h's int8 (none stored with nostore).
__device__ __forceinline__ void prg_quant_h(const pc_phase& f, bool nostore = false) {
    if (threadIdx.x >= 32) return;
    const int j = threadIdx.x / 8, i = 8 * ((int)blockIdx.x + j * (int)gridDim.x) + threadIdx.x % 8;
    const bool mine = j < prg_groups(f.rows / 2 / 32);
    const float4 v = mine ? __ldcg(reinterpret_cast<const float4*>(f.y) + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    pq_quant4(v, i, prg_hq(f.y, f.rows / 2), prg_hd(f.y, f.rows / 2), mine && !nostore);
}

// pring_hx_trace's record of a phase, per block (tr[(block n + p) PRG_TR
// + field]): clock64 stamps of warp 0 (the phase begun, x staged, every
// warp's sums done, the epilogue done, the grid barrier passed), each
// consumer warp's cycles waiting for its slots to fill, the producer's
// first and last copies of the phase, its cycles waiting for slots to free
// and its cycles issuing the copies (from a slot free to its copies'
// arrival on the slot's mbarrier issued), and the global timer where the
// phase begins (ns, for the clock's rate). The phase begins before its
// descriptor is loaded. Step 88: where the ring's time goes.
#define PRG_TR 18
#define PRG_TR_BEGIN 0
#define PRG_TR_STAGED 1
#define PRG_TR_SUMS 2
#define PRG_TR_EPI 3
#define PRG_TR_BAR 4
#define PRG_TR_FULL 5 // + warp
#define PRG_TR_EMPTY 13
#define PRG_TR_FILL0 14
#define PRG_TR_FILL1 15
#define PRG_TR_NS 16
#define PRG_TR_ISSUE 17

__device__ __forceinline__ unsigned long long prg_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

// pring_hx_bulk's copy of unit u of phase f (kind K) into slot d: its R
// rows are R cols contiguous bytes of f.w and its scales SC 16 contiguous
// bytes after all rows, as pd_fill_unit lays them out chunk by chunk, so
// one lane copies each with one bulk copy (cp.async.bulk, the bytes
// counted on mb; PTX 8.0) instead of 32 lanes' R C + SC/32 16-byte copies
// each (step 89: the producer's work a unit is on the stream's path).
template <int K>
__device__ __forceinline__ void prg_bulk_unit(uint4* d, const pc_phase& f, int u, unsigned long long* mb) {
    using U = pc_unit<K>;
    static_assert(U::Q8, "q8_0 units");
    constexpr unsigned rows = U::R * U::C * 32 * 16, scales = U::SC * 16;
    const unsigned char* w = reinterpret_cast<const unsigned char*>(f.w);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // the consumers' reads of the slot come first
    ps_mb_expect(mb, rows + scales);
    ps_bulk_copy(d, w + (long long)u * rows, rows, mb);
    ps_bulk_copy(d + U::R * U::C * 32, w + (long long)f.rows * f.cols + (long long)u * scales, scales, mb);
}

// pring_hx_l2's prefetch of unit u of phase f (kind K) into the L2: its
// rows and its scales, one bulk prefetch each (cp.async.bulk.prefetch.L2,
// PTX 8.0), by one lane; nothing lands in shared memory, nothing is
// counted.
template <int K>
__device__ __forceinline__ void prg_prefetch_unit(const pc_phase& f, int u) {
    using U = pc_unit<K>;
    constexpr unsigned rows = U::R * U::C * 32 * 16, scales = U::SC * 16;
    const unsigned char* w = reinterpret_cast<const unsigned char*>(f.w);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w + (long long)u * rows), "r"(rows) : "memory");
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w + (long long)f.rows * f.cols + (long long)u * scales), "r"(scales)
                 : "memory");
}

// The producer: for each phase, the consumers' k-th units in warp order,
// each into the next slot of that warp's ring once the warp has freed it.
// Warp 0's walk is the longest (its first unit is the block's first).
// With TR, lane 0 stamps the phase's trace record rec (prg_tr) with its
// first and last copies and the time it waited for slots to free. With P
// producer warps, producer pw fills the rings of warps pw, pw + P, ...
//
// With PF > 0 (pring_hx_l2, HX's walks), before it waits for warp w's slot
// for its k-th unit, lane 0 prefetches warp w's unit PF further on into
// the L2, past the phase's end into the next phase nf's (when nf is not
// null), so that HBM keeps streaming ahead of the ring while its slots
// are full (step 89: the windows between phases' sums). PRG_PERM is not
// taken with PF (the prefetches follow the plain order).
template <int K, bool G, bool TR = false, int P = 1, bool BK = false, int PF = 0>
__device__ __forceinline__ void prg_fill(prg_bars& b, uint4* ring, const pc_phase& f, int S, int slot, int (&cnt)[PC_THREADS / 32], int lane,
                                         bool perm = false, unsigned long long* rec = nullptr, bool hold = false, int pw = 0,
                                         const pc_phase* nf = nullptr) {
    static_assert(!TR || P == 1, "the trace has one producer's fields");
    static_assert(!TR || !BK, "the trace times 32 lanes' copies");
    static_assert(!PF || (G && P == 1 && !TR), "pring_hx_l2's prefetches follow HX's walks, one producer");
    unsigned long long waited = 0, issuing = 0;
    if (TR && lane == 0) rec[PRG_TR_FILL0] = clock64(); // a block with no units copies nothing
    prg_walk wk[PC_THREADS / 32];
#pragma unroll
    for (int w = 0; w < PC_THREADS / 32; w++) wk[w] = prg_walk_of<K, G>(f, w);
    const int groups = f.rows / pc_unit<K>::R / 32, lo = groups / (int)gridDim.x, extra = groups - lo * (int)gridDim.x;
    prg_walk wn[PC_THREADS / 32]; // PF: the warps' walks of the next phase (kind K ^ 1), g
    const pc_phase g = PF && nf ? *nf : f;
    if (PF) {
#pragma unroll
        for (int w = 0; w < PC_THREADS / 32; w++) wn[w] = nf ? prg_walk_of<K ^ 1, true>(g, w) : prg_walk{0, 0, 0};
    }
    for (int k = 0; k < wk[0].n; k++) {
        if (hold) {
            while (prg_hold) {
            }
        }
#pragma unroll
        for (int w = 0; w < PC_THREADS / 32; w++) {
            if (k >= wk[w].n || (P > 1 && w % P != pw)) continue;
            const int u = prg_unit<G>(wk[w], k);
            const int s = cnt[w] % S;
            if (PF && lane == 0) {
                if (k + PF < wk[w].n) {
                    prg_prefetch_unit<K>(f, prg_unit<true>(wk[w], k + PF));
                } else if (k + PF - wk[w].n < wn[w].n) {
                    prg_prefetch_unit<K ^ 1>(g, prg_unit<true>(wn[w], k + PF - wk[w].n));
                }
            }
            const unsigned long long t0 = TR ? clock64() : 0;
            if (cnt[w] >= S) ps_mb_wait(&b.empty[w][s], ((cnt[w] / S) - 1) & 1);
            const unsigned long long t1 = TR ? clock64() : 0;
            if (TR) {
                waited += t1 - t0;
                if (lane == 0 && k == 0 && w == 0) rec[PRG_TR_FILL0] = t1;
            }
            if (BK) {
                if (lane == 0) prg_bulk_unit<K>(ring + (w * S + s) * slot, f, G && perm ? prg_wrow(lo, extra, w, k) : u, &b.full[w][s]);
            } else {
                pd_fill_unit<K>(ring + (w * S + s) * slot, f, G && perm ? prg_wrow(lo, extra, w, k) : u, lane);
                pf_arrive_on_copies(&b.full[w][s]);
            }
            if (TR) issuing += clock64() - t1;
            cnt[w]++;
        }
    }
    if (TR && lane == 0) {
        rec[PRG_TR_FILL1] = clock64();
        rec[PRG_TR_EMPTY] = waited;
        rec[PRG_TR_ISSUE] = issuing;
    }
}

// Whether mbarrier mb's phase of parity has completed, without waiting.
__device__ __forceinline__ bool ps_mb_test(unsigned long long* mb, unsigned parity) {
    unsigned ok;
    asm volatile("{\n\t.reg .pred P;\n\tmbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\n\tselp.b32 %0, 1, 0, P;\n\t}"
                 : "=r"(ok)
                 : "r"(ps_smem(mb)), "r"(parity)
                 : "memory");
    return ok;
}

// pring_hx's walk of warp w over phase f, of either kind (both grouped).
__device__ __forceinline__ prg_walk prg_walk_hx(const pc_phase& f, int w) {
    return pc_down(f.kind) ? prg_walk_of<5, true>(f, w) : prg_walk_of<4, true>(f, w);
}

// pring_hx_ff's producer (HX's walks): each consumer warp has its own
// cursor (phase, unit), and the producer visits the warps in turn, filling
// a warp's next unit whenever its next slot is free and passing over it
// when not, so that no warp's full ring holds up the others' copies (step
// 89: prg_fill waits for warp w's slot before it looks at warp w + 1's,
// and its trace has the producer waiting 7.5 µs a gate|up phase while the
// consumers wait 16.4 for data). A warp's units still go into its ring in
// the order it sums them, across phases, so the sums are pring_hx's. A slot
// is taken when every lane's test finds it free (each lane's own acquire;
// once free, a slot stays free until this warp fills it). Measured 38-43%
// slower, its stream alone 49-56% (runs 230-238): its cursors live in local
// memory and each unit reloads its phase's descriptor, so that is this
// producer's cost a unit, not necessarily the order's.
__device__ __forceinline__ void prg_fill_ff(prg_bars& b, uint4* ring, const pc_phase* phases, int n, int S, int slot, int lane) {
    struct cursor {
        int p, k, cnt;
        prg_walk wk;
    } c[PC_THREADS / 32];
    // Warp w's walk of phase p, or of the first phase after it where it has units.
    auto next = [&](cursor& u, int w) {
        for (; u.p < n; u.p++) {
            const pc_phase f = phases[u.p];
            u.wk = prg_walk_hx(f, w);
            if (u.wk.n > 0) return;
        }
    };
    int left = 0; // warps with units still to copy
#pragma unroll 1
    for (int w = 0; w < PC_THREADS / 32; w++) {
        c[w] = {0, 0, 0, {0, 0, 0}};
        next(c[w], w);
        left += c[w].p < n;
    }
#pragma unroll 1
    while (left > 0) {
#pragma unroll 1
        for (int w = 0; w < PC_THREADS / 32; w++) {
            cursor& u = c[w];
            if (u.p >= n) continue;
            const int s = u.cnt % S;
            if (u.cnt >= S && !__all_sync(MEMRA_FULL_MASK, ps_mb_test(&b.empty[w][s], ((u.cnt / S) - 1) & 1))) continue;
            const pc_phase f = phases[u.p];
            uint4* d = ring + (w * S + s) * slot;
            if (pc_down(f.kind)) {
                pd_fill_unit<5>(d, f, prg_unit<true>(u.wk, u.k), lane);
            } else {
                pd_fill_unit<4>(d, f, prg_unit<true>(u.wk, u.k), lane);
            }
            pf_arrive_on_copies(&b.full[w][s]);
            u.cnt++;
            if (++u.k == u.wk.n) {
                u.k = 0;
                u.p++;
                next(u, w);
                left -= u.p >= n;
            }
        }
    }
}

// pring_hx_fr's producer (HX's walks): pring_hx_ff's order, whichever
// warp's next slot is free first, with its cursors in registers and two
// phases' descriptors held, so that a unit costs what prg_fill's does (step
// 90: pring_hx_ff's local-memory cursors and a descriptor load a unit left
// its own order untested). Warp w's next unit is j[w] counted from phase
// p's first, into phase p + 1 once past phase p's n0 (every warp of a
// block has a phase's n units in HX's walks, 4 a group); the window moves
// on once every warp is past phase p. A warp whose next phase has fewer
// units than its ring's slots (a block with no down rows) then waits for
// the window instead of copying phase p + 2's: a light block's loss only.
// A warp's units still enter its ring in the order it sums them, so the
// sums are pring_hx's. PRG_PERM is not taken.
__device__ __forceinline__ void prg_fill_fr(prg_bars& b, uint4* ring, const pc_phase* phases, int n, int S, int slot, int lane) {
    int j[PC_THREADS / 32] = {}, cnt[PC_THREADS / 32] = {};
    pc_phase f0 = phases[0], f1 = n > 1 ? phases[1] : phases[0];
    int n0 = prg_walk_hx(f0, 0).n, n1 = n > 1 ? prg_walk_hx(f1, 0).n : 0;
#pragma unroll 1
    for (int p = 0; p < n;) {
        bool past = true;
#pragma unroll
        for (int w = 0; w < PC_THREADS / 32; w++) {
            const int s = cnt[w] % S;
            if (j[w] < n0 + n1 && (cnt[w] < S || __all_sync(MEMRA_FULL_MASK, ps_mb_test(&b.empty[w][s], ((cnt[w] / S) - 1) & 1)))) {
                const bool first = j[w] < n0;
                const pc_phase f = first ? f0 : f1;
                const int u = prg_unit<true>(prg_walk{0, w, 0}, first ? j[w] : j[w] - n0);
                uint4* d = ring + (w * S + s) * slot;
                if (pc_down(f.kind)) {
                    pd_fill_unit<5>(d, f, u, lane);
                } else {
                    pd_fill_unit<4>(d, f, u, lane);
                }
                pf_arrive_on_copies(&b.full[w][s]);
                j[w]++;
                cnt[w]++;
            }
            past = past && j[w] >= n0;
        }
        if (past) {
#pragma unroll
            for (int w = 0; w < PC_THREADS / 32; w++) j[w] -= n0;
            p++;
            f0 = f1;
            n0 = n1;
            n1 = 0;
            if (p + 1 < n) {
                f1 = phases[p + 1];
                n1 = prg_walk_hx(f1, 0).n;
            }
        }
    }
}

// pring_hx_br: each warp's two slots as one ring of 2 slot's bytes (RB
// 16-byte chunks) holding units back to back, so that it holds 3 gate|up
// units (8,704 bytes each; 3 x 8,704 = 2 x 13,056) where the slots hold
// 2, and 2 down units as before (step 90: a gate|up phase's consumers wait
// for data 15.6 us of its 24.7 with 16 units an SM in flight, 139 KB
// against a down phase's 209 KB). A unit that would run past the ring's
// end starts at 0 instead, the gap counted in its footprint; unit c uses
// barriers c mod 3 (at most 3 units fit: the kernel traps on a ring of
// more than 3 gate|up units' chunks, and the host launches it with 2
// slots), and the producer frees the oldest units' footprints
// (prg_fp, its own) until the next one fits. Producer and consumer place
// a unit by the same rule (prg_br_at). The producer takes neither
// PRG_PERM (the units' plain places) nor PRG_HOLD.
#define PRG_BR_UNITS 3

// pring_hx_brc's cap, flags >> PRG_CAP_SHIFT: at most that many of a
// block's units issued by its producer and not yet landed, 1 to 24 (step
// 91: under pring_hx_br's stream an SM has up to 209 KB of copies in
// flight, ~6 µs of its share of HBM, and the x' staging, reads that hit
// the L2, took twice pring_hx_er's time; if they wait behind those
// copies, fewer in flight should shorten them, and the stream keeps its
// rate while the copies in flight still cover HBM's latency).
#define PRG_CAP_SHIFT 16
__shared__ int prg_fp[PC_THREADS / 32][PRG_BR_UNITS];

// Where a unit of sz chunks goes in a ring of RB when the ring's next
// free chunk is head: there, or at 0 if it would run past the end.
__device__ __forceinline__ int prg_br_at(int head, int sz, int RB) { return head + sz > RB ? 0 : head; }

// The 9B preset's DeltaNet mixer for pring_hx_brm and its forms (prm_mix,
// below): V heads, K heads, the head dimension, the state's floats, and
// the blocks a head in prm_mix4.
#define PRM_HEADS 32
#define PRM_KHEADS 16
#define PRM_D 128
#define PRM_STATE (PRM_HEADS * PRM_D * PRM_D)
#define PRM_PARTS 4

// pring_hx_brm4s's producer: warp w's 4 rows of its block's state (rows
// 32 part + 4w to + 3 of head h, 2 KiB, contiguous) into its ring at d,
// PRM_UNIT chunks, 4 a lane.
#define PRM_UNIT (4 * PRM_D / 4)
__device__ __forceinline__ void prm_fill_state(uint4* d, const pc_phase& f, int w, int lane) {
    const int h = blockIdx.x / PRM_PARTS, part = blockIdx.x % PRM_PARTS;
    const uint4* src = f.w + ((h * PRM_D + part * (PRM_D / PRM_PARTS) + 4 * w) * PRM_D) / 4;
#pragma unroll
    for (int c = 0; c < PRM_UNIT / 32; c++) pd_copy16(d + c * 32 + lane, src + c * 32 + lane);
}

// The producer of pring_hx_br (HX's walks, prg_fill's order); with TR
// stamped into tr as prg_fill stamps its phases; with L (pring_hx_brl)
// phases of kind 7 too, whose units are small enough that the ring's
// bytes would hold 6: at most PRG_BR_UNITS are in flight a warp, since
// unit c uses barriers c mod PRG_BR_UNITS. With CP (pring_hx_brc) at most
// cap units of the block's are issued and not yet landed (PRG_CAP_SHIFT):
// CP 1 tests the oldest unit before each copy; CP 2 (pring_hx_brc8), once
// a round of 8 units (one a warp), the oldest round's last unit, as the
// units of a round land about together (run249: CP 1's test a unit cost
// the stream 18% at every cap).
template <bool TR = false, bool L = false, int CP = 0, int M = 0>
__device__ __forceinline__ void prg_fill_br(prg_bars& b, uint4* ring, const pc_phase* phases, int n, int RB, int lane,
                                            unsigned long long* tr = nullptr, int cap = 0) {
    int head[PC_THREADS / 32] = {}, occ[PC_THREADS / 32] = {}, c[PC_THREADS / 32] = {}, t[PC_THREADS / 32] = {};
    int issued = 0, landed = 0; // CP: the block's units in issue order (warp fastest: every warp has a phase's count)
#pragma unroll 1
    for (int p = 0; p < n; p++) {
        const pc_phase f = phases[p];
        const bool down = pc_down(f.kind), out = L && f.kind == 7, mix = M && f.kind == 6;
        const int sz = mix ? PRM_UNIT : out ? pc_stride<7>() : down ? pc_stride<5>() : pc_stride<4>();
        // M 3: a mixer phase's state is a unit a warp of the blocks below
        // PRM_HEADS PRM_PARTS (prm_fill_state).
        const int units = mix ? (M == 3 && (int)blockIdx.x < PRM_HEADS * PRM_PARTS ? 1 : 0) : prg_walk_hx(f, 0).n;
        unsigned long long* rec = TR ? tr + ((long long)blockIdx.x * n + p) * PRG_TR : nullptr;
        unsigned long long waited = 0, issuing = 0;
        if (TR && lane == 0) rec[PRG_TR_FILL0] = clock64();
#pragma unroll 1
        for (int k = 0; k < units; k++) {
            if (CP == 2) {
                // Rounds start at multiples of 8, so round r's last unit is
                // warp 7's r-th; cap >= 8 (else a round would wait on itself).
                while (issued + PC_THREADS / 32 - landed > cap) {
                    const int lc = landed / (PC_THREADS / 32);
                    ps_mb_wait(&b.full[PC_THREADS / 32 - 1][lc % PRG_BR_UNITS], (lc / PRG_BR_UNITS) & 1);
                    landed += PC_THREADS / 32;
                }
                issued += PC_THREADS / 32;
            }
#pragma unroll
            for (int w = 0; w < PC_THREADS / 32; w++) {
                const int at = prg_br_at(head[w], sz, RB), need = at == 0 && head[w] != 0 ? RB - head[w] + sz : sz;
                const unsigned long long t0 = TR ? clock64() : 0;
                while (occ[w] + need > RB || (L && c[w] - t[w] == PRG_BR_UNITS)) {
                    ps_mb_wait(&b.empty[w][t[w] % PRG_BR_UNITS], (t[w] / PRG_BR_UNITS) & 1);
                    occ[w] -= prg_fp[w][t[w] % PRG_BR_UNITS];
                    t[w]++;
                }
                if (CP == 1) {
                    // Unit `landed` is warp landed mod 8's (landed / 8)-th;
                    // its barrier is not yet reused, since unit issued
                    // reuses unit issued - 24's and cap <= 24.
                    while (issued - landed >= cap) {
                        const int lw = landed % (PC_THREADS / 32), lc = landed / (PC_THREADS / 32);
                        ps_mb_wait(&b.full[lw][lc % PRG_BR_UNITS], (lc / PRG_BR_UNITS) & 1);
                        landed++;
                    }
                    issued++;
                }
                const unsigned long long t1 = TR ? clock64() : 0;
                if (TR) {
                    waited += t1 - t0;
                    if (lane == 0 && k == 0 && w == 0) rec[PRG_TR_FILL0] = t1;
                }
                const int u = prg_unit<true>(prg_walk{0, w, 0}, k);
                if (mix) {
                    prm_fill_state(ring + w * RB + at, f, w, lane);
                } else if (out) {
                    pd_fill_unit<7>(ring + w * RB + at, f, u, lane);
                } else if (down) {
                    pd_fill_unit<5>(ring + w * RB + at, f, u, lane);
                } else {
                    pd_fill_unit<4>(ring + w * RB + at, f, u, lane);
                }
                pf_arrive_on_copies(&b.full[w][c[w] % PRG_BR_UNITS]);
                if (lane == 0) prg_fp[w][c[w] % PRG_BR_UNITS] = need;
                __syncwarp();
                occ[w] += need;
                head[w] = at + sz == RB ? 0 : at + sz;
                c[w]++;
                if (TR) issuing += clock64() - t1;
            }
        }
        if (TR && lane == 0) {
            rec[PRG_TR_FILL1] = clock64();
            rec[PRG_TR_EMPTY] = waited;
            rec[PRG_TR_ISSUE] = issuing;
        }
    }
}

// A warp's unit of kind K in slot t into registers: lane's weight chunks
// into r, its scales into sc (the first R C of each; 24 is kind 5's).
#define PRG_HELD 24
template <int K>
__device__ __forceinline__ void prg_take(const uint4* t, int lane, uint4 (&r)[PRG_HELD], float (&sc)[PRG_HELD]) {
    using U = pc_unit<K>;
    static_assert(U::R * U::C <= PRG_HELD, "a unit's chunks fit");
    const pq_slot_scales ss = {reinterpret_cast<const unsigned short*>(t + U::R * U::C * 32), lane};
#pragma unroll
    for (int j = 0; j < U::R * U::C; j++) {
        r[j] = t[j * 32 + lane];
        sc[j] = ss[j];
    }
}

// A unit's scales held over a grid barrier (pring_hx_erp): two f16 a
// word, 12 registers instead of 24 (with 24 floats nvcc 13's ptxas spilled
// 240 bytes at 168 registers in run232; with these and the words past a
// gate|up unit zeroed, 84 in runs 233 and 234, none in a loop).
struct prg_hscales {
    unsigned v[PRG_HELD / 2];
    __device__ __forceinline__ float operator[](int j) const { return memra_f16_to_f32((unsigned short)(v[j >> 1] >> (16 * (j & 1)))); }
};

// prg_take with the scales packed.
template <int K>
__device__ __forceinline__ void prg_take(const uint4* t, int lane, uint4 (&r)[PRG_HELD], prg_hscales& sc) {
    using U = pc_unit<K>;
    static_assert(U::R * U::C <= PRG_HELD && U::R * U::C % 2 == 0, "a unit's chunks fit, in pairs");
    const unsigned short* h = reinterpret_cast<const unsigned short*>(t + U::R * U::C * 32) + lane / 2;
    // Every word written, the ones past the unit zeroed: a word a kind-4
    // unit left alone would carry its old value, live over the ring's sums.
#pragma unroll
    for (int j = 0; j < PRG_HELD; j++) r[j] = j < U::R * U::C ? t[j * 32 + lane] : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int j = 0; j < PRG_HELD; j += 2) sc.v[j / 2] = j < U::R * U::C ? (unsigned)h[16 * j] | (unsigned)h[16 * (j + 1)] << 16 : 0u;
}

// The sums of a unit taken by prg_take, as pd_unit_sums adds them: the
// same products in the same order (pring_hx's gate|up with its 1/rms ns;
// with PRE a down unit adds the residual yres its lane 0 holds instead of
// loading it after the sums).
template <int K, bool PRE = false, class D>
__device__ __forceinline__ void prg_held_sums(const uint4 (&r)[PRG_HELD], const D& sc, const pc_phase& f, int u, int lane, float ns,
                                              float yres = 0.0f) {
    using U = pc_unit<K>;
    pq_dot<U::R, U::C, 1, PRE, true, K == 4>(r, sc, f, u, lane, yres, ns);
}

// The warp's reads of a slot done (its registers hold them), lane 0 frees
// it: the other lanes' loads come before its arrival through __syncwarp.
__device__ __forceinline__ void prg_free(unsigned long long* empty, int lane) {
    __syncwarp();
    if (lane == 0) ps_mb_arrive(empty);
}

// pring_hx_er's sums of a unit in slot t: the warp takes the unit into
// registers, frees the slot (empty), then sums it. A slot is then held for
// its reads, not for its sums (step 89: 2 units a warp in flight while it
// sums, not 1).
template <int K, bool PRE = false>
__device__ __forceinline__ void prg_unit_sums_er(const uint4* t, const pc_phase& f, int u, int lane, unsigned long long* empty, float ns = 1.0f,
                                                 float yres = 0.0f) {
    uint4 r[PRG_HELD];
    float sc[PRG_HELD];
    prg_take<K>(t, lane, r, sc);
    prg_free(empty, lane);
    prg_held_sums<K, PRE>(r, sc, f, u, lane, ns, yres);
}

// pring_hx_df's staging of phase p (p > 0) without a grid barrier before
// it: each block stores its flag = p once its phase p - 1 outputs are
// stored (prg_signal), and thread t < grid here waits for block t's >= p,
// then copies the groups of x' in int8 (SS: a gate|up phase's, with their
// sums of squares) that block t wrote, groups t, t + grid, ... (prg_quant_x
// and prg_quant_h deal group g to block g mod grid). So a block copies
// the groups of the blocks that have finished while it waits for the
// others, instead of copying all of them after the last has arrived
// (step 89: barrier ~2 µs, then staging 1-2 µs, each phase). Without copy
// (PS_NO_STAGE) it only waits. The data alone orders the buffers' reuse:
// a block writes h (or x's int8) again only after it has staged every
// block's next outputs, each written after that block's staging of the
// same buffer.
// A block's flag is the first word of its own 128-byte line of done
// (PRG_DF_STRIDE words), so that each line has one writer and a reader a
// block: with the flags packed, 5 lines had 132 writers and every block's
// 132 waiting threads, and the chain with no rows ran 3.66 µs a phase
// against the barrier's 2.65 (run236).
#define PRG_DF_STRIDE 32

template <bool SS>
__device__ __forceinline__ void prg_stage_df(const pc_phase& f, const unsigned* done, int p, bool copy) {
    const int t = threadIdx.x;
    if (t < (int)gridDim.x) {
        while (pc_ld_acquire(done + t * PRG_DF_STRIDE) < (unsigned)p) {
        }
        if (copy) {
            float* h = const_cast<float*>(f.x);
            const int4* q = reinterpret_cast<const int4*>(prg_hq(h, f.cols));
            const float* d = prg_hd(h, f.cols);
            const float* ss = prg_hs(h, f.cols);
            for (int g = t; g < f.cols / 32; g += gridDim.x) {
                reinterpret_cast<int4*>(pq_xq)[2 * g] = __ldcg(q + 2 * g);
                reinterpret_cast<int4*>(pq_xq)[2 * g + 1] = __ldcg(q + 2 * g + 1);
                pq_xd[g] = __ldcg(d + g);
                if (SS) prg_ss[g] = __ldcg(ss + g);
            }
        }
    }
    pc_sync<true>();
}

// pring_hx_df's end of phase p: once the block's outputs of the phase are
// stored (the block barrier), thread 0 makes them visible at gpu scope and
// publishes its flag = p + 1 (pd_arrive's fence and order, a flag a block
// instead of one counter).
__device__ __forceinline__ void prg_signal(unsigned* done, int p) {
    pc_sync<true>();
    if (threadIdx.x == 0) {
        __threadfence();
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(done + blockIdx.x * PRG_DF_STRIDE), "r"((unsigned)p + 1) : "memory");
    }
}

// pring_hx_brm's mixer phase (kind 6, step 92): the gated delta rule of
// the 9B preset's 32 V heads, one block a head, between a down phase and
// the output projection, so that the ring streams the projection's weights
// while 32 blocks work and the other 100 wait at the barrier. f.w is the
// layer's buffer: the state [32 heads][128 j][128 i] f32, then stand-ins
// for the input projection's outputs, q and k [16][128], z [32][128], g
// and beta [32] (g as exp takes it, beta after its sigmoid), then the
// norm's weights [128]. v is f.x, the residual the down phase wrote, so
// that the phase waits on its predecessor as the real one would. The conv
// is left out (per channel, it would be the input projection's epilogue in
// a persistent layer). Thread t holds row j = t/2's half i in [64(t&1),
// +64) of the head's state in registers; the gated norm's output goes to
// f.y's int8 and scales (prg_hq, prg_hd), where the projection stages
// them. qwen35 tiles the V heads: V head h reads K head h mod 16.
__shared__ __align__(16) float prm_y[PRM_D];
__shared__ __align__(16) float prm_qk[2 * PRM_D];

__device__ __forceinline__ float prm_dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

__device__ __forceinline__ void prm_mix(const pc_phase& f) {
    const int h = blockIdx.x;
    if (h >= PRM_HEADS) return; // the whole block: its barriers below are its own
    const int t = threadIdx.x, j = t >> 1, half = t & 1, hk = h % PRM_KHEADS;
    float* base = reinterpret_cast<float*>(const_cast<uint4*>(f.w));
    float4* m4 = reinterpret_cast<float4*>(base + ((h * PRM_D + j) * PRM_D + 64 * half));
    const float* aux = base + PRM_STATE;
    const float* z = aux + 2 * PRM_KHEADS * PRM_D;
    const float* g = z + PRM_HEADS * PRM_D;
    const float* beta = g + PRM_HEADS;
    const float* sn = beta + PRM_HEADS;
    // q and k of K head hk into prm_qk (q, then k), the state's row part
    // into registers: with q and k in registers too, 48 float4s a thread
    // spilled 544 bytes at the 168 registers of 9 warps a block.
    if (t < 2 * PRM_D / 4) {
        const int which = t / (PRM_D / 4);
        reinterpret_cast<float4*>(prm_qk)[t] = __ldcg(reinterpret_cast<const float4*>(aux + (which * PRM_KHEADS + hk) * PRM_D) + t % (PRM_D / 4));
    }
    float4 m[16];
#pragma unroll
    for (int i = 0; i < 16; i++) m[i] = __ldcg(m4 + i);
    const float v = __ldcg(f.x + h * PRM_D + j), zj = __ldcg(z + h * PRM_D + j), e = expf(__ldcg(g + h)), bh = __ldcg(beta + h);
    const float sj = __ldg(sn + j);
    pc_sync<true>();
    const float4* q = reinterpret_cast<const float4*>(prm_qk) + 16 * half;
    const float4* k = reinterpret_cast<const float4*>(prm_qk + PRM_D) + 16 * half;
    // q and k over their L2 norms (q also over sqrt(128)): each pair of
    // threads sums all 128 of both.
    float sq = 0.0f, sk = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; i++) {
        sq += prm_dot(q[i], q[i]);
        sk += prm_dot(k[i], k[i]);
    }
    sq += __shfl_xor_sync(MEMRA_FULL_MASK, sq, 1);
    sk += __shfl_xor_sync(MEMRA_FULL_MASK, sk, 1);
    const float iq = 0.0883883476f / fmaxf(sqrtf(sq), PC_EPS), ik = 1.0f / fmaxf(sqrtf(sk), PC_EPS);
    float kv = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; i++) {
        const float4 kn = make_float4(k[i].x * ik, k[i].y * ik, k[i].z * ik, k[i].w * ik);
        m[i] = make_float4(m[i].x * e, m[i].y * e, m[i].z * e, m[i].w * e);
        kv += prm_dot(m[i], kn);
    }
    kv += __shfl_xor_sync(MEMRA_FULL_MASK, kv, 1);
    const float d = bh * (v - kv);
    float o = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; i++) {
        const float4 kn = make_float4(k[i].x * ik, k[i].y * ik, k[i].z * ik, k[i].w * ik);
        const float4 qn = make_float4(q[i].x * iq, q[i].y * iq, q[i].z * iq, q[i].w * iq);
        m[i] = make_float4(fmaf(d, kn.x, m[i].x), fmaf(d, kn.y, m[i].y), fmaf(d, kn.z, m[i].z), fmaf(d, kn.w, m[i].w));
        o += prm_dot(m[i], qn);
        __stcg(m4 + i, m[i]);
    }
    o += __shfl_xor_sync(MEMRA_FULL_MASK, o, 1);
    // The gated norm over the head's 128 outputs (each pair holds its o
    // twice; half 0 counts it), then x' in int8 per 32 as pq_quant4 rounds.
    float ss = memra_warp_sum(half ? 0.0f : o * o);
    if ((t & 31) == 0) pc_red[t >> 5] = ss;
    pc_sync<true>();
    ss = 0.0f;
#pragma unroll
    for (int w = 0; w < PC_THREADS / 32; w++) ss += pc_red[w];
    const float y = o * rsqrtf(ss / PRM_D + PC_EPS) * sj * memra_silu(zj);
    if (!half) prm_y[j] = y;
    pc_sync<true>();
    if (t < PRM_D / 4) pq_quant4(reinterpret_cast<const float4*>(prm_y)[t], h * (PRM_D / 4) + t, prg_hq(f.y, f.cols), prg_hd(f.y, f.cols));
}

// pring_hx_brm4's mixer phase: prm_mix over four blocks a head, 32 rows
// j each, so that 128 blocks share the state's 4 MiB of traffic (run251:
// prm_mix, a block a head, took 13 µs a phase under the ring's stream, its
// 64 KiB a block read and written at ~10 GB/s an SM). Thread t holds row
// j = 32 part + t/8's 16 values i in [16(t&7), +16). A block's 32 rows are
// one group of the projection's int8 input: it rounds w = o·norm·silu(z),
// before the norm's 1/rms, and stores the group's sum of o² beside the
// scales (prg_hs, where x's sums of squares go); the projection's staging
// (prm_stage_out) multiplies each group's scale by its head's 1/rms from
// the head's four sums, as pring_hx's gate|up phases apply x's 1/rms after
// the sums (an int8 rounding per 32 does not depend on a common factor).
__shared__ __align__(16) float prm_o2[PRM_D / PRM_PARTS];

//
// With ms (pring_hx_brm4s) the warp's 4 rows of state are in its ring at
// ms, copied there by the producer (prm_fill_state) ahead of the phase as
// it copies weights; the warp frees the slot (empty) once they are in its
// registers.
//
// With st (pring_hx_brm4_trace), thread 0 stamps clock64 into st[0..3]:
// q and k staged (its block's barrier passed), kv summed (so its state's
// loads landed), o summed (its state stored), and the block's outputs in
// shared memory; the phase's end is prg_kernel's stamp after the call.
__device__ __forceinline__ void prm_mix4(const pc_phase& f, const float4* ms = nullptr, unsigned long long* empty = nullptr,
                                         unsigned long long* st = nullptr) {
    constexpr int RB = PRM_D / PRM_PARTS; // rows a block
    if ((int)blockIdx.x >= PRM_HEADS * PRM_PARTS) return; // the whole block
    const int h = blockIdx.x / PRM_PARTS, part = blockIdx.x % PRM_PARTS, hk = h % PRM_KHEADS;
    const int t = threadIdx.x, r = t >> 3, l8 = t & 7, j = part * RB + r;
    float* base = reinterpret_cast<float*>(const_cast<uint4*>(f.w));
    float4* m4 = reinterpret_cast<float4*>(base + ((h * PRM_D + j) * PRM_D + 16 * l8));
    const float* aux = base + PRM_STATE;
    const float* z = aux + 2 * PRM_KHEADS * PRM_D;
    const float* g = z + PRM_HEADS * PRM_D;
    const float* beta = g + PRM_HEADS;
    const float* sn = beta + PRM_HEADS;
    if (t < 2 * PRM_D / 4) {
        const int which = t / (PRM_D / 4);
        reinterpret_cast<float4*>(prm_qk)[t] = __ldcg(reinterpret_cast<const float4*>(aux + (which * PRM_KHEADS + hk) * PRM_D) + t % (PRM_D / 4));
    }
    float4 m[4];
    if (ms) {
#pragma unroll
        for (int i = 0; i < 4; i++) m[i] = ms[(r & 3) * (PRM_D / 4) + 4 * l8 + i];
        prg_free(empty, t & 31);
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) m[i] = __ldcg(m4 + i);
    }
    const float v = __ldcg(f.x + h * PRM_D + j), zj = __ldcg(z + h * PRM_D + j), e = expf(__ldcg(g + h)), bh = __ldcg(beta + h);
    const float sj = __ldg(sn + j);
    pc_sync<true>();
    if (st && t == 0) st[0] = clock64();
    const float4* q = reinterpret_cast<const float4*>(prm_qk) + 4 * l8;
    const float4* k = reinterpret_cast<const float4*>(prm_qk + PRM_D) + 4 * l8;
    float sq = 0.0f, sk = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        sq += prm_dot(q[i], q[i]);
        sk += prm_dot(k[i], k[i]);
    }
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) {
        sq += __shfl_xor_sync(MEMRA_FULL_MASK, sq, o);
        sk += __shfl_xor_sync(MEMRA_FULL_MASK, sk, o);
    }
    const float iq = 0.0883883476f / fmaxf(sqrtf(sq), PC_EPS), ik = 1.0f / fmaxf(sqrtf(sk), PC_EPS);
    float kv = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float4 kn = make_float4(k[i].x * ik, k[i].y * ik, k[i].z * ik, k[i].w * ik);
        m[i] = make_float4(m[i].x * e, m[i].y * e, m[i].z * e, m[i].w * e);
        kv += prm_dot(m[i], kn);
    }
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) kv += __shfl_xor_sync(MEMRA_FULL_MASK, kv, o);
    const float d = bh * (v - kv);
    if (st && t == 0) st[1] = clock64() + (d != d); // after d: its loads landed
    float o = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float4 kn = make_float4(k[i].x * ik, k[i].y * ik, k[i].z * ik, k[i].w * ik);
        const float4 qn = make_float4(q[i].x * iq, q[i].y * iq, q[i].z * iq, q[i].w * iq);
        m[i] = make_float4(fmaf(d, kn.x, m[i].x), fmaf(d, kn.y, m[i].y), fmaf(d, kn.z, m[i].z), fmaf(d, kn.w, m[i].w));
        o += prm_dot(m[i], qn);
        __stcg(m4 + i, m[i]);
    }
#pragma unroll
    for (int s = 1; s < 8; s <<= 1) o += __shfl_xor_sync(MEMRA_FULL_MASK, o, s);
    if (st && t == 0) st[2] = clock64() + (o != o);
    if (l8 == 0) {
        prm_y[r] = o * sj * memra_silu(zj);
        prm_o2[r] = o * o;
    }
    pc_sync<true>();
    if (st && t == 0) st[3] = clock64();
    if (t < 32) {
        // Lanes 0-7 hold the group (a float4 each); the others only take
        // part in pq_quant4's butterfly, which stays within 8 lanes.
        const bool mine = t < RB / 4;
        const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const float4 w = mine ? reinterpret_cast<const float4*>(prm_y)[t] : zero, o2 = mine ? reinterpret_cast<const float4*>(prm_o2)[t] : zero;
        pq_quant4(w, (h * PRM_D + part * RB) / 4 + t, prg_hq(f.y, f.cols), prg_hd(f.y, f.cols), mine);
        float ss = (o2.x + o2.y) + (o2.z + o2.w);
#pragma unroll
        for (int s = 1; s < 8; s <<= 1) ss += __shfl_xor_sync(MEMRA_FULL_MASK, ss, s);
        if (t == 0) prg_hs(f.y, f.cols)[h * PRM_PARTS + part] = ss;
    }
}

// prm_mix4 as a call (pring_hx_brm4n): compiled apart, so that its
// registers and code do not weigh on the loops it sits in (run254: the
// mixer's templates made the other phases 1.9 µs a layer slower, all of it
// with the sums and the staging: 0.3 µs with the products only streaming).
__device__ __noinline__ void prm_mix4_apart(const pc_phase& f) { prm_mix4(f); }

// The projection's x' after prm_mix4: its int8 and scales staged with the
// groups' sums of o² (prg_stage_hq<true>), then each scale times its
// head's 1/rms from the head's PRM_PARTS sums, added in one order by every
// block.
__device__ __forceinline__ void prm_stage_out(const pc_phase& f) {
    prg_stage_hq<true>(f);
    for (int i = threadIdx.x; i < f.cols / 32; i += PC_THREADS) {
        const float* s = prg_ss + (i / PRM_PARTS) * PRM_PARTS;
        pq_xd[i] *= rsqrtf(((s[0] + s[1]) + (s[2] + s[3])) / PRM_D + PC_EPS);
    }
    pc_sync<true>();
}

// pring's body, pring_hq's with HQ, pring_hx's with HQ and HX; with TR
// (pring_hx_trace) stamped into tr; with P producer warps (pring_hx2);
// with SC the ring's depth a compile-time constant (pring_hx_s2: S must be
// SC), so that k mod S and k / S are a mask and a shift; with FF the
// producer fills whichever warp's slot is free first (FF 1, pring_hx_ff;
// FF 2, its cursors in registers, pring_hx_fr with ER); with
// ER a consumer frees its slot once the unit is in its registers
// (pring_hx_er, and pring_hx_ffer with FF); with BK the producer copies
// each unit with bulk copies (pring_hx_bulk, and pring_hx_bulker with ER);
// with PL (and ER) a warp takes its next phase's first unit into registers
// between its block's arrival at the grid barrier and the wait, if it has
// landed, freeing its slot for the producer over the barrier
// (pring_hx_erp); with DF (and ER) no grid barrier: each block publishes
// its phase's end in done and stages the next phase's x' from each writer
// block as that block's flag says its groups are stored (pring_hx_df);
// with PF (and ER) the producer prefetches units PF ahead into the L2
// (pring_hx_l2); with BR (and ER) each warp's 2 slots are one ring of
// bytes (pring_hx_br), with ST (and BR) x' is staged by bulk copies
// (pring_hx_brs), and with PD (and BR) the kernel is built for
// programmatic dependent launch (pring_hx_brp), with CP (and BR) its
// producer caps the units in flight (pring_hx_brc; CP 2 pring_hx_brc8),
// with RP (and BR) a down phase's residuals are loaded at the phase's
// start, a lane a unit, not after each unit's sums (pring_hx_brr, and
// pring_hx_brlr with L), and with L (and BR) it
// takes phases of kind 7 too (pring_hx_brl), a first phase of a down
// kind staged from f32 as a first gate|up phase is (prg_stage_xn: x·norm
// rounded to int8, no 1/rms), since no earlier phase of the launch wrote
// its int8 copy; with M (and L) it takes mixer phases too, kind 6, which
// have no units for the ring: M 1 prm_mix's (pring_hx_brm), M 2
// prm_mix4's (pring_hx_brm4), whose projection stages its input with
// prm_stage_out; M 3 (pring_hx_brm4s) prm_mix4's with the state a unit a
// warp in the ring (prm_fill_state); M 4 (pring_hx_brm4n) prm_mix4 called
// apart (prm_mix4_apart).
template <bool HQ, bool HX = false, bool TR = false, int P = 1, int SC = 0, int FF = 0, bool ER = false, bool BK = false,
          bool PL = false, bool DF = false, int PF = 0, bool BR = false, bool ST = false, bool PD = false, bool L = false,
          int CP = 0, bool RP = false, int M = 0>
__device__ __forceinline__ void prg_kernel(const pc_phase* phases, int n, unsigned* bar, int flags, int S_, int slot,
                                           unsigned long long* tr = nullptr, unsigned* done = nullptr) {
    const int S = SC ? SC : S_;
    __shared__ prg_bars b;
    __shared__ unsigned long long stmb; // ST: the staging's bulk copies
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (threadIdx.x == 0) {
        for (int w = 0; w < PC_THREADS / 32; w++)
            for (int s = 0; s < (BR ? PRG_BR_UNITS : S); s++) {
                ps_mb_init(&b.full[w][s], BK ? 1 : 32); // the producer's lanes (BK: its lane 0's expect_tx)
                ps_mb_init(&b.empty[w][s], 1);          // the consumer warp's lane 0
            }
        if (HX) prg_hold = 0;
        if (ST) {
            ps_mb_init(&stmb, 1);
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
    }
    __syncthreads();
    // PD: the next launch may start once every block has begun; its blocks
    // take the SMs this one's leave, and fill their rings while this one's
    // last blocks finish.
    if (PD) asm volatile("griddepcontrol.launch_dependents;" :::);
    // BR: more than PRG_BR_UNITS gate|up units in a ring would reuse a
    // live unit's barriers.
    if (BR && S * slot > PRG_BR_UNITS * pc_stride<4>()) __trap();
    // CP: a cap of 1 (CP 2: 8) to 24 (PRG_CAP_SHIFT).
    if (CP && ((flags >> PRG_CAP_SHIFT) < (CP == 2 ? PC_THREADS / 32 : 1) || (flags >> PRG_CAP_SHIFT) > PRG_BR_UNITS * (PC_THREADS / 32))) __trap();
    if (P == 1 ? warp == PC_THREADS / 32 : warp >= PC_THREADS / 32) {
        if (BR) {
            prg_fill_br<TR, L, CP, M>(b, pd_ring, phases, n, S * slot, lane, tr, flags >> PRG_CAP_SHIFT);
            asm volatile("cp.async.wait_all;" ::: "memory");
            return;
        }
        if (FF) {
            if (FF == 2) {
                prg_fill_fr(b, pd_ring, phases, n, S, slot, lane);
            } else {
                prg_fill_ff(b, pd_ring, phases, n, S, slot, lane);
            }
            asm volatile("cp.async.wait_all;" ::: "memory");
            return;
        }
        const int pw = P == 1 ? 0 : warp - PC_THREADS / 32;
        int cnt[PC_THREADS / 32] = {};
        for (int p = 0; p < n; p++) {
            const pc_phase f = phases[p];
            unsigned long long* rec = TR ? tr + ((long long)blockIdx.x * n + p) * PRG_TR : nullptr;
            const pc_phase* nf = PF && p + 1 < n ? phases + p + 1 : nullptr;
            if (pc_down(f.kind)) {
                prg_fill<5, HX, TR, P, BK, PF>(b, pd_ring, f, S, slot, cnt, lane, HX && !PF && (flags & PRG_PERM), rec, HX && (flags & PRG_HOLD), pw, nf);
            } else {
                prg_fill<4, HQ, TR, P, BK, PF>(b, pd_ring, f, S, slot, cnt, lane, HX && !PF && (flags & PRG_PERM), rec, HX && (flags & PRG_HOLD), pw, nf);
            }
        }
        asm volatile("cp.async.wait_all;" ::: "memory");
        return;
    }
    static_assert(!PL || (ER && !TR), "pring_hx_erp is pring_hx_er's");
    static_assert(!DF || (ER && !TR && !PL), "pring_hx_df is pring_hx_er's with flags for the barrier");
    static_assert(!PF || (ER && HX && !FF), "pring_hx_l2 is pring_hx_er's with prefetches");
    static_assert(!ER || HX, "pring_hx_er's walks are pring_hx's");
    static_assert(!FF || (HX && P == 1 && !BK && !TR), "pring_hx_ff and _fr are pring_hx's one producer, copying by cp.async, untraced");
    static_assert(FF >= 0 && FF <= 2 && (FF != 2 || ER), "FF: 1 pring_hx_ff's producer, 2 pring_hx_fr's (with ER's consumers)");
    static_assert(!BR || (ER && !FF && P == 1 && !BK && !PL && !DF && !PF), "pring_hx_br is pring_hx_er's with a ring of bytes");
    static_assert(!ST || BR, "pring_hx_brs is pring_hx_br's with bulk staging");
    static_assert(!PD || (BR && !ST && !TR), "pring_hx_brp is pring_hx_br's with programmatic dependent launch");
    static_assert(!L || (BR && !ST), "pring_hx_brl is pring_hx_br's with kind 7");
    static_assert(!CP || (BR && !ST && !PD && !L), "pring_hx_brc is pring_hx_br's with a cap on the units in flight");
    static_assert(!RP || (BR && !ST && !PD && !CP), "pring_hx_brr and _brlr are pring_hx_br's and _brl's with the residual loaded first");
    static_assert(M >= 0 && M <= 4 && (!M || (L && !RP && !CP && !PD)), "pring_hx_brm, _brm4, _brm4s and _brm4n are pring_hx_brl's with mixer phases");
    static_assert(pc_unit<7>::R == pc_unit<5>::R, "kind 7 takes the down kind's walks (prg_walk_hx, prg_walk_of<5>)");
    // PD: the consumers read x and write h and x only after the previous
    // launch has finished (its stores visible); the producer reads only the
    // weights and the phase descriptors, which no kernel writes, and starts
    // at once.
    if (PD) asm volatile("griddepcontrol.wait;" ::: "memory");
    int k = 0; // units this warp has taken from its ring
    int off = 0; // BR: where its next unit starts in its ring
    uint4 hr[PRG_HELD]; // PL: the phase's first unit, taken in the barrier's wait
    prg_hscales hs;
    bool held = false;
    for (int p = 0;; p++) {
        unsigned long long* rec = TR ? tr + ((long long)blockIdx.x * n + p) * PRG_TR : nullptr;
        const bool stamp = TR && threadIdx.x == 0;
        if (stamp) {
            rec[PRG_TR_BEGIN] = clock64();
            rec[PRG_TR_NS] = prg_globaltimer();
        }
        const pc_phase f = phases[p];
        const bool down = pc_down(f.kind), out = L && f.kind == 7, mix = M && f.kind == 6;
        // RP: lane j loads the residual of the warp's j-th unit of a down
        // phase now, beside the staging, not after each unit's sums.
        float yr = 0.0f;
        if (RP && down) {
            const prg_walk w0 = prg_walk_of<5, HX>(f, warp);
            if (lane < w0.n) yr = __ldcg(f.y + prg_unit<HX>(w0, lane));
        }
        if (DF && p > 0) {
            if (down) {
                prg_stage_df<false>(f, done, p, !(flags & PS_NO_STAGE));
            } else {
                prg_stage_df<true>(f, done, p, !(flags & PS_NO_STAGE));
            }
        } else if (mix) {
            // prm_mix reads its own inputs.
        } else if (M >= 2 && out && p > 0 && phases[p - 1].kind == 6 && !(flags & PS_NO_STAGE)) {
            prm_stage_out(f);
        } else if (p == 0 || !(flags & PS_NO_STAGE)) {
            if (HQ && down && !(ST && p > 0) && !(L && p == 0)) {
                prg_stage_hq(f);
            } else if (HX && p == 0) {
                prg_stage_xn(f);
            } else if (ST && p > 0) {
                if (down) {
                    prg_stage_bulk<false>(f, &stmb, (p - 1) & 1);
                } else {
                    prg_stage_bulk<true>(f, &stmb, (p - 1) & 1);
                }
            } else if (HX) {
                prg_stage_hq<true>(f);
            } else {
                prg_stage(f);
            }
        }
        if (stamp) rec[PRG_TR_STAGED] = clock64();
        if (HX && (flags & PRG_HOLD) && threadIdx.x == 0) prg_hold = 0;
        unsigned long long waited = 0;
        const float ns = HX && !down && !mix ? prg_inv(f.cols) : 1.0f;
        const prg_walk wk = down ? prg_walk_of<5, HX>(f, warp) : prg_walk_of<4, HQ>(f, warp);
        int j0 = 0;
        if (PL && held) {
            if (!(flags & PS_NO_DOT)) {
                if (down) {
                    prg_held_sums<5>(hr, hs, f, prg_unit<HX>(wk, 0), lane, ns);
                } else {
                    prg_held_sums<4>(hr, hs, f, prg_unit<HQ>(wk, 0), lane, ns);
                }
            }
            j0 = 1;
        }
        for (int j = j0; j < wk.n; j++, k++) {
            const int u = down ? prg_unit<HX>(wk, j) : prg_unit<HQ>(wk, j);
            const int s = BR ? k % PRG_BR_UNITS : k % S;
            const unsigned long long t0 = TR ? clock64() : 0;
            ps_mb_wait(&b.full[warp][s], BR ? (k / PRG_BR_UNITS) & 1 : (k / S) & 1);
            if (TR) waited += clock64() - t0;
            const uint4* t = pd_ring + (warp * S + s) * slot;
            if (BR) {
                const int sz = out ? pc_stride<7>() : down ? pc_stride<5>() : pc_stride<4>();
                off = prg_br_at(off, sz, S * slot);
                t = pd_ring + warp * S * slot + off;
                off = off + sz == S * slot ? 0 : off + sz;
            }
            if (ER) {
                if (flags & PS_NO_DOT) {
                    prg_free(&b.empty[warp][s], lane);
                } else if (out) {
                    prg_unit_sums_er<7, RP>(t, f, u, lane, &b.empty[warp][s], 1.0f, RP ? __shfl_sync(MEMRA_FULL_MASK, yr, j) : 0.0f);
                } else if (down) {
                    prg_unit_sums_er<5, RP>(t, f, u, lane, &b.empty[warp][s], 1.0f, RP ? __shfl_sync(MEMRA_FULL_MASK, yr, j) : 0.0f);
                } else {
                    prg_unit_sums_er<4>(t, f, u, lane, &b.empty[warp][s], ns);
                }
                continue;
            }
            if (!(flags & PS_NO_DOT)) {
                if (down) {
                    pd_unit_sums<5>(t, f, u, lane, true);
                } else {
                    pd_unit_sums<4, HX>(t, f, u, lane, true, ns);
                }
            }
            __syncwarp();
            if (lane == 0) ps_mb_arrive(&b.empty[warp][s]);
        }
        if (TR && lane == 0) rec[PRG_TR_FULL + warp] = waited;
        if (mix) {
            if (M == 3) {
                // The warp's unit of state, if its block has one (the trace
                // counts its wait as the phase's work, not as a wait for slots).
                const float4* ms = nullptr;
                unsigned long long* em = nullptr;
                if ((int)blockIdx.x < PRM_HEADS * PRM_PARTS) {
                    const int s = k % PRG_BR_UNITS;
                    ps_mb_wait(&b.full[warp][s], (k / PRG_BR_UNITS) & 1);
                    off = prg_br_at(off, PRM_UNIT, S * slot);
                    ms = reinterpret_cast<const float4*>(pd_ring + warp * S * slot + off);
                    off = off + PRM_UNIT == S * slot ? 0 : off + PRM_UNIT;
                    em = &b.empty[warp][s];
                    k++;
                }
                prm_mix4(f, ms, em);
            } else if (M == 2) {
                prm_mix4(f, nullptr, nullptr, TR ? rec + PRG_TR_FULL : nullptr);
            } else if (M == 4) {
                prm_mix4_apart(f);
            } else {
                prm_mix(f);
            }
            if (stamp) rec[PRG_TR_SUMS] = clock64();
        } else if (HQ && !down) {
            pc_sync<true>(); // the block's h is stored
            if (HX && (flags & PRG_HOLD) && threadIdx.x == 0) prg_hold = 1;
            if (stamp) rec[PRG_TR_SUMS] = clock64();
            if (!HX || !(flags & PRG_NO_EPI)) prg_quant_h(f, HX && (flags & PRG_NO_QSTORE));
        }
        if (HX && down && p + 1 < n) {
            pc_sync<true>(); // the block's x is stored
            if (HX && (flags & PRG_HOLD) && threadIdx.x == 0) prg_hold = 1;
            if (stamp) rec[PRG_TR_SUMS] = clock64();
            if (!(flags & PRG_NO_EPI)) prg_quant_x(f, phases[p + 1].norm, flags & PRG_NO_QSTORE);
        }
        if (stamp) rec[PRG_TR_EPI] = clock64();
        if (p + 1 == n) break;
        if (DF) {
            prg_signal(done, p);
        } else if (PL) {
            // pd_grid_sync with the warp's next unit taken between the
            // block's arrival and its wait.
            pc_sync<true>();
            if (threadIdx.x == 0) pd_arrive(bar, flags);
            const pc_phase g = phases[p + 1];
            const bool gd = pc_down(g.kind);
            // Taken only if it has landed (every lane's own test), so that
            // no block's barrier waits for a copy (run233 waited: 22.85 µs
            // a phase; run234 22.56; pring_hx_er 21.08-21.11).
            held = prg_walk_hx(g, warp).n > 0 && __all_sync(MEMRA_FULL_MASK, ps_mb_test(&b.full[warp][k % S], (k / S) & 1));
            if (held) {
                const int s = k % S;
                const uint4* t = pd_ring + (warp * S + s) * slot;
                if (gd) {
                    prg_take<5>(t, lane, hr, hs);
                } else {
                    prg_take<4>(t, lane, hr, hs);
                }
                prg_free(&b.empty[warp][s], lane);
                k++;
            } else {
                // Assigned on every path, so that ptxas sees hr and hs dead
                // while the next phase's ring units are summed (with them
                // live there it spilled 584 bytes, nvcc 11.8 here; 92 still
                // spill, nvcc 13's 84 in runs 233 and 234).
#pragma unroll
                for (int i = 0; i < PRG_HELD; i++) hr[i] = make_uint4(0, 0, 0, 0);
#pragma unroll
                for (int i = 0; i < PRG_HELD / 2; i++) hs.v[i] = 0;
            }
            if (threadIdx.x == 0) pd_await(bar, p, flags);
            pc_sync<true>();
        } else {
            pd_grid_sync(bar, p, flags);
        }
        if (stamp) rec[PRG_TR_BAR] = clock64();
    }
}

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring(const pc_phase* phases, int n, unsigned* bar, int flags, int S, int slot) {
    prg_kernel<false>(phases, n, bar, flags, S, slot);
}

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hq(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                          int slot) {
    prg_kernel<true>(phases, n, bar, flags, S, slot);
}

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                          int slot) {
    prg_kernel<true, true>(phases, n, bar, flags, S, slot);
}

// pring_hx stamping each phase into tr (PRG_TR fields a block a phase):
// its own kernel, so that pring_hx's code is not the traced one's.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_trace(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                                int slot, unsigned long long* tr) {
    prg_kernel<true, true, true>(phases, n, bar, flags, S, slot, tr);
}

// pring_hx with two producer warps, each filling the rings of 4 consumer
// warps (step 88: the one producer is blocked or busy all of a phase).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 64, 1) pring_hx2(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                           int slot) {
    prg_kernel<true, true, false, 2>(phases, n, bar, flags, S, slot);
}

// pring_hx with 2 slots a warp as a constant (the host launches it with
// S = 2 only): the ring's slot and round a mask and a shift, not two
// divisions a unit in the producer and in each consumer (step 88: is the
// producer's work a unit on the stream's path?).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_s2(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 2>(phases, n, bar, flags, S, slot);
}

// pring_hx with a producer that fills whichever warp's slot is free first
// (prg_fill_ff; PRG_PERM and PRG_HOLD are not taken).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_ff(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 0, 1>(phases, n, bar, flags, S, slot);
}

// pring_hx whose consumers free a slot once its unit is in their
// registers (prg_unit_sums_er), and the same with pring_hx_ff's producer.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_er(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true>(phases, n, bar, flags, S, slot);
}

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_ffer(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                               int slot) {
    prg_kernel<true, true, false, 1, 0, 1, true>(phases, n, bar, flags, S, slot);
}

// pring_hx whose producer copies each unit with two bulk copies from one
// lane (prg_bulk_unit), and the same with pring_hx_er's consumers.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_bulk(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                               int slot) {
    prg_kernel<true, true, false, 1, 0, 0, false, true>(phases, n, bar, flags, S, slot);
}

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_bulker(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                                 int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, true>(phases, n, bar, flags, S, slot);
}

// pring_hx_er whose warps take their next phase's first unit into
// registers in the grid barrier's wait (PL).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_erp(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                              int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, true>(phases, n, bar, flags, S, slot);
}

// pring_hx_er stamping each phase into tr, as pring_hx_trace does.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_er_trace(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                                   int slot, unsigned long long* tr) {
    prg_kernel<true, true, true, 1, 0, false, true>(phases, n, bar, flags, S, slot, tr);
}

// pring_hx_er with per-block flags for the grid barrier, the next phase's
// x' staged writer by writer as each finishes (DF; done: PRG_DF_STRIDE
// words a block, zeroed before the launch).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_df(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot, unsigned* done) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, true>(phases, n, bar, flags, S, slot, nullptr, done);
}

// pring_hx_er whose producer prefetches each warp's unit 2 (pring_hx_l2)
// or 4 (pring_hx_l4) further on than the one it copies into the L2 (PF).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_l2(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 2>(phases, n, bar, flags, S, slot);
}

extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_l4(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 4>(phases, n, bar, flags, S, slot);
}

// pring_hx_er with pring_hx_ff's order from a producer whose cursors are
// registers (prg_fill_fr; FF 2).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_fr(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 0, 2, true>(phases, n, bar, flags, S, slot);
}

// pring_hx_er with each warp's slots as one ring of bytes (BR; the host
// launches it with S = 2): 3 gate|up units in flight a warp, not 2.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_br(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                             int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 0, true>(phases, n, bar, flags, S, slot);
}

// pring_hx_br stamping each phase into tr, as pring_hx_trace does.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_br_trace(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                                   int slot, unsigned long long* tr) {
    prg_kernel<true, true, true, 1, 0, 0, true, false, false, false, 0, true>(phases, n, bar, flags, S, slot, tr);
}

// pring_hx_br with x' staged by bulk copies (ST, prg_stage_bulk).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_brs(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                              int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 0, true, true>(phases, n, bar, flags, S, slot);
}

// pring_hx_brs stamping each phase into tr, as pring_hx_trace does.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_brs_trace(const pc_phase* phases, int n, unsigned* bar, int flags,
                                                                                    int S, int slot, unsigned long long* tr) {
    prg_kernel<true, true, true, 1, 0, 0, true, false, false, false, 0, true, true>(phases, n, bar, flags, S, slot, tr);
}

// pring_hx_br for programmatic dependent launch (PD): a launch of one FFN
// fills its ring before the previous launch has finished (step 90: one FFN
// a launch cost pring_hx_br 5.0 us over the chain, presumably much of it
// its ring starting empty). Its griddepcontrol instructions do nothing in a plain launch.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_brp(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                              int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 0, true, false, true>(phases, n, bar, flags, S, slot);
}

// A form of pring_hx_br (BR, with pring_hx_er's HQ, HX and ER) and its
// trace, name_trace, stamping each phase into tr as pring_hx_trace does:
// prg_kernel's flags PD, L, CP, RP and M as the form sets them.
#define PRG_BR_KERNELS(name, PD_, L_, CP_, RP_, M_)                                                                                      \
    extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) name(const pc_phase* phases, int n, unsigned* bar, int flags, int S, \
                                                                          int slot) {                                                    \
        prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 0, true, false, PD_, L_, CP_, RP_, M_>(phases, n, bar, flags, S, \
                                                                                                                 slot);                  \
    }                                                                                                                                     \
    extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) name##_trace(const pc_phase* phases, int n, unsigned* bar, int flags, \
                                                                                  int S, int slot, unsigned long long* tr) {             \
        prg_kernel<true, true, true, 1, 0, 0, true, false, false, false, 0, true, false, PD_, L_, CP_, RP_, M_>(phases, n, bar, flags, S,  \
                                                                                                                slot, tr);               \
    }

// pring_hx_br taking kind 7 too (L): the 9B layer's 4096 × 4096 output
// projection as a down phase, so that a chain holds a DeltaNet layer's three
// all-to-all products after its mixer (ssm_out, gate|up, down; step 91:
// in a graph that shape streams at 53% of copy, 3.8 µs over its bytes a
// node).
PRG_BR_KERNELS(pring_hx_brl, false, true, 0, false, 0)

// pring_hx_brl for programmatic dependent launch (PD, as pring_hx_brp):
// one layer's tail a launch, filling its ring while the previous launch
// finishes.
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_brlp(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                               int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 0, true, false, true, true>(phases, n, bar, flags, S, slot);
}

// pring_hx_br whose producer keeps at most a cap of units in flight (CP,
// PRG_CAP_SHIFT), with its trace; pring_hx_brc8 testing the cap once a
// round of 8 units (CP 2).
PRG_BR_KERNELS(pring_hx_brc, false, false, 1, false, 0)
PRG_BR_KERNELS(pring_hx_brc8, false, false, 2, false, 0)

// pring_hx_br and pring_hx_brl with a down phase's residuals loaded at its
// start (RP; step 91: run249's trace has the projection's 4 units a warp
// summed in 4.2 us with 0.3 us of waiting for data, and pc_store's add
// loads each unit's residual from the L2 after its sums, one round trip a
// unit under the stream).
extern "C" __global__ void __launch_bounds__(PC_THREADS + 32, 1) pring_hx_brr(const pc_phase* phases, int n, unsigned* bar, int flags, int S,
                                                                              int slot) {
    prg_kernel<true, true, false, 1, 0, 0, true, false, false, false, 0, true, false, false, false, 0, true>(phases, n, bar, flags, S, slot);
}

PRG_BR_KERNELS(pring_hx_brlr, false, true, 0, true, 0)

// pring_hx_brl taking mixer phases too (kind 6; step 92), each form M with
// its trace (name_trace, stamping each phase into tr):
// - pring_hx_brm (M 1): a DeltaNet layer's gated delta rule between its
//   down phase and its output projection, one block a V head, while the
//   ring streams the projection's weights;
// - pring_hx_brm4 (M 2): four blocks a head;
// - pring_hx_brm4s (M 3): pring_hx_brm4 with each warp's rows of state
//   copied into its ring by the producer ahead of the mixer phase, as
//   weights are (run252: the mixer's loads after the barrier, ~4 µs a
//   phase under the stream);
// - pring_hx_brm4n (M 4): pring_hx_brm4 with the mixer a call compiled
//   apart (prm_mix4_apart).
PRG_BR_KERNELS(pring_hx_brm, false, true, 0, false, 1)
PRG_BR_KERNELS(pring_hx_brm4, false, true, 0, false, 2)
PRG_BR_KERNELS(pring_hx_brm4s, false, true, 0, false, 3)
PRG_BR_KERNELS(pring_hx_brm4n, false, true, 0, false, 4)
