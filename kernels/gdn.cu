// gdn.cu: one Gated DeltaNet decode step (qwen35 / qwen3next linear attention).
//
// Why it looks like this: the recurrent state, [H_v][128][128] f32 per layer
// (2 MiB at H_v = 32), is the only large operand, so the delta rule reads it
// once and writes it once, holding it in registers in between:
// grid (H_v, 128/16), 4 warps per block, each warp owns 4 rows j of M and
// each lane 4 consecutive columns i (one float4 per row: 16-byte, coalesced).
// Row sums are xor-butterfly warp reductions (fixed order). Every warp
// normalises its own copy of q and k (128 values, cheaper than a barrier).
// The causal conv is its own kernel because its state update must happen
// exactly once per channel. The gated RMSNorm that follows needs whole
// heads, which this grid splits over blocks: on sm_90 gdn_delta_normed makes
// a head's blocks a cluster and normalises in the same launch; before it
// rmsnorm_gated (rmsnorm.cu) follows gdn_delta.
//
// gdn_conv, per channel c of C = 2K + V (K = H_k*128, V = H_v*128):
//   window = [state[c][0..K-2] (oldest -> newest), x[c]]
//   y[c]   = silu(sum_j window[j] * w[c][j])   (j ascending; w ggml ne {kern, C})
//   state[c] = window[1..]
// gdn_delta, per V head h, K head hk = h % H_k (head_map 0, qwen35's tiled
// order) or h / (H_v/H_k) (head_map 1, qwen3next's grouped order):
//   q, k   = q[hk], k[hk] scaled by 1/sqrt(||.||2^2 + l2_eps) (transformers' l2norm, which the
//            fixtures come from; llama.cpp's 1/max(||.||, eps) differs only for near-zero vectors)
//   q     *= 1/sqrtf(128)
//   beta   = sigmoid(b[h]);  g = ssm_a[h] * softplus(a[h] + dt_bias[h]);  decay = expf(g)
//   M[j][i] *= decay;  d_j = beta * (v[h][j] - sum_i M[j][i] k_i)
//   M[j][i] += d_j * k_i;  o[h][j] = sum_i M[j][i] q_i
// state: [H_v][128][128] f32, M[j][i] at state[(h*128 + j)*128 + i] (j = v index,
// i = k index); q, k: [H_k][128] f32; v, o: [H_v][128] f32; b, a, ssm_a, dt_bias: [H_v] f32.
#include "common.cuh"

// y, x: [C] f32; state: [C][kern-1] f32 (updated); w: [C][kern] f32.
// The taps (weights) and the channel's conv state are loaded before the
// wait: the state was last written by this kernel a token step ago, and under
// PDL everything two kernels back has completed when a kernel starts (every
// kernel triggers its dependents only after its own wait; spec_test.go checks
// both), so only x[c], the output of the input projection just before, waits.
// __ldcg reads the state from L2, never a stale L1 line; __ldg the weights.
// (That a completed grid's writes are in L2 for a kernel that has not waited
// yet is how the hardware works, not something the PTX memory model states;
// the gates, which compare graph and eager steps token by token, would see a
// stale read.)
// Up to MEMRA_CONV_MAX taps stay in registers; wider kernels take the loop.
#define MEMRA_CONV_MAX 8

// One token's sum of a channel whose taps wr and window sr (oldest first)
// are in registers: taps oldest first, x last. gdn_conv and
// gdn_conv_chunk both take it, so a chunk's outputs are the steps' bits.
__device__ __forceinline__ float memra_conv_sum(const float (&sr)[MEMRA_CONV_MAX], const float (&wr)[MEMRA_CONV_MAX], float xc, int kern) {
    float acc = 0.0f;
    float wl = 0.0f;
#pragma unroll
    for (int j = 0; j < MEMRA_CONV_MAX; j++) {
        if (j < kern - 1) acc += sr[j] * wr[j];
        if (j == kern - 1) wl = wr[j];
    }
    acc += xc * wl;
    return acc;
}

// The same sum for a wider kernel, the window st and taps wc in memory,
// and the window's shift by xc.
__device__ __forceinline__ float memra_conv_mem(float* st, const float* wc, float xc, int kern) {
    float acc = 0.0f;
    for (int j = 0; j < kern - 1; j++) acc += st[j] * wc[j];
    acc += xc * wc[kern - 1];
    for (int j = 0; j + 1 < kern - 1; j++) st[j] = st[j + 1];
    return acc;
}

extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
gdn_conv(float* y, float* state, const float* x, const float* w, int channels, int kern) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const bool regs = c < channels && kern <= MEMRA_CONV_MAX;
    float wr[MEMRA_CONV_MAX];
    float sr[MEMRA_CONV_MAX];
#pragma unroll
    for (int j = 0; j < MEMRA_CONV_MAX; j++) {
        wr[j] = regs && j < kern ? __ldg(w + (long long)c * kern + j) : 0.0f;
        sr[j] = regs && j < kern - 1 ? __ldcg(state + (long long)c * (kern - 1) + j) : 0.0f;
    }
    memra_grid_wait();
    memra_grid_launch_dependents();
    if (c >= channels) return;
    float* st = state + (long long)c * (kern - 1);
    const float* wc = w + (long long)c * kern;
    const float xc = x[c];
    float acc;
    if (regs) {
        // The same sum in the same order as memra_conv_mem's: taps oldest first, x last.
        acc = memra_conv_sum(sr, wr, xc, kern);
#pragma unroll
        for (int j = 0; j + 1 < MEMRA_CONV_MAX; j++)
            if (j + 1 < kern - 1) st[j] = sr[j + 1];
    } else {
        acc = memra_conv_mem(st, wc, xc, kern);
    }
    if (kern > 1) st[kern - 2] = xc;
    y[c] = memra_silu(acc);
}

__device__ __forceinline__ float4 memra_scale4(float4 v, float s) {
    return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

__device__ __forceinline__ float memra_dot4(float4 a, float4 b) {
    float s = a.x * b.x;
    s += a.y * b.y;
    s += a.z * b.z;
    s += a.w * b.w;
    return s;
}

// One token of the delta rule, in two parts: what needs only the token's
// inputs (q, k normalised, the gate's beta and decay), and what needs the
// state (M decayed and corrected, s[r] = (M q)_r on every lane). gdn_delta
// runs one after the other; gdn_delta_chunk prepares a round of tokens'
// first parts before their state chain. Both take these two, so a chunk's
// outputs and state are the steps' bits.
struct memra_delta_in {
    float4 qv, kv;
    float beta, decay;
};

__device__ __forceinline__ memra_delta_in memra_delta_prep(float4 qv, float4 kv, float bh, float ah, float sa, float dt, float l2_eps) {
    constexpr int S = MEMRA_GDN_S;
    float n2[2] = {memra_dot4(qv, qv), memra_dot4(kv, kv)};
    memra_warp_sums<2>(n2);
    const float qn = 1.0f / sqrtf(n2[0] + l2_eps);
    const float kn = 1.0f / sqrtf(n2[1] + l2_eps);
    memra_delta_in p;
    p.qv = memra_scale4(memra_scale4(qv, qn), 1.0f / sqrtf((float)S));
    p.kv = memra_scale4(kv, kn);
    p.beta = memra_sigmoid(bh);
    p.decay = expf(sa * memra_softplus(ah + dt));
    return p;
}

// memra_delta_apply's two halves around its first warp sums: the state
// decayed and each row's k-product summed in the lane (s[r], a lane's part),
// then, from the rows' whole k-products, the state corrected and each row's
// q-product in the lane. gdn_delta_chunk sums a token's q-products with the
// next token's k-products, so that the output's warp sums leave the state's
// chain (the same butterflies, so the same bits).
template <int RPW>
__device__ __forceinline__ void memra_delta_decay(float4 (&M)[RPW], float (&s)[RPW], const memra_delta_in& p) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        M[r] = memra_scale4(M[r], p.decay);
        s[r] = memra_dot4(M[r], p.kv);
    }
}

template <int RPW>
__device__ __forceinline__ void memra_delta_correct(float4 (&M)[RPW], float (&s)[RPW], const memra_delta_in& p, const float (&vj)[RPW]) {
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        const float d = p.beta * (vj[r] - s[r]);
        M[r].x += d * p.kv.x;
        M[r].y += d * p.kv.y;
        M[r].z += d * p.kv.z;
        M[r].w += d * p.kv.w;
        s[r] = memra_dot4(M[r], p.qv);
    }
}

template <int RPW>
__device__ __forceinline__ void memra_delta_apply(float4 (&M)[RPW], float (&s)[RPW], const memra_delta_in& p, const float (&vj)[RPW]) {
    // The rows go through each phase together, so their warp sums (the
    // kernel's critical path: two per row) overlap instead of following one
    // another; each row's arithmetic, and its butterfly's order, is the
    // per-row loop's.
    memra_delta_decay<RPW>(M, s, p);
    memra_warp_sums<RPW>(s);
    memra_delta_correct<RPW>(M, s, p, vj);
    memra_warp_sums<RPW>(s);
}

// A delta-rule block's rows: V head h's K head hk (head_map as gdn_delta
// says), the warp's first row j0 of the block's MEMRA_GDN_ROWS, and its RPW
// rows M of the state loaded, a lane's float4 of each (mrow: where they
// go back).
template <int RPW>
__device__ __forceinline__ void memra_delta_rows(float4 (&M)[RPW], float4*& mrow, int& hk, int& j0, float* state, int h, int h_k, int h_v,
                                                 int head_map) {
    constexpr int S = MEMRA_GDN_S;
    hk = head_map == 0 ? h % h_k : h / (h_v / h_k);
    j0 = blockIdx.y * MEMRA_GDN_ROWS + (threadIdx.x >> 5) * RPW;
    mrow = reinterpret_cast<float4*>(state + ((long long)h * S + j0) * S) + (threadIdx.x & 31);
#pragma unroll
    for (int r = 0; r < RPW; r++) M[r] = mrow[r * (S / 4)];
}

// One token of the delta rule for a block's rows, after the grid wait:
// the state's rows M loaded and updated (the caller stores them at mrow),
// s[r] = o[h][j0 + r] on every lane. gdn_delta and gdn_delta_normed both
// run it.
template <int RPW>
__device__ __forceinline__ void memra_delta_step(float4 (&M)[RPW], float4*& mrow, float (&s)[RPW], int& j0, float* state, const float* q,
                                                 const float* k, const float* v, const float* b, const float* a, const float* ssm_a,
                                                 const float* dt_bias, int h, int h_k, int h_v, int head_map, float l2_eps) {
    constexpr int S = MEMRA_GDN_S;
    const int lane = threadIdx.x & 31;
    int hk;
    // Issue the state loads first: they are the traffic that matters.
    memra_delta_rows<RPW>(M, mrow, hk, j0, state, h, h_k, h_v, head_map);

    // Then every other input, before any arithmetic. v inside the row loop
    // would wait behind the previous row's state store, which the compiler
    // cannot prove does not alias it.
    float4 qv = reinterpret_cast<const float4*>(q + (long long)hk * S)[lane];
    float4 kv = reinterpret_cast<const float4*>(k + (long long)hk * S)[lane];
    float vj[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) vj[r] = v[(long long)h * S + j0 + r];
    const float bh = b[h], ah = a[h], sa = ssm_a[h], dt = dt_bias[h];

    memra_delta_apply<RPW>(M, s, memra_delta_prep(qv, kv, bh, ah, sa, dt, l2_eps), vj);
}

// state: [H_v][128][128] f32 (updated); o: [H_v][128] f32; q, k: [H_k][128] f32; v: [H_v][128] f32;
// b, a, ssm_a, dt_bias: [H_v] f32. All pointers 16-byte aligned.
extern "C" __global__ void __launch_bounds__(MEMRA_GDN_THREADS)
gdn_delta(float* state, float* o, const float* q, const float* k, const float* v,
          const float* b, const float* a, const float* ssm_a, const float* dt_bias,
          int h_k, int h_v, int head_map, float l2_eps) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    constexpr int S = MEMRA_GDN_S;
    constexpr int RPW = MEMRA_GDN_ROWS / (MEMRA_GDN_THREADS / 32); // rows per warp
    const int h = blockIdx.x;
    if (h >= h_v) return;
    const int lane = threadIdx.x & 31;
    float4 M[RPW];
    float4* mrow;
    float s[RPW];
    int j0;
    memra_delta_step<RPW>(M, mrow, s, j0, state, q, k, v, b, a, ssm_a, dt_bias, h, h_k, h_v, head_map, l2_eps);
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        mrow[r * (S / 4)] = M[r];
        if (lane == 0) o[(long long)h * S + j0 + r] = s[r];
    }
}

// gdn_delta_normed is gdn_delta and then rmsnorm_gated (rmsnorm.cu) on its
// output, in one launch: on[h] = rmsnorm(o[h]) * norm_w * silu(z[h]), o
// not stored. The gated norm needs a whole head, which gdn_delta's grid
// splits over its 8 blocks in y; here those 8 blocks are a cluster (sm_90),
// and each lane stores one of its warp's 4 outputs into one of the 8
// blocks' shared memory (distributed shared memory), so that after one
// cluster barrier every block holds its head's 128 outputs and no block
// reads another's memory: each may exit when it is done. Each warp then
// normalises the head from its block's copy, the sum of squares
// rmsnorm_gated's: squares of 32 outputs a warp summed in memra_warp_sum's
// butterfly, the partials added in warp order (rmsnorm_gated's other four
// warps, past the head's 128 outputs, add zeros), the inverse and the
// products in its order; so on and the state are the two kernels' bits
// (engine/gpu's TestGPUKernelGDNDeltaNormed). One node a DeltaNet layer
// fewer in a step's graph. w and silu(z) are read before the wait as
// rmsnorm_gated reads them (z is two kernels back: the input projection,
// then gdn_conv). Before sm_90 (no clusters) it traps; the engine runs the
// two kernels there.
// on, z: [H_v][128] f32; norm_w: [128] f32; the rest as gdn_delta's.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MEMRA_GDN_CLUSTER __cluster_dims__(1, MEMRA_GDN_S / MEMRA_GDN_ROWS, 1)
#else
#define MEMRA_GDN_CLUSTER
#endif
extern "C" __global__ void __launch_bounds__(MEMRA_GDN_THREADS) MEMRA_GDN_CLUSTER
gdn_delta_normed(float* state, float* on, const float* q, const float* k, const float* v,
                 const float* b, const float* a, const float* ssm_a, const float* dt_bias, const float* norm_w, const float* z,
                 int h_k, int h_v, int head_map, float l2_eps, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int S = MEMRA_GDN_S;
    constexpr int RPW = MEMRA_GDN_ROWS / (MEMRA_GDN_THREADS / 32);
    static_assert(RPW * (S / MEMRA_GDN_ROWS) == 32, "a warp's lanes are its rows times the cluster's blocks");
    static_assert(S == 128 && MEMRA_NORM_THREADS == 256, "rmsnorm_gated's sum: 4 warps of outputs, 4 of zeros");
    __shared__ float os[S]; // the head's outputs, one copy a block
    const int lane = threadIdx.x & 31;
    const int h = blockIdx.x; // grid.x is h_v (the spec), so every block of a cluster arrives
    const int jw = blockIdx.y * MEMRA_GDN_ROWS + (threadIdx.x >> 5) * RPW; // the warp's first row
    const bool mine = lane < RPW;
    const float wj = mine ? __ldg(norm_w + jw + lane) : 0.0f;
    const float sj = mine ? memra_silu(__ldcg(z + (long long)h * S + jw + lane)) : 0.0f;
    memra_grid_wait();
    memra_grid_launch_dependents();
    float4 M[RPW];
    float4* mrow;
    float s[RPW];
    int j0;
    memra_delta_step<RPW>(M, mrow, s, j0, state, q, k, v, b, a, ssm_a, dt_bias, h, h_k, h_v, head_map, l2_eps);
    // Lane L sends row L % RPW to the block of cluster rank L / RPW.
    float sv = s[0];
#pragma unroll
    for (int r = 1; r < RPW; r++)
        if (lane % RPW == r) sv = s[r];
    const unsigned int local = (unsigned int)__cvta_generic_to_shared(os + j0 + lane % RPW);
    unsigned int remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(lane / RPW));
    asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(remote), "f"(sv) : "memory");
    // The barrier's arrive orders the thread's writes before it GPU-wide
    // (ptxas 11.8 puts MEMBAR.ALL.GPU there: PTX 7.8 has no cluster-scoped
    // .release), so the state's rows are stored after it, not waited on.
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#pragma unroll
    for (int r = 0; r < RPW; r++) mrow[r * (S / 4)] = M[r];
    float sq[S / 32];
#pragma unroll
    for (int w = 0; w < S / 32; w++) {
        const float x = os[w * 32 + lane];
        float ss = 0.0f;
        ss += x * x;
        sq[w] = ss;
    }
    memra_warp_sums<S / 32>(sq);
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < S / 32; w++) t += sq[w];
    const float inv = 1.0f / sqrtf(t / (float)S + eps);
    if (mine) on[(long long)h * S + j0 + lane] = os[j0 + lane] * inv * wj * sj;
#else
    __trap();
#endif
}

// The prompt chunk's forms (engine/gpu prefill.go): n tokens in one launch,
// token t's inputs and outputs t strides apart, each token's arithmetic the
// step kernels' own (memra_conv_sum or memra_conv_mem, memra_delta_prep and
// memra_delta_apply), so the outputs and the state after the chunk are the
// n steps' bits.

// A token's conv sum needs the kern - 1 inputs before it, not the sums
// before it, so the chunk's tokens need not wait on one another: a block
// takes 32 channels (a warp's lanes, coalesced) and its warps a run of up
// to MEMRA_CONV_RUN consecutive tokens each, every input of a run loaded
// before its first sum. (A thread a channel, the tokens in turn, left the
// 0.8B's 6,144 channels 24 blocks and a chunk of 32 tokens 32 round trips
// in a row: 14.8 us a launch alone on an H100, run421.) The warps whose windows
// reach back before the chunk read the channel's state, which warp 0 then
// writes after the block's barrier.
#define MEMRA_CONV_RUN 8

// y, x: [n][stride] f32 (y_t's first C floats written; y must not overlap
// x, which other warps read as their windows); state, w as gdn_conv's.
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
gdn_conv_chunk(float* y, float* state, const float* x, const float* w, int channels, int kern, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    constexpr int G = MEMRA_EW_THREADS / 32;
    const int g = threadIdx.x >> 5;
    const int c = blockIdx.x * 32 + (threadIdx.x & 31);
    const bool on = c < channels;
    float* st = state + (long long)c * (kern - 1);
    const float* wc = w + (long long)c * kern;
    if (kern > MEMRA_CONV_MAX) {
        if (!on || g != 0) return;
        for (int t = 0; t < n; t++) {
            const float xc = x[(long long)t * x_stride + c];
            const float acc = memra_conv_mem(st, wc, xc, kern);
            st[kern - 2] = xc;
            y[(long long)t * y_stride + c] = memra_silu(acc);
        }
        return;
    }
    // The channel's input at token u, the state's for u < 0 (oldest first).
    auto in = [&](int u) { return u < 0 ? st[kern - 1 + u] : x[(long long)u * x_stride + c]; };
    float wr[MEMRA_CONV_MAX];
    float ns[MEMRA_CONV_MAX]; // the state after the chunk: its last kern - 1 inputs (warp 0's)
#pragma unroll
    for (int j = 0; j < MEMRA_CONV_MAX; j++) {
        wr[j] = on && j < kern ? wc[j] : 0.0f;
        ns[j] = on && g == 0 && j < kern - 1 ? in(n - (kern - 1) + j) : 0.0f;
    }
    for (int base = 0; base < n; base += G * MEMRA_CONV_RUN) {
        const int per = (min(n - base, G * MEMRA_CONV_RUN) + G - 1) / G;
        const int t0 = base + g * per, cnt = min(per, n - t0);
        if (!on || cnt <= 0) continue;
        float sr[MEMRA_CONV_MAX];
        float xs[MEMRA_CONV_RUN];
#pragma unroll
        for (int j = 0; j < MEMRA_CONV_MAX; j++) sr[j] = j < kern - 1 ? in(t0 - (kern - 1) + j) : 0.0f;
#pragma unroll
        for (int i = 0; i < MEMRA_CONV_RUN; i++) xs[i] = i < cnt ? x[(long long)(t0 + i) * x_stride + c] : 0.0f;
#pragma unroll
        for (int i = 0; i < MEMRA_CONV_RUN; i++) {
            if (i >= cnt) break;
            const float acc = memra_conv_sum(sr, wr, xs[i], kern);
#pragma unroll
            for (int j = 0; j + 1 < MEMRA_CONV_MAX; j++)
                if (j + 1 < kern - 1) sr[j] = sr[j + 1];
#pragma unroll
            for (int j = 0; j < MEMRA_CONV_MAX; j++)
                if (j == kern - 2) sr[j] = xs[i];
            y[(long long)(t0 + i) * y_stride + c] = memra_silu(acc);
        }
    }
    __syncthreads(); // every window's read of the state before it changes
    if (on && g == 0) {
#pragma unroll
        for (int j = 0; j < MEMRA_CONV_MAX; j++)
            if (j < kern - 1) st[j] = ns[j];
    }
}

// q, k, v: token t's at + t*qkv_stride (views into the conv output); b, a:
// at + t*ba_stride; o: [n][o_stride] f32, overlapping no input (a round's
// inputs are read before its outputs are stored); the rest as gdn_delta's.
// A block's rows of the state stay in registers across the chunk, read
// once and written once. What a token needs besides the state (its q and k
// normalised, its gate: a warp sum, square roots and exponentials) is a
// chain as long as the state's own, and the same for the block's 4 warps
// (one head), so the warps first prepare MEMRA_GDN_PREP tokens' of it side
// by side, into shared memory with the tokens' v, and the state chain then
// runs through those tokens alone. (Preparing token t + 1 inside token t's iteration instead
// took 7-8% longer, run422.)
#define MEMRA_GDN_PREP 16

extern "C" __global__ void __launch_bounds__(MEMRA_GDN_THREADS)
gdn_delta_chunk(float* state, float* o, const float* q, const float* k, const float* v, const float* b, const float* a,
                const float* ssm_a, const float* dt_bias, int h_k, int h_v, int head_map, float l2_eps, int n, int qkv_stride,
                int ba_stride, int o_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    constexpr int S = MEMRA_GDN_S;
    constexpr int NW = MEMRA_GDN_THREADS / 32;
    constexpr int RPW = MEMRA_GDN_ROWS / NW; // rows per warp
    constexpr int P = MEMRA_GDN_PREP, PW = P / NW;
    static_assert(P % NW == 0, "a round's tokens split evenly among the warps");
    __shared__ float4 sq[P][32], sk[P][32];
    __shared__ float sg[P][2];
    __shared__ float sv[P][MEMRA_GDN_ROWS]; // the round's v at the block's rows
    const int h = blockIdx.x;
    if (h >= h_v) return;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int hk, j0;
    float4* mrow;
    float4 M[RPW];
    memra_delta_rows<RPW>(M, mrow, hk, j0, state, h, h_k, h_v, head_map);
    const float sa = ssm_a[h], dt = dt_bias[h];
    // Token t's k-products and token t - 1's q-products are summed together
    // (2 * RPW independent butterflies), so the state's chain waits on one
    // warp sum a token, not two; the chunk's last q-products after the loop.
    float sum[2 * RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) sum[RPW + r] = 0.0f;
    for (int base = 0; base < n; base += P) {
        const int cnt = min(P, n - base);
        // Warp w prepares the round's tokens w, w + NW, ...: every load
        // first, then the PW chains, independent of one another.
        float4 qv[PW], kv[PW];
        float bh[PW], ah[PW];
#pragma unroll
        for (int i = 0; i < PW; i++) {
            const long long t = base + min(warp + i * NW, cnt - 1);
            qv[i] = reinterpret_cast<const float4*>(q + t * qkv_stride + (long long)hk * S)[lane];
            kv[i] = reinterpret_cast<const float4*>(k + t * qkv_stride + (long long)hk * S)[lane];
            bh[i] = b[t * ba_stride + h], ah[i] = a[t * ba_stride + h];
        }
        // And the round's v at the block's rows, which the state chain
        // would otherwise wait on from the L2 a token at a time.
        const int jb = blockIdx.y * MEMRA_GDN_ROWS;
        for (int e = threadIdx.x; e < P * MEMRA_GDN_ROWS; e += MEMRA_GDN_THREADS) {
            const int i = e / MEMRA_GDN_ROWS, j = e % MEMRA_GDN_ROWS;
            sv[i][j] = v[(long long)(base + min(i, cnt - 1)) * qkv_stride + (long long)h * S + jb + j];
        }
#pragma unroll
        for (int i = 0; i < PW; i++) {
            const memra_delta_in p = memra_delta_prep(qv[i], kv[i], bh[i], ah[i], sa, dt, l2_eps);
            const int tt = warp + i * NW;
            sq[tt][lane] = p.qv, sk[tt][lane] = p.kv;
            if (lane == 0) sg[tt][0] = p.beta, sg[tt][1] = p.decay;
        }
        __syncthreads();
        for (int i = 0; i < cnt; i++) {
            memra_delta_in p;
            p.qv = sq[i][lane], p.kv = sk[i][lane], p.beta = sg[i][0], p.decay = sg[i][1];
            float vj[RPW], s[RPW];
#pragma unroll
            for (int r = 0; r < RPW; r++) vj[r] = sv[i][j0 - jb + r];
            memra_delta_decay<RPW>(M, s, p);
#pragma unroll
            for (int r = 0; r < RPW; r++) sum[r] = s[r];
            memra_warp_sums<2 * RPW>(sum);
            if (lane == 0 && base + i > 0) {
#pragma unroll
                for (int r = 0; r < RPW; r++) o[(long long)(base + i - 1) * o_stride + (long long)h * S + j0 + r] = sum[RPW + r];
            }
#pragma unroll
            for (int r = 0; r < RPW; r++) s[r] = sum[r];
            memra_delta_correct<RPW>(M, s, p, vj);
#pragma unroll
            for (int r = 0; r < RPW; r++) sum[RPW + r] = s[r];
        }
        __syncthreads(); // the round's preparations read before the next round's land
    }
    float s[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) s[r] = sum[RPW + r];
    memra_warp_sums<RPW>(s);
    if (lane == 0 && n > 0) {
#pragma unroll
        for (int r = 0; r < RPW; r++) o[(long long)(n - 1) * o_stride + (long long)h * S + j0 + r] = s[r];
    }
#pragma unroll
    for (int r = 0; r < RPW; r++) mrow[r * (S / 4)] = M[r];
}
