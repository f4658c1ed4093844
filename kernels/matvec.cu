// matvec.cu: y[rows] (+)= W x for the weight types of a decode step.
//
// Why it looks like this: at n_tokens = 1 every projection is a matrix-vector
// product whose cost is streaming W from memory once. A warp owns R rows and
// streams them with 16-byte loads (4 f32, 8 f16/bf16 or 16 q8_0 quants per
// load), U loads per row in flight, each x chunk read once for all R rows;
// KW warps split a row group's columns between them. R, KW and U were picked
// per type and shape family on the H200 from a side-by-side run of 25
// variants (docs/perf.md steps 6 and 14): wide kernels (more warps per row:
// KW = 8 for f16/bf16, 4 for q8_0) for matrices of few rows, where
// K-splitting is the only way to fill the GPU.
//
// The reduction order is fixed: a lane adds its chunks in ascending order, a
// xor butterfly sums the warp, and the KW warp partials of a row are added in
// warp order, so the same geometry always gives the same bits.
//
// mode: 0 stores y = W x', 1 adds into y (the residual adds x += W_o a and
// x += W_down h, saving a kernel), 2 is the SwiGLU epilogue: rows come in
// (gate, up) pairs (the FFN gate and up matrices are uploaded row-interleaved)
// and y[i] = silu(W_2i x') * (W_2i+1 x'), saving the swiglu kernel. y must not
// alias x.
//
// Layout: f32/f16/bf16 are ggml's, row-major, row r = output r. q8_0 is
// repacked at upload (engine/gpu upload.go): W holds the int8 quants [rows][cols]
// and S the f16 block scales [rows][cols/32], so every quant row is 16-byte
// aligned and streams like the 16-bit types (ggml's 34-byte blocks are not).
// matvec_q8_0_wide reads its scales in lane order (LS, below), which the
// upload writes for the matrices that kernel runs.
// The K-quants have their own kernels on the tensor cores (matvec_q4k.cu,
// matvec_q6k.cu); memra_mv still streams ggml's blocks as kquant.cuh
// describes (16-byte items of 32 values; Q6_K split like q8_0, its f16 d in
// S) for the CUDA-core baselines of engine/internal/mvexp.
// 16-byte loads need cols a multiple of the values per load (K-quants: of
// 256) and W, x 16-byte aligned; otherwise rows are read element by element
// (any shape, slower).
#include "common.cuh"
#include "kquant.cuh"

// With xnorm != 0 the block first normalises its input: xs = x / sqrt(mean(x^2)
// + eps) * norm_w, staged in dynamic shared memory (cols floats), and the
// rows read xs instead of x. This fuses the RMSNorm that precedes every
// projection into the projection: one launch and one pass fewer per norm.
// Every block computes the same sum in the same order (thread-strided
// partials, xor butterfly, warps in index order), so all blocks, and the
// eager and graph paths, see identical xs. The two passes lie on the step's
// critical path (after the wait), so with x and norm_w 16-byte aligned and
// cols % 4 == 0 they read float4s: 4 times fewer loads, each pass's loads in
// flight at once rather than in round trips of a few (perf.md step 37).
// xs is where the block's copy goes: memra_xs here; matvec_batch.cu's
// staged kernels put their rings and a copy per token there.
extern __shared__ __align__(16) float memra_xs[];

// The norm's three pieces of arithmetic: a thread's partial sum of
// squares, the inverse from the warps' partials (in warp order), and an
// element's scaling.
__device__ __forceinline__ float memra_mv_sq(float ss, float4 v) {
    return ss + (v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w);
}

__device__ __forceinline__ float memra_mv_inv(const float* red, int cols, float eps) {
    float tot = 0.0f;
#pragma unroll
    for (int w = 0; w < MEMRA_MV_THREADS / 32; w++) tot += red[w];
    return 1.0f / sqrtf(tot / (float)cols + eps);
}

__device__ __forceinline__ float4 memra_mv_scale(float4 v, float inv, float4 w) {
    return make_float4(v.x * inv * w.x, v.y * inv * w.y, v.z * inv * w.z, v.w * inv * w.w);
}

__device__ __forceinline__ void memra_mv_input(float* xs, const float* x, const float* norm_w, int cols, float eps) {
    __shared__ float red[MEMRA_MV_THREADS / 32];
    const bool vec = (cols & 3) == 0 && memra_aligned16(x) && memra_aligned16(norm_w);
    const int n = vec ? cols / 4 : cols;
    float ss = 0.0f;
#pragma unroll 4
    for (int i = threadIdx.x; i < n; i += MEMRA_MV_THREADS) {
        if (vec) {
            ss = memra_mv_sq(ss, reinterpret_cast<const float4*>(x)[i]);
        } else {
            const float v = x[i];
            ss += v * v;
        }
    }
    ss = memra_warp_sum(ss);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
    __syncthreads();
    const float inv = memra_mv_inv(red, cols, eps);
#pragma unroll 2
    for (int i = threadIdx.x; i < n; i += MEMRA_MV_THREADS) {
        if (vec) {
            reinterpret_cast<float4*>(xs)[i] =
                memra_mv_scale(reinterpret_cast<const float4*>(x)[i], inv, reinterpret_cast<const float4*>(norm_w)[i]);
        } else {
            xs[i] = x[i] * inv * norm_w[i];
        }
    }
    __syncthreads();
}

// Weight kinds. V: values per 16-byte load (K-quants: per item, kquant.cuh).
enum { MEMRA_MV_F32 = 0, MEMRA_MV_F16 = 1, MEMRA_MV_BF16 = 2, MEMRA_MV_Q8 = 3, MEMRA_MV_Q4K = 4, MEMRA_MV_Q6K = 5 };

template <int KIND>
struct memra_mv_kind {
    static constexpr bool K = KIND >= MEMRA_MV_Q4K;
    static constexpr int KQ = KIND - MEMRA_MV_Q4K; // kquant.cuh's type, when K
    static constexpr int V = KIND == MEMRA_MV_F32 ? 4 : KIND == MEMRA_MV_Q8 ? 16 : K ? 32 : 8;
};

// Bytes of one row of cols values (K-quants: whole superblocks).
template <int KIND>
__device__ __forceinline__ long long memra_mv_row_bytes(int cols) {
    if (memra_mv_kind<KIND>::K) return (long long)(cols >> 8) * memra_kq<memra_mv_kind<KIND>::KQ>::BB;
    return (long long)cols * (KIND == MEMRA_MV_F32 ? 4 : KIND == MEMRA_MV_Q8 ? 1 : 2);
}

// Byte offset in a row of its 16-byte load v (K-quants: item v's codes).
template <int KIND>
__device__ __forceinline__ int memra_mv_load_off(int v) {
    if (memra_mv_kind<KIND>::K) return (v >> 3) * memra_kq<memra_mv_kind<KIND>::KQ>::BB + memra_kq_code_off<memra_mv_kind<KIND>::KQ>(v & 7);
    return 16 * v;
}

// Where a row's side array S starts: q8_0's f16 scale per 32, Q6_K's f16 d
// per 256; nullptr for the others.
template <int KIND>
__device__ __forceinline__ const unsigned short* memra_mv_srow(const unsigned short* S, long long r, int cols) {
    if (KIND == MEMRA_MV_Q8) return S + r * (cols >> 5);
    if (KIND == MEMRA_MV_Q6K) return S + r * (cols >> 8);
    return nullptr;
}

// q8_0 scales in lane order (LS: matvec_q8_0_wide). In that kernel lane pair
// j (lanes 2j and 2j + 1 of the KW*32 = 128 that split a row) reads the
// chunks of blocks j, j + 64, j + 128, ...: trip t's scale is block
// j + 64t's. The upload (engine/gpu upload.go) stores a row's scales so
// that pair j's lie side by side, block b at (b % 64) * Tp + b / 64, Tp =
// the trips T = ceil(nb / 64) rounded up to even (1 when T is 1, where the
// order is the plain one), so a trip of two chunks takes both its scales in
// one 4-byte load, half the plain layout's loads (docs/perf.md step 56).
// Rows are 64 * Tp f16s apart (nb when T is 1); the padding is zero.
struct memra_q8_lanes {
    int tp, stride;
};

__device__ __forceinline__ memra_q8_lanes memra_q8_lane_layout(int cols) {
    const int nb = cols >> 5, trips = (nb + MEMRA_Q8_LANE_PAIRS - 1) / MEMRA_Q8_LANE_PAIRS;
    memra_q8_lanes l;
    l.tp = trips == 1 ? 1 : (trips + 1) & ~1;
    l.stride = trips == 1 ? nb : MEMRA_Q8_LANE_PAIRS * l.tp;
    return l;
}

__device__ __forceinline__ int memra_q8_lane_index(int b, int tp) {
    return (b % MEMRA_Q8_LANE_PAIRS) * tp + b / MEMRA_Q8_LANE_PAIRS;
}

// Element c of a row, as f32 (the scalar path); tp is the row's lane
// layout when LS.
template <int KIND, bool LS = false>
__device__ __forceinline__ float memra_mv_elem(const void* row, const unsigned short* srow, int c, int tp = 1) {
    if (KIND == MEMRA_MV_F32) return reinterpret_cast<const float*>(row)[c];
    if (KIND == MEMRA_MV_F16) return memra_f16_to_f32(reinterpret_cast<const unsigned short*>(row)[c]);
    if (KIND == MEMRA_MV_BF16) return memra_bf16_to_f32(reinterpret_cast<const unsigned short*>(row)[c]);
    if (memra_mv_kind<KIND>::K) {
        constexpr int KQ = memra_mv_kind<KIND>::KQ;
        return memra_kq_value<KQ>(reinterpret_cast<const unsigned char*>(row) + (long long)(c >> 8) * memra_kq<KQ>::BB,
                                  srow + (c >> 8), c & 255);
    }
    return memra_f16_to_f32(srow[LS ? memra_q8_lane_index(c >> 5, tp) : c >> 5]) * (float)reinterpret_cast<const signed char*>(row)[c];
}

// x chunk k at xp: from global memory through the read-only path (XG), or
// from the block's normalised copy in shared memory.
template <bool XG>
__device__ __forceinline__ float4 memra_mv_x(const float4* xp, int k) {
    return XG ? __ldg(xp + k) : xp[k];
}

// The dot of one 16-byte load w with its V inputs at xp (16-byte aligned),
// added to acc. q8_0: the 16 quants' sum, times the block scale d. The
// load's V/4 float4s of x lie ks float4s apart: 1 in ggml's layout, more
// in the batch kernels' permuted copies (memra_xs_slot).
template <int KIND, bool XG>
__device__ __forceinline__ float memra_mv_dot(uint4 w, const float4* xp, float d, float acc, int ks = 1) {
    const unsigned int u[4] = {w.x, w.y, w.z, w.w};
    if (KIND == MEMRA_MV_F32) {
        const float4 xv = memra_mv_x<XG>(xp, 0);
        acc += __uint_as_float(u[0]) * xv.x;
        acc += __uint_as_float(u[1]) * xv.y;
        acc += __uint_as_float(u[2]) * xv.z;
        acc += __uint_as_float(u[3]) * xv.w;
        return acc;
    }
    if (KIND == MEMRA_MV_Q8) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned int b = u[k] ^ 0x80808080u;
            const float4 xv = memra_mv_x<XG>(xp, k * ks);
            s += memra_q8_val(b, 0) * xv.x;
            s += memra_q8_val(b, 1) * xv.y;
            s += memra_q8_val(b, 2) * xv.z;
            s += memra_q8_val(b, 3) * xv.w;
        }
        return acc + d * s;
    } else { // an else, not a fall-through: for q8_0 nvcc would warn that the loop is not reachable
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const float lo = KIND == MEMRA_MV_BF16 ? __uint_as_float(u[k] << 16) : memra_f16_to_f32(memra_lo16(u[k]));
            const float hi = KIND == MEMRA_MV_BF16 ? __uint_as_float(u[k] & 0xffff0000u) : memra_f16_to_f32(memra_hi16(u[k]));
            const float4 xv = memra_mv_x<XG>(xp, (k >> 1) * ks);
            acc += lo * ((k & 1) ? xv.z : xv.x);
            acc += hi * ((k & 1) ? xv.w : xv.y);
        }
        return acc;
    }
}

// The K-quant inner loop of memra_mv_rows: items v0, v0 + step, ... of the
// R rows (nv items per row), U items per row loaded before any is used.
// Each item's two runs of x (16 columns each) and their sums are read once
// for all R rows; a run's Σ(a·q − m)·x is a·Σq·x − m·Σx.
template <int KQ, int R, int U, bool XG>
__device__ __forceinline__ void memra_mv_kq_rows(float acc[R], const unsigned char* const rowp[R],
                                                 const unsigned short* const srow[R], const float* x, int nv, int v0, int step) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (int v = v0; v < nv; v += step * U) {
        memra_kitem it[U][R];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int i = 0; i < R; i++)
                if (v + step * u < nv) it[u][i] = memra_kq_load<KQ>(rowp[i], srow[i], v + step * u);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int vu = v + step * u;
            if (vu >= nv) break;
            int xl, xh;
            memra_kq_pos<KQ>(vu, &xl, &xh);
            float4 xa[4], xb[4];
            float sa = 0.0f, sb = 0.0f;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                xa[k] = memra_mv_x<XG>(x4 + (xl >> 2), k);
                xb[k] = memra_mv_x<XG>(x4 + (xh >> 2), k);
                sa += xa[k].x + xa[k].y + xa[k].z + xa[k].w;
                sb += xb[k].x + xb[k].y + xb[k].z + xb[k].w;
            }
#pragma unroll
            for (int i = 0; i < R; i++) {
                float alo, mlo, ahi, mhi;
                unsigned int lo[4], hi[4];
                memra_kq_decode<KQ>(it[u][i], vu, &alo, &mlo, &ahi, &mhi, lo, hi);
                float qa = 0.0f, qb = 0.0f;
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    qa += memra_u8_val(lo[k], 0) * xa[k].x + memra_u8_val(lo[k], 1) * xa[k].y + memra_u8_val(lo[k], 2) * xa[k].z +
                          memra_u8_val(lo[k], 3) * xa[k].w;
                    qb += memra_u8_val(hi[k], 0) * xb[k].x + memra_u8_val(hi[k], 1) * xb[k].y + memra_u8_val(hi[k], 2) * xb[k].z +
                          memra_u8_val(hi[k], 3) * xb[k].w;
                }
                acc[i] += alo * qa - mlo * sa + (ahi * qb - mhi * sb);
            }
        }
    }
}

// Whether memra_mv_rows streams the rows with 16-byte loads (else element
// by element; memra_mv_rows spells the same test out, which keeps the
// kernels without HL instruction for instruction as step 22 timed them).
template <int KIND>
__device__ __forceinline__ bool memra_mv_vec(const void* W, const float* x, int cols) {
    return cols % (memra_mv_kind<KIND>::K ? 256 : memra_mv_kind<KIND>::V) == 0 && memra_aligned16(W) && memra_aligned16(x);
}

// The geometry shared by memra_mv and its row loop.
template <int KIND, int R, int KW>
struct memra_mv_geom {
    static constexpr int G = (MEMRA_MV_THREADS / 32) / KW;                          // row groups per unit
    static constexpr int V = memra_mv_kind<KIND>::V;                                 // values per 16-byte load
    static constexpr int EB = KIND == MEMRA_MV_F32 ? 4 : KIND == MEMRA_MV_Q8 ? 1 : 2; // bytes per weight
    static constexpr int step = KW * 32;
};

// A batch of a lane's first loads of a unit (memra_mv's HL): U 16-byte
// loads of each of its R rows, step loads apart, and for q8_0 each load's f16
// scale, kept raw so that nothing waits for a load before the batch is used.
template <int R, int U>
struct memra_mv_batch {
    uint4 w[U > 0 ? U : 1][R]; // U = 0: a batch never loaded
    unsigned short d[U > 0 ? U : 1][R];
};

// A load of the head batch. Weak (not ld.global.nc): ptxas (11.8) sinks
// read-only .nc loads past griddepcontrol.wait (ACQBULK) in straight-line
// code, which put every "before the wait" load of the HL kernels after it
// until step 70 (cuobjdump; TestSASSHeadLoadsBeforeWait), and keeps weak
// ones where they are. Weights are never written, so either reads the same;
// the next unit's head, loaded after the wait, takes the same weak loads.
template <typename T>
__device__ __forceinline__ T memra_mv_early(const T* p) {
    return *p;
}

// Issue batch b's loads v, v + step, ... of unit's rows for this thread's
// row group; those at or past nv are not issued (their slots hold zero).
template <int KIND, int R, int KW, int U>
__device__ __forceinline__ void memra_mv_head(memra_mv_batch<R, U>& b, const void* W, const unsigned short* S, int unit,
                                              int rows, int cols, int v, int nv) {
    using Geo = memra_mv_geom<KIND, R, KW>;
    const int r0 = (unit * Geo::G + (int)(threadIdx.x >> 5) / KW) * R;
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int i = 0; i < R; i++) {
            const long long rr = min(r0 + i, rows - 1);
            const int vu = v + Geo::step * u;
            const bool in = vu < nv;
            b.w[u][i] = in ? memra_mv_early(reinterpret_cast<const uint4*>(reinterpret_cast<const unsigned char*>(W) +
                                                                            rr * memra_mv_row_bytes<KIND>(cols)) + vu)
                           : make_uint4(0, 0, 0, 0);
            b.d[u][i] = KIND == MEMRA_MV_Q8 && in ? memra_mv_early(memra_mv_srow<KIND>(S, rr, cols) + (vu >> 1)) : (unsigned short)0;
        }
}

// The R rows of a unit from r0: where each row's weights and side array
// (q8_0 scales, in lane order with LS; Q6_K's d) start. Rows past the end
// re-read the last row and are never stored.
template <int KIND, int R, bool LS>
__device__ __forceinline__ void memra_mv_unit_rows(const unsigned char* rowp[R], const unsigned short* srow[R], const void* W,
                                                   const unsigned short* S, int r0, int rows, int cols, memra_q8_lanes ls) {
#pragma unroll
    for (int i = 0; i < R; i++) {
        const long long rr = min(r0 + i, rows - 1);
        rowp[i] = reinterpret_cast<const unsigned char*>(W) + rr * memra_mv_row_bytes<KIND>(cols);
        srow[i] = LS ? S + rr * ls.stride : memra_mv_srow<KIND>(S, rr, cols);
    }
}

// The row loop of memra_mv. XG: x is in global memory (read through the
// read-only path), else it is the block's normalised copy in shared memory;
// one function for both let the compiler use generic loads for x, and the
// two instantiations each get the load they need.
template <int KIND, int R, int KW, int U, bool TB, bool PF, int HL, bool XG, bool LS, memra_release REL>
__device__ __forceinline__ void memra_mv_rows(float* y, const void* W, const unsigned short* S, const float* x, int rows,
                                              int cols, int mode, memra_mv_batch<R, HL>& head) {
    using Geo = memra_mv_geom<KIND, R, KW>;
    constexpr int G = Geo::G, V = Geo::V, EB = Geo::EB, step = Geo::step;
    __shared__ float red[MEMRA_MV_THREADS / 32][R];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int units = (rows + G * R - 1) / (G * R);
    const bool vec = cols % (memra_mv_kind<KIND>::K ? 256 : V) == 0 && memra_aligned16(W) && memra_aligned16(x);
    static_assert(!LS || (KIND == MEMRA_MV_Q8 && KW * 16 == MEMRA_Q8_LANE_PAIRS && HL == 0), "lane-order scales are the wide q8_0 kernel's");
    const memra_q8_lanes ls = LS ? memra_q8_lane_layout(cols) : memra_q8_lanes{1, cols >> 5};
    const int pair = (kw * 32 + lane) >> 1; // LS: this lane's pair j
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const int r0 = (unit * G + g) * R;
        const unsigned char* rowp[R];
        const unsigned short* srow[R];
        memra_mv_unit_rows<KIND, R, LS>(rowp, srow, W, S, r0, rows, cols, ls);
        if (PF && !memra_mv_kind<KIND>::K) {
            const int next = unit + (int)gridDim.x;
            if (vec && next < units && kw * 32 + lane < cols / V) {
                const int n0 = (next * G + g) * R;
#pragma unroll
                for (int i = 0; i < R; i++)
                    memra_prefetch_l2(reinterpret_cast<const unsigned char*>(W) + (long long)min(n0 + i, rows - 1) * cols * EB +
                                      16 * (kw * 32 + lane));
            }
        }
        float acc[R];
#pragma unroll
        for (int i = 0; i < R; i++) acc[i] = 0.0f;
        if (vec && memra_mv_kind<KIND>::K) {
            memra_mv_kq_rows<memra_mv_kind<KIND>::KQ, R, U, XG>(acc, rowp, srow, x, cols >> 5, kw * 32 + lane, step);
        } else if (vec) {
            const int nv = cols / V;
            const float4* x4 = reinterpret_cast<const float4*>(x);
            constexpr int XF4 = V / 4; // float4s of x per load
            int v = kw * 32 + lane;
            if (HL) {
#pragma unroll
                for (int u = 0; u < HL; u++)
                    if (v + step * u < nv) {
#pragma unroll
                        for (int i = 0; i < R; i++)
                            acc[i] = memra_mv_dot<KIND, XG>(head.w[u][i], x4 + XF4 * (v + step * u),
                                                            KIND == MEMRA_MV_Q8 ? memra_f16_to_f32(head.d[u][i]) : 0.0f, acc[i]);
                    }
                v += step * HL;
            }
            static_assert(!LS || U == 2, "a lane-order scale word holds two trips");
            for (; v + step * (U - 1) < nv; v += step * U) {
                uint4 wv[U][R];
                float d[U][R];
                unsigned int dw[R]; // LS: trips t, t + 1's scales
#pragma unroll
                for (int i = 0; i < R; i++)
                    if (LS) dw[i] = __ldg(reinterpret_cast<const unsigned int*>(srow[i] + pair * ls.tp + (v - kw * 32 - lane) / step));
#pragma unroll
                for (int u = 0; u < U; u++)
#pragma unroll
                    for (int i = 0; i < R; i++) {
                        wv[u][i] = memra_ldg16(reinterpret_cast<const uint4*>(rowp[i]) + v + step * u);
                        if (LS)
                            d[u][i] = memra_f16_to_f32(u == 0 ? memra_lo16(dw[i]) : memra_hi16(dw[i]));
                        else
                            d[u][i] = KIND == MEMRA_MV_Q8 ? memra_f16_to_f32(__ldg(srow[i] + ((v + step * u) >> 1))) : 0.0f;
                    }
#pragma unroll
                for (int u = 0; u < U; u++)
#pragma unroll
                    for (int i = 0; i < R; i++) acc[i] = memra_mv_dot<KIND, XG>(wv[u][i], x4 + XF4 * (v + step * u), d[u][i], acc[i]);
            }
            if (TB && v < nv) {
                uint4 wv[U][R];
                float d[U][R];
#pragma unroll
                for (int u = 0; u < U; u++)
#pragma unroll
                    for (int i = 0; i < R; i++) {
                        const bool in = v + step * u < nv;
                        wv[u][i] = in ? memra_ldg16(reinterpret_cast<const uint4*>(rowp[i]) + v + step * u) : make_uint4(0, 0, 0, 0);
                        const int sx = LS ? memra_q8_lane_index((v + step * u) >> 1, ls.tp) : (v + step * u) >> 1;
                        d[u][i] = KIND == MEMRA_MV_Q8 && in ? memra_f16_to_f32(__ldg(srow[i] + sx)) : 0.0f;
                    }
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (v + step * u < nv) {
#pragma unroll
                        for (int i = 0; i < R; i++) acc[i] = memra_mv_dot<KIND, XG>(wv[u][i], x4 + XF4 * (v + step * u), d[u][i], acc[i]);
                    }
            } else {
                for (; v < nv; v += step) {
#pragma unroll
                    for (int i = 0; i < R; i++) {
                        const float d = KIND == MEMRA_MV_Q8 ? memra_f16_to_f32(__ldg(srow[i] + (LS ? memra_q8_lane_index(v >> 1, ls.tp) : v >> 1))) : 0.0f;
                        acc[i] = memra_mv_dot<KIND, XG>(memra_ldg16(reinterpret_cast<const uint4*>(rowp[i]) + v), x4 + XF4 * v, d, acc[i]);
                    }
                }
            }
            if (HL) { // the next unit's first batch (all zeros past the last unit, so head is rewritten every trip)
                const int next = unit + (int)gridDim.x;
                memra_mv_head<KIND, R, KW, HL>(head, W, S, min(next, units - 1), rows, cols, kw * 32 + lane, next < units ? nv : 0);
            }
        } else {
            for (int c = kw * 32 + lane; c < cols; c += step) {
                const float xc = x[c];
#pragma unroll
                for (int i = 0; i < R; i++) acc[i] += memra_mv_elem<KIND, LS>(rowp[i], srow[i], c, ls.tp) * xc;
            }
        }
        if (!memra_release_early<REL>(cols) && unit + (int)gridDim.x >= units) memra_grid_launch_dependents(); // this block's last unit
#pragma unroll
        for (int i = 0; i < R; i++) acc[i] = memra_warp_sum(acc[i]);
        if (KW > 1) {
            if (lane == 0) {
#pragma unroll
                for (int i = 0; i < R; i++) red[warp][i] = acc[i];
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < R; i++) {
                float s = 0.0f;
#pragma unroll
                for (int k = 0; k < KW; k++) s += red[g * KW + k][i];
                acc[i] = s;
            }
            __syncthreads(); // red is rewritten by the next unit
        }
        // Warp kw == 0 of the group owns the rows; every lane of it holds all
        // R sums, lane i writes row r0+i (mode 2: lane 2j writes pair j).
        if (kw == 0) {
            if (mode == 2) {
#pragma unroll
                for (int i = 0; i + 1 < R; i += 2) {
                    if (lane == i && r0 + i + 1 < rows) memra_mv_put(y, r0 + i, acc[i], acc[i + 1], 2);
                }
            } else {
#pragma unroll
                for (int i = 0; i < R; i++) {
                    if (lane == i && r0 + i < rows) memra_mv_put(y, r0 + i, acc[i], 0.0f, mode);
                }
            }
        }
    }
}

// One unit: 8 warps = 8/KW row groups of R rows; warp kw of a group takes
// the group's 16-byte column chunks kw*32 + lane, + KW*32, ... A block
// handles units blockIdx.x, + gridDim.x, ...: the caller launches one block
// per unit or fewer (the blocks the GPU holds at once), which pays the
// prologue (PDL wait, the fused norm) once per block instead of per unit.
// Which block computes a row never changes the row's arithmetic.
// W: [rows][cols] of KIND (q8_0: quants; K-quants: kquant.cuh), S: [rows][cols/32]
// f16 (q8_0) or [rows][cols/256] f16 (Q6_K's d); null for the other kinds.
//
// TB issues a row's tail loads (fewer than U left) at once instead of one per
// loop trip (on in matvec_q8_0_wide, docs/perf.md step 14); PF prefetches the
// first line of each row of the block's next unit into L2 while this unit
// streams (an experiment the engine's kernels leave off, step 12;
// engine/internal/mvexp times both). Neither changes the arithmetic.
//
// HL (16-byte kinds but the K-quants) issues each row's first HL loads of
// the block's first unit into registers before the grid wait and the fused
// norm, so they overlap the previous kernel's tail and the norm, and each
// unit issues its successor's first HL loads before its own reduction
// (memra_mv_rows). A lane still adds its loads in ascending order with the
// same expressions: HL moves loads, not arithmetic. It costs registers,
// hence blocks per SM: it pays in the f16/bf16 kernels (the narrow ones
// held to 4 blocks per SM; the wide ones since step 70, when the head's
// loads first really left before the wait, and with HL = 2 since step 71:
// all of a lane's loads of a unit for rows of up to 4,096 columns) and in
// the narrow q8_0 kernel (step 71, within its 80 registers); the wide q8_0
// kernels read their scales in lane order, which the head does not, and a
// whole-unit q8_0 head lost (step 70).
//
// REL: when a block releases the successor (common.cuh's memra_release):
// EARLY in the f16/bf16 kernels, LAST in the q8_0 and f32 ones.
template <int KIND, int R, int KW, int U, bool TB = false, bool PF = false, int HL = 0, bool LS = false,
          memra_release REL = MEMRA_RELEASE_LAST>
__device__ __forceinline__ void memra_mv(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols,
                                         int mode, const float* norm_w, int xnorm, float eps) {
    using Geo = memra_mv_geom<KIND, R, KW>;
    constexpr int G = Geo::G, V = Geo::V, step = Geo::step;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = warp / KW, kw = warp % KW;
    const int units = (rows + G * R - 1) / (G * R);
    // Weights are never written by a kernel: start pulling this lane's
    // first loads of its first unit into registers (HL) or L2 while the
    // previous kernel finishes, then wait.
    constexpr int H = memra_mv_kind<KIND>::K ? 0 : HL;
    memra_mv_batch<R, H> head;
    if (H) {
        // Only where memra_mv_rows takes the 16-byte path (else no load).
        memra_mv_head<KIND, R, KW, H>(head, W, S, blockIdx.x, rows, cols, kw * 32 + lane,
                                      (int)blockIdx.x < units && memra_mv_vec<KIND>(W, xnorm ? memra_xs : x, cols) ? cols / V : 0);
    } else if (cols % (memra_mv_kind<KIND>::K ? 256 : V) == 0 && (int)blockIdx.x < units) {
        const int r0 = (blockIdx.x * G + g) * R;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int v = kw * 32 + lane + step * u;
            if (v < cols / V) {
#pragma unroll
                for (int i = 0; i < R; i++)
                    memra_prefetch_l2(reinterpret_cast<const unsigned char*>(W) +
                                      (long long)min(r0 + i, rows - 1) * memra_mv_row_bytes<KIND>(cols) + memra_mv_load_off<KIND>(v));
            }
        }
    }
    memra_grid_wait();
    if (memra_release_early<REL>(cols)) memra_grid_launch_dependents();
    if (xnorm) {
        memra_mv_input(memra_xs, x, norm_w, cols, eps);
        memra_mv_rows<KIND, R, KW, U, TB, PF, H, false, LS, REL>(y, W, S, memra_xs, rows, cols, mode, head);
    } else {
        memra_mv_rows<KIND, R, KW, U, TB, PF, H, true, LS, REL>(y, W, S, x, rows, cols, mode, head);
    }
}

// The kernels. Rows per unit = (8/KW)*R, which kernels.MatvecKernels
// repeats for the host; R is even so SwiGLU pairs never straddle a warp.
// matvec_f16/bf16 take HL = 1 bounded to 4 blocks per SM: 64 registers
// without spilling (74 unbounded, 3 blocks), so a 4,096-row matrix's 512
// units still run in one wave of 528 blocks (step 23); the wide ones take
// HL = 2 unbounded, 92 registers and 2 blocks an SM (HL = 1: 78 and 3, step
// 70): the 256 units of the 0.8B preset's 1,024-row matrices still run in
// one wave (step 71; a 2,048-row matrix, as the unbenched 2B preset has,
// took two waves with HL = 1 as well).
// The q8_0 kernel asks for 3 blocks per SM: its unbounded build took
// 101 registers (2 blocks), bounded it takes 80 without spilling, with HL =
// 1 as without it (step 71; HL = 2 under that bound spills).
//
// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols]; x: [cols] f32; norm_w: [cols] f32 (read when xnorm != 0)
// matvec_f32 names one block per SM as its minimum: without it ptxas (11.8)
// squeezed it into 48 registers and spilled.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 1)
matvec_f32(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_F32, 4, 4, 2>(y, W, nullptr, x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 4)
matvec_f16(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_F16, 4, 4, 2, false, false, 1, false, MEMRA_RELEASE_EARLY>(y, W, nullptr, x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_f16_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_F16, 4, 8, 4, false, false, 2, false, MEMRA_RELEASE_EARLY>(y, W, nullptr, x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 4)
matvec_bf16(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_BF16, 4, 4, 2, false, false, 1, false, MEMRA_RELEASE_EARLY>(y, W, nullptr, x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_bf16_wide(float* y, const void* W, const float* x, int rows, int cols, int mode, const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_BF16, 4, 8, 4, false, false, 2, false, MEMRA_RELEASE_EARLY>(y, W, nullptr, x, rows, cols, mode, norm_w, xnorm, eps);
}

// y: [rows] f32 (mode 2: [rows/2]); W: [rows][cols] int8 quants; S: [rows][cols/32] f16 scales
// (matvec_q8_0_wide: [rows][stride] in lane order, memra_q8_lane_layout); x: [cols] f32; cols % 32 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 3)
matvec_q8_0(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode,
            const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_Q8, 4, 1, 2, false, false, 1>(y, W, S, x, rows, cols, mode, norm_w, xnorm, eps);
}

extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS)
matvec_q8_0_wide(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode,
                 const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_Q8, 4, 4, 2, true, false, 0, true>(y, W, S, x, rows, cols, mode, norm_w, xnorm, eps);
}

// matvec_q8_0_wave is matvec_q8_0_wide held to 4 blocks an SM: 64 registers
// without spilling once the tail batch is off (ptxas 11.8), so the 512 units
// of a 4,096-row matrix run in one wave of 528 blocks. It wins there and
// loses where a matrix has few units (the 0.8B's 1,024 rows), so the engine
// takes it for 2,049 to 4,096 rows (docs/perf.md step 57). Same scales (lane
// order) and the same sums as matvec_q8_0_wide.
extern "C" __global__ void __launch_bounds__(MEMRA_MV_THREADS, 4)
matvec_q8_0_wave(float* y, const void* W, const unsigned short* S, const float* x, int rows, int cols, int mode,
                 const float* norm_w, int xnorm, float eps) {
    memra_mv<MEMRA_MV_Q8, 4, 4, 2, false, false, 0, true>(y, W, S, x, rows, cols, mode, norm_w, xnorm, eps);
}
