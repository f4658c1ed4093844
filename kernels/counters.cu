// counters.cu: the device counters of the device-counter decode path.
//
// Why it looks like this: inside a captured decode step no host value may
// change between replays, so the token, position and attention length live
// in device memory (struct memra_counters in common.cuh: {token, pos, t_kv,
// step}, int32 at byte offsets 0, 4, 8, 12) and are advanced on the device
// at the end of each step. Kernels read them through their
// `v, const int* dv` parameter pairs. During a step t_kv = pos + 1 (the keys
// include the token being decoded). argmax_final (argmax.cu) ends each
// device-counter step: it writes the token and moves pos, t_kv and step by
// one. counters_set starts the counters (prime).
#include "common.cuh"

// ctr: one memra_counters (16 bytes)
extern "C" __global__ void __launch_bounds__(MEMRA_CTR_THREADS)
counters_set(int* ctr, int token, int pos, int t_kv) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    memra_counters* c = reinterpret_cast<memra_counters*>(ctr);
    c->token = token;
    c->pos = pos;
    c->t_kv = t_kv;
    c->step = 0;
}
