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
    float acc = 0.0f;
    if (regs) {
        // The same sum in the same order as the loop below: taps oldest first, x last.
        float wl = 0.0f;
#pragma unroll
        for (int j = 0; j < MEMRA_CONV_MAX; j++) {
            if (j < kern - 1) acc += sr[j] * wr[j];
            if (j == kern - 1) wl = wr[j];
        }
        acc += xc * wl;
#pragma unroll
        for (int j = 0; j + 1 < MEMRA_CONV_MAX; j++)
            if (j + 1 < kern - 1) st[j] = sr[j + 1];
    } else {
        for (int j = 0; j < kern - 1; j++) acc += st[j] * wc[j];
        acc += xc * wc[kern - 1];
        for (int j = 0; j + 1 < kern - 1; j++) st[j] = st[j + 1];
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
    const int hk = head_map == 0 ? h % h_k : h / (h_v / h_k);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int j0 = blockIdx.y * MEMRA_GDN_ROWS + warp * RPW;

    // Issue the state loads first: they are the traffic that matters.
    float4* mrow = reinterpret_cast<float4*>(state + ((long long)h * S + j0) * S) + lane;
    float4 M[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) M[r] = mrow[r * (S / 4)];

    // Then every other input, before any arithmetic. v inside the row loop
    // would wait behind the previous row's state store, which the compiler
    // cannot prove does not alias it.
    float4 qv = reinterpret_cast<const float4*>(q + (long long)hk * S)[lane];
    float4 kv = reinterpret_cast<const float4*>(k + (long long)hk * S)[lane];
    float vj[RPW];
#pragma unroll
    for (int r = 0; r < RPW; r++) vj[r] = v[(long long)h * S + j0 + r];
    const float bh = b[h], ah = a[h], sa = ssm_a[h], dt = dt_bias[h];

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
    float s[RPW];
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
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        mrow[r * (S / 4)] = M[r];
        if (lane == 0) o[(long long)h * S + j0 + r] = s[r];
    }
}
