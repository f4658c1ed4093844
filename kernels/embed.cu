// embed.cu: token embedding lookup, x[n_embd] f32 = row `token` of token_embd.
//
// Why it looks like this: a decode step embeds one token, so the kernel is a
// plain gather, one thread per output element; one kernel per storage type
// keeps the inner loop branch-free. The token comes from `token, dtoken`
// (dtoken ? dtoken[t] : token for grid row t) so the eager path and the
// device-counter path run the same code. A prompt chunk embeds its n tokens
// in one launch, a grid row each: token t from dtoken[t] into x +
// t*x_stride (a launch a token was 32 graph nodes a chunk, each updated
// with its token; perf.md step 129). Without dtoken every row gets token. An out-of-range token never reads outside the table: it
// writes NaN into x so the failure shows in the logits instead of hiding.
//
// Layout: row r is contiguous, n_embd elements (ggml); a q8_0 table is
// repacked at upload into quants and block scales (value = d*q; matvec.cu),
// a K-quant table in the tensor-core matvecs' tiles (kquant.cuh); the
// K-quant rows are decoded as the CPU decodes them, so the embedding
// matches the CPU bit for bit.
#include "common.cuh"
#include "kquant.cuh"

// This thread's element i of its grid row's x and the row's token t: false
// when there is nothing more to do, past n_embd or for an out-of-range token
// (x[i] = NaN written). x comes back moved to the row's.
__device__ __forceinline__ bool memra_embed_at(float*& x, int n_embd, int n_vocab, int token, const int* dtoken, int x_stride, int* i,
                                               int* t) {
    *i = blockIdx.x * blockDim.x + threadIdx.x;
    if (*i >= n_embd) return false;
    x += (long long)blockIdx.y * x_stride;
    *t = memra_load_or(token, dtoken ? dtoken + blockIdx.y : nullptr);
    if (*t < 0 || *t >= n_vocab) {
        x[*i] = __uint_as_float(0x7fc00000u);
        return false;
    }
    return true;
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] f32
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_f32(float* x, const float* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = table[(long long)t * n_embd + i];
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] f16 bits
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_f16(float* x, const unsigned short* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_f16_to_f32(table[(long long)t * n_embd + i]);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] bf16 bits
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_bf16(float* x, const unsigned short* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_bf16_to_f32(table[(long long)t * n_embd + i]);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] int8 quants, scales: [n_vocab][n_embd/32] f16
// (q8_0 repacked at upload, as matvec_q8_0 reads it); n_embd % 32 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_q8_0(float* x, const signed char* table, const unsigned short* scales, int n_embd, int n_vocab, int token,
           const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    const long long e = (long long)t * n_embd + i;
    x[i] = memra_f16_to_f32(scales[e >> 5]) * (float)table[e];
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] Q4_K in the tiled layout of
// matvec_q4k.cu (kquant.cuh, memra_k4t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_q4_k(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_k4t_value<false>(table, n_embd >> 8, t, i);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] Q5_K in the tiled layout of
// matvec_q4k.cu (kquant.cuh, memra_k4t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_q5_k(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_k4t_value<true>(table, n_embd >> 8, t, i);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] Q6_K in the tiled layout of
// matvec_q6k.cu (kquant.cuh, memra_q6t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_q6_k(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_q6t_value(table, n_embd >> 8, t, i);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] Q3_K in the tiled layout of
// matvec_q6k.cu's Q3 forms (kquant.cuh, memra_q3t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_q3_k(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_q3t_value(table, n_embd >> 8, t, i);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] IQ4_XS in the tiled layout of
// matvec_q6k.cu's IQ4 forms (kquant.cuh, memra_iq4t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_iq4_xs(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_iq4t_value(table, n_embd >> 8, t, i);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] Q4_0 in the tiled layout of
// matvec_q6k.cu's Q4_0 forms (kquant.cuh, memra_b32t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_q4_0(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_b32t_value<false>(table, n_embd >> 8, t, i);
}

// x: [n][x_stride] f32 (n_embd of each row written); table: [n_vocab][n_embd] IQ4_NL in the tiled layout of
// matvec_q6k.cu's IQ4_NL forms (kquant.cuh, memra_b32t_value); n_embd % 256 == 0
extern "C" __global__ void __launch_bounds__(MEMRA_EW_THREADS)
embed_iq4_nl(float* x, const unsigned char* table, int n_embd, int n_vocab, int token, const int* dtoken, int n, int x_stride) {
    memra_grid_wait();
    memra_grid_launch_dependents();
    int i, t;
    if (!memra_embed_at(x, n_embd, n_vocab, token, dtoken, x_stride, &i, &t)) return;
    x[i] = memra_b32t_value<true>(table, n_embd >> 8, t, i);
}
