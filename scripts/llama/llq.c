/* llq IN OUT FTYPE: llama.cpp's llama_model_quantize, for checking memra's
   mixes against it. Only the first two fields of the params are set; the
   struct is oversized so the by-value return of the real one fits. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
struct qparams { int32_t nthread; int32_t ftype; unsigned char rest[1024]; };
extern struct qparams llama_model_quantize_default_params(void);
extern uint32_t llama_model_quantize(const char *, const char *, const struct qparams *);
extern void llama_backend_init(void);
extern const char * llama_print_system_info(void);
int main(int argc, char ** argv) {
    if (argc < 4) { fprintf(stderr, "usage: llq IN OUT FTYPE\n"); return 2; }
    llama_backend_init();
    struct qparams p = llama_model_quantize_default_params();
    p.nthread = 2;
    p.ftype = atoi(argv[3]);
    uint32_t rc = llama_model_quantize(argv[1], argv[2], &p);
    printf("llama_model_quantize rc %u\n", rc);
    return rc != 0;
}
