// flagchain.cu: what a node's hand-off costs in a graph when a kernel waits on
// a counter that its predecessor's blocks raise, against griddepcontrol.wait,
// with and without a weight stream loaded before the wait (docs/perf.md step
// 69, an experiment record; the engine does not load it).
// Build: nvcc -O3 -arch=sm_90 -cubin -o flagchain.cubin flagchain.cu
//
// Why it is shaped this way: step 67 says the 0.8B goals need ~1.2 µs a node
// beside the bytes, and step 22 put an empty node at 1.27. griddepcontrol.wait
// returns once the whole previous grid has exited and its writes are flushed;
// a kernel that instead polls a counter (each producer block releases it after
// its stores, the consumer acquires it) may start as soon as the last
// producer block's stores are visible. Each node here is an all-to-all step
// like a matvec's: every block reads all of x and writes its slice of y,
// y[j] = 3·x[j] + Σx + Σw_b over uint32 (wrapping, so exact in any order and
// the host checks every word), where w_b is the block's slice of the node's
// weights: wper 16-byte loads a thread, all issued before the wait, as a
// matvec's first loads are. Buffers ping-pong, so a node overwrites what its
// predecessor read: the hand-off must order that too.
#include <cstdint>
#include "../xcmd/xsync.cuh"

#define FC_THREADS 256
#define FC_MAX_WPER 8

// fc_node modes (main.go's mode constants).
#define FC_PDL 0    // griddepcontrol.wait, as the engine's kernels do
#define FC_FLAG 1   // poll cnt_in until it reaches need, post cnt_out
#define FC_NOWAIT 2 // neither: the negative control the check must catch

// Where a node lets its successor launch (griddepcontrol.launch_dependents;
// main.go's trigger constants): at its start (every later node may then be
// resident at once, loading its weights), after its wait, or after its
// stores (the engine's matvecs trigger after their weight stream).
#define FC_TRIG_START 0
#define FC_TRIG_WAITED 1
#define FC_TRIG_END 2

__device__ __forceinline__ void fc_trigger() { asm volatile("griddepcontrol.launch_dependents;" :::); }

// fc_block_sum returns the block's sum of v (every thread gets it).
__device__ __forceinline__ uint32_t fc_block_sum(uint32_t v, uint32_t* part) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    __syncthreads(); // part may still be read from the previous call
    if ((threadIdx.x & 31) == 0) {
        part[threadIdx.x >> 5] = v;
    }
    __syncthreads();
    v = 0;
    for (int w = 0; w < FC_THREADS / 32; w++) {
        v += part[w];
    }
    return v;
}

// fc_node: one node of the chain. x has n words (n % FC_THREADS == 0); block
// b writes y's slice [b·per, (b+1)·per), per = ceil(n / gridDim.x) (the last
// blocks may write nothing). w holds the node's weights, block
// b's slice at w + b·wper·FC_THREADS, read as load k of thread t at
// [k·FC_THREADS + t] (coalesced). In FC_FLAG mode cnt_in (null for the first
// node) must reach need (the predecessor's block count) before anything of x
// is read or y written, and cnt_out (null for the last node) gets one
// increment per block after its stores; sleep_ns spaces the polls.
extern "C" __global__ void __launch_bounds__(FC_THREADS, 4)
fc_node(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int n, const uint4* __restrict__ w, int wper,
        const unsigned* cnt_in, unsigned need, unsigned* cnt_out, int mode, int sleep_ns, int trig) {
    if (trig == FC_TRIG_START) {
        fc_trigger();
    }
    // The weights: never written, so loaded before the wait.
    uint4 wv[FC_MAX_WPER];
    const uint4* wb = w + static_cast<size_t>(blockIdx.x) * wper * FC_THREADS + threadIdx.x;
#pragma unroll
    for (int k = 0; k < FC_MAX_WPER; k++) {
        if (k < wper) {
            wv[k] = __ldg(wb + k * FC_THREADS);
        }
    }
    if (mode == FC_PDL) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
    } else if (mode == FC_FLAG && cnt_in != nullptr) {
        if (threadIdx.x == 0) {
            while (xs_ld_acquire(cnt_in) < need) {
                if (sleep_ns > 0) {
                    __nanosleep(sleep_ns);
                }
            }
        }
        __syncthreads();
    }
    if (trig == FC_TRIG_WAITED) {
        fc_trigger();
    }
    // x through L2 (.cg) in every mode, for safety: in FC_FLAG mode the
    // acquire (which invalidates L1) and bar.sync already order these loads
    // after the producer's stores.
    uint32_t s = 0;
    for (int i = threadIdx.x; i < n; i += FC_THREADS) {
        s += __ldcg(x + i);
    }
    uint32_t ws = 0;
#pragma unroll
    for (int k = 0; k < FC_MAX_WPER; k++) {
        if (k < wper) {
            ws += wv[k].x + wv[k].y + wv[k].z + wv[k].w;
        }
    }
    __shared__ uint32_t part[FC_THREADS / 32];
    s = fc_block_sum(s, part) + fc_block_sum(ws, part);
    const int per = (n + gridDim.x - 1) / gridDim.x;
    const int lo = blockIdx.x * per, hi = min(n, lo + per);
    for (int j = lo + threadIdx.x; j < hi; j += FC_THREADS) {
        y[j] = 3u * __ldcg(x + j) + s;
    }
    if (mode == FC_FLAG && cnt_out != nullptr) {
        __syncthreads(); // every thread's stores before thread 0's release
        if (threadIdx.x == 0) {
            __threadfence();
            atomicAdd(cnt_out, 1u);
        }
    }
    if (trig == FC_TRIG_END) {
        fc_trigger();
    }
}
