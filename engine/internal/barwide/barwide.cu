// barwide.cu: what a grid barrier costs against the blocks that arrive at it,
// in four forms (docs/perf.md step 84, an experiment record; the engine
// does not load it).
// Build: nvcc -O3 -arch=sm_90 -cubin -o barwide.cubin barwide.cu
//
// Why it is shaped this way: step 83's barrier between the FFN's two
// products cost 1.7-3.1 µs a layer inside a graph, against 1.04 µs for
// barload's (step 82), which had one arriving block an SM where the engine's
// launch had 224-396. Here nothing but the barrier runs, so its cost can be
// read against the arrivals alone: a grid of k blocks an SM (k = 1..4, all
// resident) runs nbar barriers in one of four forms.
//   kind 0, flat: each block adds one to a counter (red.release) and polls
//           it (ld.acquire) until it reaches (i + 1) x blocks, as barload's.
//   kind 1, generation: the form of branch next/ffn-fused's memra_grid_barrier
//           (common.cuh): atomicAdd returns the arrival order, the last
//           arrival zeroes the count and advances a generation that the
//           others poll; here the count and the generation lie on lines of
//           their own.
//   kind 3, generation on one line: the same with the count and the
//           generation in adjacent words of one line, as that branch has
//           them, so the polls and the arrivals meet on one line.
//   kind 2, two-level: blocks arrive on the counter of their group of g
//           consecutive blocks (each counter on its own 128-byte line); the
//           last of a group adds one to the top counter, which every block
//           polls, so the top counter takes blocks / g arrivals.
// Block 0's thread 0 reads %globaltimer after barrier 0 and after barrier
// nbar. A poll that outlasts 2 s traps: a grid that is not resident fails
// instead of hanging. Each block counts itself on its SM (persm), so the host
// can check that every SM held k blocks. With verify set (an untimed trial)
// each block writes i + 1 to its epoch word before arriving at barrier i and,
// once through, reads its neighbour's: less than i + 1 means the barrier let
// it through before the neighbour arrived, counted in bad.
#include <cstdint>
#include "../xcmd/xsync.cuh"

#define BW_THREADS 256

// ctl words (main.go's ctl* constants): every counter on its own 128-byte
// line (32 words).
#define BW_LINE 32
#define BW_TOP 0     // kinds 0 and 2: the counter every block polls
#define BW_COUNT 32  // kind 1: arrivals
#define BW_GEN 64    // kind 1: generation
#define BW_SAME 96   // kind 3: arrivals, and the generation in the next word
#define BW_GROUP 128 // kind 2: group j's counter at BW_GROUP + j * BW_LINE

// Poll p until it reaches target; trap after 2 s.
__device__ __forceinline__ void bw_wait_at_least(const unsigned* p, unsigned target) {
    const unsigned long long t0 = xs_now();
    while (xs_ld_acquire(p) < target) {
        if (xs_now() - t0 > 2000000000ull) __trap();
    }
}

// ctl: the words above, zeroed before the launch; times[0..1]: globaltimer
// after barrier 0 and after barrier nbar (ns); persm: [sms] blocks seen per
// SM; epoch: [blocks], bad: [1], read and written only with verify; all
// zeroed before the launch.
extern "C" __global__ void __launch_bounds__(BW_THREADS)
barwide(unsigned* ctl, int nbar, int kind, int group, unsigned long long* times, unsigned* persm, int sms, int verify,
        unsigned* epoch, unsigned* bad) {
    if (threadIdx.x == 0) atomicAdd(&persm[xs_smid() % (unsigned)sms], 1u);
    const unsigned nb = gridDim.x;
    const unsigned ng = (nb + group - 1) / group;                 // kind 2: groups
    const unsigned g = blockIdx.x / group;                         // kind 2: this block's group
    const unsigned gsize = min((unsigned)group, nb - g * group);   // its blocks (the last group may be short)
    for (int i = 0; i <= nbar; i++) {
        __syncthreads();
        if (threadIdx.x == 0) {
            if (verify) *reinterpret_cast<volatile unsigned*>(&epoch[blockIdx.x]) = (unsigned)(i + 1);
            if (kind == 0) {
                xs_red_release(&ctl[BW_TOP]);
                bw_wait_at_least(&ctl[BW_TOP], (unsigned)(i + 1) * nb);
            } else if (kind == 1 || kind == 3) {
                unsigned* count = kind == 1 ? &ctl[BW_COUNT] : &ctl[BW_SAME];
                unsigned* gp = kind == 1 ? &ctl[BW_GEN] : &ctl[BW_SAME + 1];
                const unsigned gen = xs_ld_acquire(gp);
                __threadfence();
                if (atomicAdd(count, 1u) == nb - 1) {
                    atomicExch(count, 0u);
                    __threadfence();
                    atomicAdd(gp, 1u);
                } else {
                    bw_wait_at_least(gp, gen + 1);
                }
            } else {
                __threadfence();
                if (atomicAdd(&ctl[BW_GROUP + g * BW_LINE], 1u) == (unsigned)(i + 1) * gsize - 1) {
                    __threadfence();
                    xs_red_release(&ctl[BW_TOP]);
                }
                bw_wait_at_least(&ctl[BW_TOP], (unsigned)(i + 1) * ng);
            }
            if (verify && *reinterpret_cast<volatile unsigned*>(&epoch[(blockIdx.x + 1) % nb]) < (unsigned)(i + 1)) atomicAdd(bad, 1u);
            if (blockIdx.x == 0 && i == 0) times[0] = xs_now();
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) times[1] = xs_now();
}
