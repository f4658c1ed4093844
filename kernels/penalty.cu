// penalty.cu: the repetition penalty, applied to the step's logits on the
// device.
//
// Why it looks like this: with the penalty on the host, a step's whole
// logits come back (1 MB) and the host picks the token before the next step
// can be queued. On the device it keeps greedy and top-k sampling in their
// graphs. The host's rule (engine/sample Penalize): every distinct token
// among the last `window` of the history has its logit divided by the
// penalty when positive, else multiplied, once. The history lives in a ring
// here; each step appends its own input token (the counters' token: the one
// the previous step picked, or the prompt's last) before the logits are
// penalised, so the window is the host's, prompt and generated tokens alike.
// "Once" is a stamp per vocabulary entry: the thread that swaps in this
// step's stamp first applies the penalty, the others see the stamp and
// skip, so duplicates in the window change nothing whatever the order, and
// every logit gets the host's one float32 operation.
#include "common.cuh"

// The penalty's state, in device memory (engine/gpu writes it at the start
// of generation): penalty, window (1..MEMRA_PENALTY_MAX_WINDOW), the tokens
// appended so far, this kernel's last stamp, then the ring of the last
// window tokens (token j of the history at ring[j % window]). Byte offsets
// in kernels.Penalty*.
struct memra_penalty {
    float penalty;
    int window;
    long long n;
    int stamp;
    int pad;
    int ring[MEMRA_PENALTY_MAX_WINDOW];
};
static_assert(sizeof(memra_penalty) == 24 + 4 * MEMRA_PENALTY_MAX_WINDOW, "memra_penalty layout (kernels.Penalty*)");

// logits: [n_vocab] f32, penalised in place; ctr: the device counters (their
// token is appended to the history first); p: one memra_penalty; seen:
// [n_vocab] int32 stamps, zero before the first step of a generation.
extern "C" __global__ void __launch_bounds__(MEMRA_PENALTY_THREADS)
repeat_penalty(float* logits, const int* ctr, memra_penalty* p, int* seen, int n_vocab) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    __shared__ long long n;
    __shared__ int stamp;
    const int w = min(max(p->window, 1), MEMRA_PENALTY_MAX_WINDOW);
    if (threadIdx.x == 0) {
        const long long j = p->n;
        p->ring[j % w] = reinterpret_cast<const memra_counters*>(ctr)->token;
        p->n = j + 1;
        n = j + 1;
        stamp = p->stamp + 1;
        p->stamp = stamp;
    }
    __syncthreads();
    const float pen = p->penalty;
    const int count = (int)min(n, (long long)w);
    for (int e = threadIdx.x; e < count; e += MEMRA_PENALTY_THREADS) {
        const int tok = p->ring[e];
        if (tok < 0 || tok >= n_vocab || atomicExch(&seen[tok], stamp) == stamp) continue;
        const float l = logits[tok];
        logits[tok] = l > 0.0f ? l / pen : l * pen;
    }
}
