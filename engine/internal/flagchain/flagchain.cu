// flagchain.cu: what a node's hand-off costs in a graph when a kernel waits on
// a counter that its predecessor's blocks raise, against griddepcontrol.wait
// (docs/perf.md step 69, an experiment record; the engine does not load it).
// Build: nvcc -O3 -arch=sm_90 -cubin -o flagchain.cubin flagchain.cu
//
// Why it is shaped this way: step 67 says the 0.8B goals need ~1.2 µs a node
// beside the bytes, and step 22 put an empty node at 1.27. griddepcontrol.wait
// returns once the whole previous grid has exited and its writes are flushed;
// a kernel that instead polls a counter (each producer block releases it after
// its stores, the consumer acquires it) may start as soon as the last
// producer block's stores are visible. Each node here is an all-to-all step
// like a matvec's: every block reads all of x and writes its slice of y,
// y[j] = 3·x[j] + Σx over uint32 (wrapping, so exact in any order and the
// host checks every word). Buffers ping-pong, so a node overwrites what its
// predecessor read: the hand-off must order that too.
#include <cstdint>

#define FC_THREADS 256

// fc_node modes (main.go's mode constants).
#define FC_PDL 0    // griddepcontrol.wait, as the engine's kernels do
#define FC_FLAG 1   // poll cnt_in until it reaches need, post cnt_out
#define FC_NOWAIT 2 // neither: the negative control the check must catch

// fc_node's opts bits for FC_FLAG (main.go's opt constants).
#define FC_LATE 1    // launch dependents after the wait, not at the start
#define FC_RELEASE 2 // post with red.release.gpu instead of fence + atomicAdd

__device__ __forceinline__ unsigned fc_load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// fc_node: one node of the chain. x has n words (n % FC_THREADS == 0), the
// grid's blocks split y's n words evenly. In FC_FLAG mode cnt_in (null for
// the first node) must reach need (the predecessor's block count) before
// anything of x is read or y written, and cnt_out (null for the last node)
// gets one increment per block after its stores; sleep_ns spaces the polls.
// A node lets its successor launch at its start (every kernel of the chain
// could then be resident at once, polling), or with FC_LATE once its own
// wait is over (at most two nodes deep).
extern "C" __global__ void __launch_bounds__(FC_THREADS)
fc_node(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int n,
        const unsigned* cnt_in, unsigned need, unsigned* cnt_out, int mode, int sleep_ns, int opts) {
    const bool late = mode == FC_FLAG && (opts & FC_LATE);
    if (!late) {
        asm volatile("griddepcontrol.launch_dependents;" :::);
    }
    if (mode == FC_PDL) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
    } else if (mode == FC_FLAG && cnt_in != nullptr) {
        if (threadIdx.x == 0) {
            while (fc_load_acquire(cnt_in) < need) {
                if (sleep_ns > 0) {
                    __nanosleep(sleep_ns);
                }
            }
        }
        __syncthreads();
    }
    if (late) {
        asm volatile("griddepcontrol.launch_dependents;" :::);
    }
    // x through L2 (.cg): in FC_FLAG mode an earlier node's L1 lines are not
    // invalidated by a kernel boundary the wait stood for.
    uint32_t s = 0;
    for (int i = threadIdx.x; i < n; i += FC_THREADS) {
        s += __ldcg(x + i);
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
    }
    __shared__ uint32_t part[FC_THREADS / 32];
    if ((threadIdx.x & 31) == 0) {
        part[threadIdx.x >> 5] = s;
    }
    __syncthreads();
    s = 0;
    for (int w = 0; w < FC_THREADS / 32; w++) {
        s += part[w];
    }
    const int per = (n + gridDim.x - 1) / gridDim.x;
    const int lo = blockIdx.x * per, hi = min(n, lo + per);
    for (int j = lo + threadIdx.x; j < hi; j += FC_THREADS) {
        y[j] = 3u * __ldcg(x + j) + s;
    }
    if (mode == FC_FLAG && cnt_out != nullptr) {
        __syncthreads(); // every thread's stores before thread 0's release
        if (threadIdx.x == 0) {
            if (opts & FC_RELEASE) {
                asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(cnt_out) : "memory");
            } else {
                __threadfence();
                atomicAdd(cnt_out, 1u);
            }
        }
    }
}
