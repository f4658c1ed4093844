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
// exactly once per channel, and the gated RMSNorm that follows needs whole
// heads (rmsnorm_gated in rmsnorm.cu), which this grid splits over blocks.
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

// One token of the delta rule on a warp's RPW rows M (a lane's 4 columns
// each): q, k normalised, M decayed and corrected, s[r] = (M q)_r on every
// lane. gdn_delta and gdn_delta_chunk both take it, so a chunk's outputs
// and state are the steps' bits.
template <int RPW>
__device__ __forceinline__ void memra_delta_token(float4 (&M)[RPW], float (&s)[RPW], float4 qv, float4 kv, const float (&vj)[RPW], float bh,
                                                  float ah, float sa, float dt, float l2_eps) {
    constexpr int S = MEMRA_GDN_S;
    float n2[2] = {memra_dot4(qv, qv), memra_dot4(kv, kv)};
    memra_warp_sums<2>(n2);
    const float qn = 1.0f / sqrtf(n2[0] + l2_eps);
    const float kn = 1.0f / sqrtf(n2[1] + l2_eps);
    qv = memra_scale4(memra_scale4(qv, qn), 1.0f / sqrtf((float)S));
    kv = memra_scale4(kv, kn);
    const float beta = memra_sigmoid(bh);
    const float decay = expf(sa * memra_softplus(ah + dt));

    // The rows go through each phase together, so their warp sums (the
    // kernel's critical path: two per row) overlap instead of following one
    // another; each row's arithmetic, and its butterfly's order, is the
    // per-row loop's.
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        M[r] = memra_scale4(M[r], decay);
        s[r] = memra_dot4(M[r], kv);
    }
    memra_warp_sums<RPW>(s);
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        const float d = beta * (vj[r] - s[r]);
        M[r].x += d * kv.x;
        M[r].y += d * kv.y;
        M[r].z += d * kv.z;
        M[r].w += d * kv.w;
        s[r] = memra_dot4(M[r], qv);
    }
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
    int hk, j0;
    float4* mrow;
    float4 M[RPW];
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

    float s[RPW];
    memra_delta_token<RPW>(M, s, qv, kv, vj, bh, ah, sa, dt, l2_eps);
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        mrow[r * (S / 4)] = M[r];
        if (lane == 0) o[(long long)h * S + j0 + r] = s[r];
    }
}

// The prompt chunk's forms (engine/gpu prefill.go): n tokens in one launch,
// token t's inputs and outputs t strides apart, each token's arithmetic the
// step kernels' own (memra_conv_sum or memra_conv_mem, memra_delta_token),
// in position order, so the outputs and the state after the chunk are the
// n steps' bits. A channel's window, and a block's rows of the delta
// state, stay in registers across the chunk: read once, written once.

// y, x: [n][stride] f32 (y_t's first C floats written); state, w as gdn_conv's.
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
gdn_conv_chunk(float* y, float* state, const float* x, const float* w, int channels, int kern, int n, int x_stride, int y_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    float* st = state + (long long)c * (kern - 1);
    const float* wc = w + (long long)c * kern;
    if (kern > MEMRA_CONV_MAX) {
        for (int t = 0; t < n; t++) {
            const float xc = x[(long long)t * x_stride + c];
            const float acc = memra_conv_mem(st, wc, xc, kern);
            st[kern - 2] = xc;
            y[(long long)t * y_stride + c] = memra_silu(acc);
        }
        return;
    }
    float wr[MEMRA_CONV_MAX];
    float sr[MEMRA_CONV_MAX];
#pragma unroll
    for (int j = 0; j < MEMRA_CONV_MAX; j++) {
        wr[j] = j < kern ? wc[j] : 0.0f;
        sr[j] = j < kern - 1 ? st[j] : 0.0f;
    }
    // Token t + 1's input leaves before token t's output is stored: behind
    // the store (which may alias it, for all the compiler knows) each token
    // waited out a round trip of its own.
    float xn = n > 0 ? x[c] : 0.0f;
    for (int t = 0; t < n; t++) {
        const float xc = xn;
        if (t + 1 < n) xn = x[(long long)(t + 1) * x_stride + c];
        const float acc = memra_conv_sum(sr, wr, xc, kern);
#pragma unroll
        for (int j = 0; j + 1 < MEMRA_CONV_MAX; j++)
            if (j + 1 < kern - 1) sr[j] = sr[j + 1];
#pragma unroll
        for (int j = 0; j < MEMRA_CONV_MAX; j++)
            if (j == kern - 2) sr[j] = xc;
        y[(long long)t * y_stride + c] = memra_silu(acc);
    }
#pragma unroll
    for (int j = 0; j < MEMRA_CONV_MAX; j++)
        if (j < kern - 1) st[j] = sr[j];
}

// q, k, v: token t's at + t*qkv_stride (views into the conv output); b, a:
// at + t*ba_stride; o: [n][o_stride] f32; the rest as gdn_delta's.
extern "C" __global__ void __launch_bounds__(MEMRA_GDN_THREADS)
gdn_delta_chunk(float* state, float* o, const float* q, const float* k, const float* v, const float* b, const float* a,
                const float* ssm_a, const float* dt_bias, int h_k, int h_v, int head_map, float l2_eps, int n, int qkv_stride,
                int ba_stride, int o_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    constexpr int S = MEMRA_GDN_S;
    constexpr int RPW = MEMRA_GDN_ROWS / (MEMRA_GDN_THREADS / 32); // rows per warp
    const int h = blockIdx.x;
    if (h >= h_v) return;
    const int lane = threadIdx.x & 31;
    int hk, j0;
    float4* mrow;
    float4 M[RPW];
    memra_delta_rows<RPW>(M, mrow, hk, j0, state, h, h_k, h_v, head_map);
    const float sa = ssm_a[h], dt = dt_bias[h];
    // Token t + 1's inputs leave before token t's sums and its outputs'
    // stores (which may alias them, for all the compiler knows): one round
    // trip in flight behind each token's arithmetic instead of one before it.
    struct in_t {
        float4 qv, kv;
        float vj[RPW];
        float bh, ah;
    };
    auto load = [&](int t) {
        in_t in;
        const long long qo = (long long)t * qkv_stride, bo = (long long)t * ba_stride;
        in.qv = reinterpret_cast<const float4*>(q + qo + (long long)hk * S)[lane];
        in.kv = reinterpret_cast<const float4*>(k + qo + (long long)hk * S)[lane];
#pragma unroll
        for (int r = 0; r < RPW; r++) in.vj[r] = v[qo + (long long)h * S + j0 + r];
        in.bh = b[bo + h], in.ah = a[bo + h];
        return in;
    };
    in_t next = n > 0 ? load(0) : in_t{};
    for (int t = 0; t < n; t++) {
        const in_t cur = next;
        if (t + 1 < n) next = load(t + 1);
        float s[RPW];
        memra_delta_token<RPW>(M, s, cur.qv, cur.kv, cur.vj, cur.bh, cur.ah, sa, dt, l2_eps);
        if (lane == 0) {
#pragma unroll
            for (int r = 0; r < RPW; r++) o[(long long)t * o_stride + (long long)h * S + j0 + r] = s[r];
        }
    }
#pragma unroll
    for (int r = 0; r < RPW; r++) mrow[r * (S / 4)] = M[r];
}
