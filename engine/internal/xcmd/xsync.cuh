// xsync.cuh: the memory-order and clock primitives the experiment kernels
// (barload.cu, barwide.cu, flagchain.cu) share: a counter read with acquire
// order, an add with release order, the global nanosecond timer and the SM
// id. Each is one PTX instruction (PTX 7.8, sm_70 and later).
#ifndef XSYNC_CUH
#define XSYNC_CUH

__device__ __forceinline__ unsigned xs_ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void xs_red_release(unsigned* p) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

__device__ __forceinline__ unsigned long long xs_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned xs_smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

#endif // XSYNC_CUH
