/* llgen MODEL N IDS: N greedy tokens of llama.cpp's libllama after the
   prompt IDS (comma-separated token ids), one line of ids, for comparing
   memra's tokens with llama.cpp's on the same file (scripts/llama/). Each
   step's top-two logit gap goes to stderr, so a differing token can be told
   from a near-tie. Only the fields set here are declared: n_ctx and the
   thread counts at the head of llama_context_params; the params structs
   are oversized, since they come back by value and vary across versions.
   llama_batch is passed by value, so it is declared whole (its layout has
   not changed since 2023). */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

struct mparams { unsigned char b[1024]; };
struct cparams { uint32_t n_ctx, n_batch, n_ubatch, n_seq_max; int32_t n_threads, n_threads_batch; unsigned char rest[1024]; };
struct batch { int32_t n_tokens; int32_t *token; float *embd; int32_t *pos; int32_t *n_seq_id; int32_t **seq_id; int8_t *logits; };

extern void llama_backend_init(void);
extern struct mparams llama_model_default_params(void);
extern struct cparams llama_context_default_params(void);
extern void *llama_model_load_from_file(const char *, struct mparams);
extern void *llama_init_from_model(void *, struct cparams);
extern struct batch llama_batch_get_one(int32_t *, int32_t);
extern int32_t llama_decode(void *, struct batch);
extern float *llama_get_logits_ith(void *, int32_t);
extern const void *llama_model_get_vocab(const void *);
extern int32_t llama_vocab_n_tokens(const void *);
extern void llama_log_set(void (*)(int, const char *, void *), void *);

static void quiet(int level, const char *text, void *ud) { (void)level; (void)text; (void)ud; }

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: llgen MODEL N IDS\n"); return 2; }
    if (!getenv("LLGEN_LOG")) llama_log_set(quiet, NULL);
    llama_backend_init();
    void *model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) { fprintf(stderr, "llgen: cannot load %s\n", argv[1]); return 1; }
    struct cparams cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = cp.n_threads_batch = 2;
    void *ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "llgen: no context\n"); return 1; }
    int n = atoi(argv[2]), nv = llama_vocab_n_tokens(llama_model_get_vocab(model));
    int32_t toks[512];
    int nt = 0;
    for (char *s = strtok(argv[3], ","); s && nt < 512; s = strtok(NULL, ",")) toks[nt++] = atoi(s);
    int32_t *in = toks, nin = nt;
    for (int i = 0; i < n; i++) {
        if (llama_decode(ctx, llama_batch_get_one(in, nin)) != 0) { fprintf(stderr, "llgen: decode failed\n"); return 1; }
        const float *l = llama_get_logits_ith(ctx, -1);
        if (i == 0 && getenv("LLGEN_LOGITS")) { /* the first step's logits, f32, for a closer comparison */
            FILE *f = fopen(getenv("LLGEN_LOGITS"), "wb");
            if (!f || fwrite(l, sizeof *l, nv, f) != (size_t)nv || fclose(f)) { fprintf(stderr, "llgen: cannot write the logits\n"); return 1; }
        }
        int best = 0;
        for (int v = 1; v < nv; v++) if (l[v] > l[best]) best = v;
        float second = -1e30f;
        for (int v = 0; v < nv; v++) if (v != best && l[v] > second) second = l[v];
        fprintf(stderr, "step %d: token %d logit %g, gap to the next %g\n", i, best, l[best], l[best] - second);
        printf(i ? " %d" : "%d", best);
        toks[nt] = best;
        in = &toks[nt++];
        nin = 1;
    }
    printf("\n");
    return 0;
}
