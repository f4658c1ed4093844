/* ggmlq deq|q TYPE N: ggml's own (de)quantisation of N values of TYPE,
   for gguf's TestQuantsMatchGGML (scripts/llama/quants.sh): deq reads
   TYPE's blocks on stdin and writes f32 values, q reads f32 values and
   writes the blocks quantize_row_*_ref makes of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef void (*deq_fn)(const void *, float *, int64_t);
typedef void (*q_fn)(const float *, void *, int64_t);
#define D(t) extern void dequantize_row_##t(const void *, float *, int64_t); extern void quantize_row_##t##_ref(const float *, void *, int64_t);
D(q4_0) D(q5_0) D(q8_0) D(q3_K) D(q4_K) D(q5_K) D(q6_K) D(iq4_nl) D(iq4_xs)
struct { const char *name; deq_fn d; q_fn q; int block, bytes; } T[] = {
 {"Q4_0", dequantize_row_q4_0, quantize_row_q4_0_ref, 32, 18},
 {"Q5_0", dequantize_row_q5_0, quantize_row_q5_0_ref, 32, 22},
 {"Q8_0", dequantize_row_q8_0, quantize_row_q8_0_ref, 32, 34},
 {"Q3_K", dequantize_row_q3_K, quantize_row_q3_K_ref, 256, 110},
 {"Q4_K", dequantize_row_q4_K, quantize_row_q4_K_ref, 256, 144},
 {"Q5_K", dequantize_row_q5_K, quantize_row_q5_K_ref, 256, 176},
 {"Q6_K", dequantize_row_q6_K, quantize_row_q6_K_ref, 256, 210},
 {"IQ4_NL", dequantize_row_iq4_nl, quantize_row_iq4_nl_ref, 32, 18},
 {"IQ4_XS", dequantize_row_iq4_xs, quantize_row_iq4_xs_ref, 256, 136},
};
int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: ggmlq deq|q TYPE N\n"); return 2; }
  int n = atoi(argv[3]);
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) if (!strcmp(T[i].name, argv[2])) {
    size_t nb = (size_t)n / T[i].block * T[i].bytes;
    void *b = malloc(nb); float *f = malloc(4 * (size_t)n);
    if (!b || !f || n % T[i].block) return 2;
    if (!strcmp(argv[1], "deq")) {
      if (fread(b, 1, nb, stdin) != nb) return 1;
      T[i].d(b, f, n);
      return fwrite(f, 4, n, stdout) != (size_t)n;
    }
    if (fread(f, 4, n, stdin) != (size_t)n) return 1;
    T[i].q(f, b, n);
    return fwrite(b, 1, nb, stdout) != nb;
  }
  fprintf(stderr, "ggmlq: unknown type %s\n", argv[2]);
  return 2;
}
