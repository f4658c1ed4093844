// common.cuh: the helpers every memra kernel shares.
//
// Why it looks like this: the kernels are built into one fatbin by a unity
// translation unit (memra.cu), so this header is included once per concept
// file and guarded. It needs no CUDA header at all: f16 conversions are single
// PTX cvt instructions, bf16 is a 16-bit shift, and the fp8 e4m3 codec is
// written out bit by bit so the pure-Go CPU reference can mirror it exactly.
// Block sizes are named here because each kernel's reduction tree is built for
// exactly that many threads; spec_test.go checks that spec_table.go launches
// every kernel with the size its __launch_bounds__ names.
//
// Numerics: everything is f32 and the fatbin is built WITHOUT --use_fast_math,
// so expf/logf/sqrtf and '/' are the accurate IEEE versions, and every
// reduction runs in a fixed order (no float atomics): the same kernel with the
// same geometry produces bit-identical results, which the CUDA-graph gate needs.
#ifndef MEMRA_COMMON_CUH
#define MEMRA_COMMON_CUH

// ---- block sizes (threads per block); spec_table.go must agree -------------
#define MEMRA_EW_THREADS 256      // element-wise kernels: one thread per element
#define MEMRA_NORM_THREADS 256    // rmsnorm family: one block per row
#define MEMRA_MV_THREADS 256      // matvec: 8 warps (row groups x K split: matvec.cu)
#define MEMRA_ROPE_THREADS 64     // rope: one block per head, a thread per pair
#define MEMRA_KV_THREADS 128      // kv_store: one block per KV head
#define MEMRA_ATTN_THREADS 256    // attention split: 8 warps per (kv head, split), f16 or e4m3 cache
#define MEMRA_COMBINE_THREADS 128 // attention combine: 32 dims of one q head per block
#define MEMRA_GDN_THREADS 128     // delta rule: 4 warps x 4 state rows
#define MEMRA_GDN_ROWS 16         // state rows per delta-rule block
#define MEMRA_GDN_S 128           // Gated DeltaNet head dim (ssm.state_size)
#define MEMRA_ARGMAX_THREADS 256  // argmax: partial blocks and the final block
#define MEMRA_ARGMAX_CHUNK 8192   // logits per argmax_partial block
#define MEMRA_SCREEN_TOP_CHUNK 2048 // rows per logits_screen_top block
#define MEMRA_CTR_THREADS 32      // counters: one warp, lane 0 works
#define MEMRA_TOPK_THREADS 1024   // top-k: one block sorts a slice
#define MEMRA_TOPK_SLICE 4096     // (value, id) pairs a top-k block sorts
#define MEMRA_TOPK_MAX 64         // survivors a top-k block keeps: the largest k served
#define MEMRA_DRAW_THREADS 32     // sample_draw: one warp, the exps a lane each
#define MEMRA_PENALTY_THREADS 256 // repeat_penalty: one block over the window
#define MEMRA_PENALTY_MAX_WINDOW 4096 // the longest repetition window the device keeps
#define MEMRA_Q8_LANE_PAIRS 64    // matvec_q8_0_wide: a row's scales in the order of its 64 lane pairs (matvec.cu)
#define MEMRA_MVB_TOKENS 8        // matvec_batch: the most tokens one pass (grid row) of a launch serves
#define MEMRA_MVB_SLOTS 4         // matvec_batch: a warp's ring slots, SLOTS - 1 items of loads in flight (matvec_batch.cu)
#define MEMRA_MVB_SLOT 2560       // matvec_batch: a ring slot's bytes, the lanes' 16-byte q8_0 loads of 4 rows and a 4-byte word each for its scale
#define MEMRA_MVBK_SLOTS 2        // matvec_batch_kq.cu: a warp's ring slots of K-quant tiles

#define MEMRA_NO_TOKEN -1         // out[0] of a step whose logits are all NaN (memra_end_step)
#define MEMRA_FULL_MASK 0xffffffffu

// Device counters of the device-counter decode path (DecodeStepDC and the
// captured graphs). One struct of int32 in device memory, byte offsets:
//   0 token  the input token of the next step (argmax_final writes it)
//   4 pos    the position of that token = its KV cache slot = its rope position
//   8 t_kv   keys visible to attention during the step (= pos + 1)
//  12 step   steps taken since counters_set (diagnostics)
// Kernels never take the struct: they take `int v, const int* dv` pairs and
// read `dv ? *dv : v`, so the eager path (host value, null pointer) and the
// device-counter path (pointer into this struct) run the same arithmetic.
struct memra_counters {
    int token;
    int pos;
    int t_kv;
    int step;
};

__device__ __forceinline__ int memra_load_or(int v, const int* dv) {
    return dv ? *dv : v;
}

// The end of a device-counter step (argmax_final, sample_draw): out[0] and
// the counters' token get the picked token, and pos, t_kv and step move on
// by one. ctr may be null (the picked token only). A step with no token to
// pick (every logit NaN: weights or activations that are not finite) passes
// MEMRA_NO_TOKEN: out[0] and the ring's place say so, while the counters
// get token 0, which the next step's embedding lookup can read.
// ring: null, or [2] int32 in host memory mapped for the device
// (engine/cuda HostAllocMapped), which with ctr gets the token at
// [pos & 1], pos the step's own: graph decode reads the token there, not
// in out[0], once the replay is done, with no copy queued between replays
// (a 4-byte copy cost the stream 7-8 us a token: docs/perf.md step 138),
// while the next replay writes the other place.
__device__ __forceinline__ void memra_end_step(int* out, int* ring, int* ctr, int tok) {
    out[0] = tok;
    if (ctr) {
        memra_counters* c = reinterpret_cast<memra_counters*>(ctr);
        if (ring) ring[c->pos & 1] = tok;
        c->token = tok == MEMRA_NO_TOKEN ? 0 : tok;
        c->pos += 1;
        c->t_kv += 1;
        c->step += 1;
    }
}

// ---- 16-bit floats ---------------------------------------------------------

// f16 bits -> f32 (exact; cvt.f32.f16 handles subnormals, inf, NaN).
__device__ __forceinline__ float memra_f16_to_f32(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// int8 quant k (0..3) of u = q ^ 0x80808080 as an exact f32: the byte placed
// under exponent 2^23 is q_k + 128, so the float is 2^23 + 128 + q_k. One byte
// permute and one add instead of a (quarter-rate) integer-to-float convert.
__device__ __forceinline__ float memra_q8_val(unsigned int u, int k) {
    return __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7440u | k)) - 8388736.0f;
}

// f32 -> f16 bits, round to nearest even; overflow gives +-inf.
__device__ __forceinline__ unsigned short memra_f32_to_f16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

// bf16 bits -> f32 (exact: bf16 is the top half of an f32).
__device__ __forceinline__ float memra_bf16_to_f32(unsigned short b) {
    return __uint_as_float(((unsigned int)b) << 16);
}

// Low / high 16 bits of a 32-bit word holding two packed 16-bit floats
// (little endian: element 2i is the low half).
__device__ __forceinline__ unsigned short memra_lo16(unsigned int w) { return (unsigned short)(w & 0xffffu); }
__device__ __forceinline__ unsigned short memra_hi16(unsigned int w) { return (unsigned short)(w >> 16); }

// 2^x on the SFU (ex2.approx.ftz; results below 2^-126 flushed to 0): one
// instruction where expf's range reduction takes about seven (the attention
// splits' softmax, perf.md step 64). Error within 2 ulp: exp2f, which the
// CUDA programming guide bounds at 2 ulp, is this instruction plus a
// squaring for results below 2^-126 (sm_90 SASS).
__device__ __forceinline__ float memra_exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ---- fp8 e4m3 (OCP "E4M3FN": bias 7, no infinities, NaN = S.1111.111) -----
//
// decode: e = bits 6..3, m = bits 2..0
//   e == 0          : (-1)^s * m * 2^-9            (subnormal)
//   e == 15, m == 7 : NaN
//   otherwise       : (-1)^s * (1 + m/8) * 2^(e-7)  (max 448)
__device__ __forceinline__ float memra_e4m3_to_f32(unsigned int b) {
    const unsigned int s = (b & 0x80u) << 24;
    const unsigned int e = (b >> 3) & 0xfu;
    const unsigned int m = b & 0x7u;
    if (e == 0) {
        // m * 2^-9 is exact in f32.
        const float v = (float)m * 0.001953125f;
        return __uint_as_float(__float_as_uint(v) | s);
    }
    if (e == 15 && m == 7) {
        return __uint_as_float(0x7fc00000u | s);
    }
    return __uint_as_float(s | ((e + 120u) << 23) | (m << 20));
}

// Two e4m3 values (the low byte of v first) to f32, the same values as
// memra_e4m3_to_f32 (every e4m3 is exact in f16; NaN stays NaN, its sign
// and payload the hardware's). Hopper converts a pair in one instruction;
// the branchy decode above was the fp8 attention splits' bottleneck
// (perf.md step 62). Older GPUs take the decode above.
__device__ __forceinline__ float2 memra_e4m3x2_to_f32(unsigned short v) {
#if __CUDA_ARCH__ >= 900
    unsigned int h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(v));
    return make_float2(memra_f16_to_f32(memra_lo16(h2)), memra_f16_to_f32(memra_hi16(h2)));
#else
    return make_float2(memra_e4m3_to_f32(v & 0xffu), memra_e4m3_to_f32((unsigned int)v >> 8));
#endif
}

// encode: round to nearest even, saturating to +-448 (inf saturates too),
// NaN -> 0x7f with the sign kept. Bit-exact against the decode above.
__device__ __forceinline__ unsigned int memra_f32_to_e4m3(float x) {
    const unsigned int bits = __float_as_uint(x);
    const unsigned int s = (bits >> 24) & 0x80u;
    const unsigned int a = bits & 0x7fffffffu; // |x| as bits
    if (a > 0x7f800000u) {
        return s | 0x7fu; // NaN
    }
    if (a >= 0x43e00000u) {
        return s | 0x7eu; // |x| >= 448 (and inf): saturate
    }
    if (a < 0x3c800000u) {
        // |x| < 2^-6: subnormal range. |x| * 2^9 is exact; rint rounds to
        // nearest even; 8 lands on the smallest normal (0x08) by itself.
        const float q = rintf(__uint_as_float(a) * 512.0f);
        return s | (unsigned int)q;
    }
    // Normal: keep 3 mantissa bits of the f32, round the other 20 to nearest
    // even; a carry ripples into the exponent, which is what we want.
    unsigned int base = a >> 20;            // f32 exponent(8) | top 3 mantissa bits
    const unsigned int rest = a & 0xfffffu; // the 20 bits rounded away
    if (rest > 0x80000u || (rest == 0x80000u && (base & 1u))) {
        base += 1;
    }
    unsigned int code = base - (120u << 3); // rebias 127 -> 7
    if (code > 0x7eu) {
        code = 0x7eu; // cannot happen below 448, kept as a guard
    }
    return s | code;
}

// ---- reductions ------------------------------------------------------------
// Butterfly (xor) reductions: every lane ends with the same value, and since
// IEEE add is commutative the partner lanes compute bit-identical sums.

__device__ __forceinline__ float memra_warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(MEMRA_FULL_MASK, v, off);
    }
    return v;
}

// memra_warp_sums: N independent warp sums, each memra_warp_sum's butterfly
// (same order, same bits), interleaved so their shuffles overlap.
template <int N>
__device__ __forceinline__ void memra_warp_sums(float (&v)[N]) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
        for (int i = 0; i < N; i++) v[i] += __shfl_xor_sync(MEMRA_FULL_MASK, v[i], off);
    }
}

__device__ __forceinline__ float memra_warp_max(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(MEMRA_FULL_MASK, v, off));
    }
    return v;
}

// Sum over a block of NT threads (NT a multiple of 32, at most 1024); every
// thread gets the result. Order: each warp's butterfly, then warp sums added
// in warp order by every thread. `scratch` holds NT/32 floats.
template <int NT>
__device__ __forceinline__ float memra_block_sum(float v, float* scratch) {
    constexpr int NW = NT / 32;
    v = memra_warp_sum(v);
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < NW; w++) {
        t += scratch[w];
    }
    __syncthreads(); // scratch may be reused right after
    return t;
}

template <int NT>
__device__ __forceinline__ float memra_block_max(float v, float* scratch) {
    constexpr int NW = NT / 32;
    v = memra_warp_max(v);
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    float t = scratch[0];
#pragma unroll
    for (int w = 1; w < NW; w++) {
        t = fmaxf(t, scratch[w]);
    }
    __syncthreads();
    return t;
}

// ---- activations (accurate expf: no fast math) -----------------------------

__device__ __forceinline__ float memra_sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

// silu(x) = x * sigmoid(x), written as x / (1 + e^-x); x -> -inf gives -0.
__device__ __forceinline__ float memra_silu(float x) {
    return x / (1.0f + expf(-x));
}

// A matvec output (the epilogue of matvec.cu and matvec_q4k.cu): mode 0
// stores y[r] = v, 1 adds into y[r], 2 is the SwiGLU of a (gate, up) row
// pair: r even, v the gate row's sum, up the next row's, y[r/2] written.
__device__ __forceinline__ void memra_mv_put(float* y, int r, float v, float up, int mode) {
    if (mode == 2) {
        y[r >> 1] = memra_silu(v) * up;
    } else {
        y[r] = mode == 1 ? y[r] + v : v;
    }
}

// softplus(x) = log(1 + e^x), linear above 20 where e^-x < f32 epsilon.
__device__ __forceinline__ float memra_softplus(float x) {
    return x > 20.0f ? x : log1pf(expf(x));
}

// p, which the compiler may no longer recompute from the kernel's
// parameters: it stays in a register across a loop instead of being
// rebuilt every trip (memra_mvb_units, memra_kq_lane_in).
template <typename T>
__device__ __forceinline__ void memra_opaque(T*& p) {
    asm("" : "+l"(p));
}

// Read-only 16-byte load through the non-coherent path (weights, KV cache).
__device__ __forceinline__ uint4 memra_ldg16(const void* p) {
    return __ldg(reinterpret_cast<const uint4*>(p));
}

__device__ __forceinline__ bool memra_aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// ---- programmatic dependent launch -----------------------------------------
// On sm_90 the engine launches every kernel with programmatic stream
// serialisation, so a kernel may begin while the one before it in the stream
// (or graph) is still running. memra_grid_wait() returns once that kernel
// has completed and its writes are visible; every kernel calls it before it
// reads anything an earlier kernel wrote and before it writes anything
// (spec_test.go checks that each kernel starts with it). Reading weights,
// which no kernel writes, may come first. memra_grid_launch_dependents() lets
// the next kernel launch once every block of this one has called it (or
// exited). Most kernels call it just after their wait; the decode's
// matvecs and the prefill's ring ones choose by memra_release (below), the
// prefill's CUDA-core batched ones (matvec_batch.cu) call it at each
// block's last unit. Both are no-ops before sm_90 and without the launch
// attribute.
__device__ __forceinline__ void memra_grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void memra_grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// When a matvec's block releases the grid's successor: just after its wait
// (EARLY) or at its last unit, after its weight stream (LAST); WIDE is
// EARLY on rows of 4,096 columns or more, else LAST. The grids take one
// wave (step 9), so the successor's blocks take only the room this grid
// leaves, and which wins is measured, not derived: EARLY in the decode's
// f16/bf16 matvecs (0.8B bf16 graph decode +1.9%, perf.md step 147) and
// ring kernels (0.8B Q4_K +1.6-2.1%, steps 147-148); LAST in the q8_0 ones
// (early lost 2.5-2.8%, step 147), the f32 one (not measured) and the
// prefill's ring ones (matvec_batch_kq.cu; early, the 9B K-quants primed
// 2.8-5.4% more slowly, step 151); WIDE in Q6_K's own (with EARLY its 0.8B
// file lost 4.2% where the 9B gained 2.8%, steps 149-150; with WIDE the
// 0.8B +3.5-3.7% and the 9B unchanged, step 152), whose part of the mixed
// launch keeps EARLY. It moves an instruction, not arithmetic.
enum memra_release : int { MEMRA_RELEASE_LAST, MEMRA_RELEASE_EARLY, MEMRA_RELEASE_WIDE };

template <memra_release REL>
__device__ __forceinline__ bool memra_release_early(int cols) {
    return REL == MEMRA_RELEASE_EARLY || (REL == MEMRA_RELEASE_WIDE && cols >= 4096);
}

// Hint the L2 to fetch the 128-byte line holding p (no fault, no result).
__device__ __forceinline__ void memra_prefetch_l2(const void* p) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

#endif // MEMRA_COMMON_CUH
