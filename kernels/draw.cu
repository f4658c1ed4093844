// draw.cu: the sampled token, drawn on the device from the step's top k.
//
// Why it looks like this: when the host draws, every sampled step waits for
// its top k to come back before the next step can be queued. Drawn here, the
// token goes into the device counters as argmax_final's does, and sampled
// generation runs graph replays back to back with 4 bytes read back per
// token, as greedy generation does. The host must still pick the same token
// (engine/sample: Sampler.SampleTop, the path without the device draw), so
// this is the host's arithmetic operation for operation, in double: the
// exps (engine/sample draw.go's exp, the same FMAs) and the quotients one
// candidate per lane, while lane 0 adds, filters and draws in the host's
// order. Nothing here is parallel where the host adds in sequence, and every
// product that feeds an addition is an explicit fma, so contraction cannot
// differ. The random
// number is draw `index` of splitmix64's stream for `seed` (sample.Uniform).
#include "common.cuh"

// The sampling parameters, in device memory (engine/gpu writes them before
// generation; the kernel advances index). Byte offsets: seed 0, index 8,
// k 16, temperature 20, top_p 24, min_p 28 (kernels.Draw*).
struct memra_draw {
    unsigned long long seed;  // sample.Options.Seed
    unsigned long long index; // tokens drawn so far: this one draws Uniform(seed, index)
    int k;                    // top-k, 1..MEMRA_TOPK_MAX
    float temperature;        // > 0
    float top_p;              // applied when in (0, 1)
    float min_p;              // applied when > 0
};
static_assert(sizeof(memra_draw) == 32, "memra_draw is 32 bytes (kernels.DrawParamsBytes)");

// sample.Uniform: splitmix64's output function over seed + (i+1)·γ, top 53 bits.
__device__ __forceinline__ double memra_uniform(unsigned long long seed, unsigned long long i) {
    unsigned long long z = seed + (i + 1ull) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0); // 2^-53
}

// sample's exp: x = n·ln 2 + r, e^r by Taylor to r^13 in FMAs, times 2^n.
__device__ __forceinline__ double memra_exp_det(double x) {
    if (x != x) return x;
    if (x < -708.0) return 0.0;
    if (x > 709.0) return __longlong_as_double(0x7ff0000000000000ll);
    const double log2e = __longlong_as_double(0x3ff71547652b82fell);
    const double ln2_hi = __longlong_as_double(0x3fe62e42fee00000ll);
    const double ln2_lo = __longlong_as_double(0x3dea39ef35793c76ll);
    const double n = floor(fma(x, log2e, 0.5));
    double r = fma(-n, ln2_hi, x);
    r = fma(-n, ln2_lo, r);
    double p = 1.0 / 6227020800.0;
    p = fma(p, r, 1.0 / 479001600.0);
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    return scalbn(p, (int)n);
}

// w[0] + w[1] + ... + w[n-1], added in that order as the host adds: the
// loads unrolled ahead of the adds that wait on them.
__device__ __forceinline__ double memra_draw_sum(const double* w, int n) {
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < MEMRA_TOPK_MAX; i++) {
        if (i < n) s += w[i];
    }
    return s;
}

// out: [1] int32, the token (MEMRA_NO_TOKEN when every logit is NaN, where
// the host's Sample fails); ctr: null or one memra_counters, which then gets
// token = out[0] (0 for MEMRA_NO_TOKEN) and pos, t_kv, step + 1
// (argmax_final's end of a device-counter step); top: [MEMRA_TOPK_MAX] f32
// values then [MEMRA_TOPK_MAX] int32 ids, best first (topk_select's last
// pass); p: one memra_draw, whose index is advanced; trace: null, or
// [2 + MEMRA_TOPK_MAX] f64 that gets the random number, the candidates kept
// and their final probabilities (what the host's Filter returns), for the
// tests to compare bit for bit; ring: as argmax_final's.
extern "C" __global__ void __launch_bounds__(MEMRA_DRAW_THREADS)
sample_draw(int* out, int* ring, int* ctr, const float* top, memra_draw* p, double* trace) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ double w[MEMRA_TOPK_MAX];
    __shared__ double sum;
    __shared__ int n;
    const int* ids = reinterpret_cast<const int*>(top + MEMRA_TOPK_MAX);
    const int lane = threadIdx.x;
    // The candidates: the top k up to the first NaN (topk_select sorts NaNs
    // after every number, and the host drops them). None: every logit is
    // NaN. The warp looks at 32 at a time; the ballot is the same in every lane.
    int k = min(max(p->k, 1), MEMRA_TOPK_MAX);
    for (int base = 0; base < k; base += MEMRA_DRAW_THREADS) {
        const unsigned nan = __ballot_sync(MEMRA_FULL_MASK, base + lane < k && isnan(top[base + lane]));
        if (nan) {
            k = base + __ffs(nan) - 1;
            break;
        }
    }
    if (k == 0) {
        if (lane == 0) memra_end_step(out, ring, ctr, MEMRA_NO_TOKEN);
        return;
    }
    // Softmax weights at the temperature, the best logit subtracted. The
    // best's own weight (and its ties') is 1 without the subtraction, which
    // would be inf - inf = NaN for an infinite logit: a +inf one then takes
    // all the probability, and logits all -inf are equal. For finite ones
    // that is exp(0), bit for bit (the host's candidates does the same).
    const double T = (double)p->temperature, max_l = (double)top[0];
    for (int i = lane; i < k; i += MEMRA_DRAW_THREADS)
        w[i] = top[i] == top[0] ? 1.0 : memra_exp_det(((double)top[i] - max_l) / T);
    __syncwarp();
    if (lane == 0) sum = memra_draw_sum(w, k);
    __syncwarp();
    for (int i = lane; i < k; i += MEMRA_DRAW_THREADS) w[i] /= sum; // each divides its own: the host's quotients
    __syncwarp();
    if (lane == 0) {
        int m = k;
        const float top_p = p->top_p, min_p = p->min_p;
        if (top_p > 0.0f && top_p < 1.0f) {
            double cum = 0.0;
            for (int i = 0; i < m; i++) {
                cum += w[i];
                if (cum >= (double)top_p) {
                    m = i + 1;
                    break;
                }
            }
        }
        if (min_p > 0.0f) {
            const double thr = (double)min_p * w[0];
            int c = 1;
            while (c < m && w[c] >= thr) c++;
            m = c;
        }
        n = m;
        sum = memra_draw_sum(w, m);
    }
    __syncwarp();
    const int m = n;
    for (int i = lane; i < m; i += MEMRA_DRAW_THREADS) w[i] /= sum;
    __syncwarp();
    if (lane != 0) return;
    const double u = memra_uniform(p->seed, p->index);
    p->index += 1;
    if (trace) {
        trace[0] = u;
        trace[1] = (double)m;
        for (int i = 0; i < m; i++) trace[2 + i] = w[i];
    }
    int tok = ids[m - 1]; // the host's answer when no cumulative sum exceeds u, and when m is 1
    if (m > 1) {
        double cum = 0.0;
        for (int i = 0; i < m; i++) {
            cum += w[i];
            if (u < cum) {
                tok = ids[i];
                break;
            }
        }
    }
    memra_end_step(out, ring, ctr, tok);
}
