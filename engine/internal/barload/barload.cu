// barload.cu: what a grid barrier costs while other blocks on the same SMs
// stream memory (docs/perf.md step 82, an experiment record; the engine does
// not load it).
// Build: nvcc -O3 -arch=sm_90 -cubin -o barload.cubin barload.cu
//
// Why it is shaped this way: a persistent decode kernel gains over graph
// nodes only if its grid barriers overlap the weight stream (steps 25, 27,
// 69): the next phase's weights load while the barrier that releases its
// input completes. pstream's ring alone cost the barrier plus the bytes, one
// after the other (step 27). Either its design serialised them or a barrier
// itself slows while HBM streams. Here the two are separate: every SM holds
// one barrier block and one streamer block (1,024 threads each, so exactly
// two fit an SM and a grid of 2 x SMs puts one of each on every SM), the
// barrier blocks run nbar grid barriers among themselves, as pchain's
// (one red.release per block, thread 0 spinning on an acquire load), and the
// streamers read buf until the last barrier raises the stop flag. With
// stream = 0 the streamers leave at once: the barrier alone. Only the first
// `active` threads of a streamer block read (the rest leave), so the bytes in
// flight, and with them the queues a barrier's loads wait in, can be set
// below what saturates HBM (run185: 1,024 threads, four 16-byte loads each in
// flight, 4.5 TB/s, took the barrier from 1.04 to 7 µs; 256, 3.2 TB/s, to
// 1.37). The active threads of all
// streamer blocks stride over the buffer together, so every depth reads all
// of it (run184's form strode by 1,024 a block, and its shallow rows read only
// active/1,024 of the buffer: from the L2, not HBM). The stop flag has a
// 128-byte line of its own: beside the barrier counter (run183, run184) its
// polls slowed the barrier several times over.
#include <cstdint>
#include "../xcmd/xsync.cuh"

#define BL_THREADS 1024
#define BL_LOADS 4 // a streamer thread's loads in flight per stop-flag check

// ctl words (main.go's ctl* constants).
#define BL_BAR 0     // barrier arrivals
#define BL_SEEN 2    // blocks seen per role: [2] barrier, [3] streamer
#define BL_LATE 4    // streamer blocks that started after the timed barriers had begun
#define BL_BADSM 5   // blocks whose %smid was not below the SM count
#define BL_STOP 32   // raised after the last barrier (its own 128-byte line)
#define BL_PER_SM 64 // blocks seen per SM, one word an SM

// ctl: the words above (BL_PER_SM + SMs); times[0..1]: globaltimer after the
// first barrier and after the last (ns); counts, xors: per streamer thread
// (streamer index * BL_THREADS + thread), its loads and the XOR of what they
// read, which the host recomputes. buf: nvec 16-byte words; active streamer
// thread s (streamer index * active + thread) reads s, s + S, s + 2S, ...
// (S = streamer blocks * active), wrapping at nvec.
extern "C" __global__ void __launch_bounds__(BL_THREADS, 2)
barload(unsigned* ctl, int nbar, int stream, const uint4* buf, unsigned long long nvec, unsigned long long* counts, uint4* xors,
        unsigned long long* times, int active, int sms) {
    __shared__ int role, idx;
    if (threadIdx.x == 0) {
        unsigned sm = xs_smid();
        if (sm >= (unsigned)sms) { // ids need not be dense: counted, and the host's per-SM check fails
            atomicAdd(&ctl[BL_BADSM], 1u);
            sm %= (unsigned)sms;
        }
        role = atomicAdd(&ctl[BL_PER_SM + sm], 1u) == 0 ? 0 : 1;
        idx = (int)atomicAdd(&ctl[BL_SEEN + role], 1u);
        if (role == 1 && xs_ld_acquire(&ctl[BL_BAR]) >= gridDim.x / 2) atomicAdd(&ctl[BL_LATE], 1u);
    }
    __syncthreads();
    const unsigned nb = gridDim.x / 2; // barrier blocks: one an SM
    if (role == 0) {
        // Barrier 0 lines the blocks up; the clock runs from it to barrier nbar.
        for (int i = 0; i <= nbar; i++) {
            if (threadIdx.x == 0) {
                xs_red_release(&ctl[BL_BAR]);
                const unsigned target = (unsigned)(i + 1) * nb;
                while (xs_ld_acquire(&ctl[BL_BAR]) < target) {
                }
                if (i == 0 && idx == 0) times[0] = xs_now();
            }
            __syncthreads();
        }
        if (threadIdx.x == 0 && idx == 0) {
            times[1] = xs_now();
            atomicExch(&ctl[BL_STOP], 1u);
        }
        return;
    }
    const unsigned long long slot = (unsigned long long)idx * BL_THREADS + threadIdx.x; // counts, xors
    if ((int)threadIdx.x >= active) { // idle: counts 0, XOR 0
        counts[slot] = 0;
        xors[slot] = make_uint4(0, 0, 0, 0);
        return;
    }
    const unsigned long long self = (unsigned long long)idx * active + threadIdx.x;
    const unsigned long long S = (unsigned long long)nb * active;
    unsigned long long n = 0, i = self % nvec;
    uint4 x = make_uint4(0, 0, 0, 0);
    while (stream) {
        uint4 v[BL_LOADS];
        const unsigned stop = *reinterpret_cast<volatile const unsigned*>(&ctl[BL_STOP]);
#pragma unroll
        for (int k = 0; k < BL_LOADS; k++) {
            v[k] = __ldcg(buf + i); // L2, not L1: every load is a memory request
            i += S;
            if (i >= nvec) i -= nvec;
        }
#pragma unroll
        for (int k = 0; k < BL_LOADS; k++) {
            x.x ^= v[k].x;
            x.y ^= v[k].y;
            x.z ^= v[k].z;
            x.w ^= v[k].w;
        }
        n += BL_LOADS;
        if (stop) break;
    }
    counts[slot] = n;
    xors[slot] = x;
}
