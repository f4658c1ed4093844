// memra.cu: the unity translation unit. Every concept file is included here
// and the whole set is compiled by one nvcc call into kernels/memra.fatbin
// (SASS for sm_80/86/89/90 + compute_90 PTX), so the engine loads a single
// module. Built WITHOUT --use_fast_math: expf/logf/sqrtf and division stay
// the accurate IEEE versions, which the CPU reference and the eager-vs-graph
// determinism rely on. spec_test.go fails when a .cu file is missing here.
#include "common.cuh"

#include "argmax.cu"
#include "attention.cu"
#include "counters.cu"
#include "draw.cu"
#include "elementwise.cu"
#include "embed.cu"
#include "gdn.cu"
#include "kv_store.cu"
#include "matvec.cu"
#include "matvec_batch.cu"
#include "matvec_q4k.cu"
#include "matvec_q6k.cu"
#include "penalty.cu"
#include "rmsnorm.cu"
#include "rope.cu"
#include "topk.cu"

// After rmsnorm.cu and rope.cu: it reuses their device functions.
#include "attn_prep.cu"
// After attention.cu: it reuses its prefetch before the wait and its partials.
#include "attention_mma.cu"
// After attention.cu and attn_prep.cu: it runs the split with attn_prep's head functions.
#include "attn_prep_split.cu"
// After matvec_q4k.cu and matvec_q6k.cu: it reuses their tiles and their steps' helpers.
#include "matvec_batch_kq.cu"
// After matvec_q4k.cu and matvec_q6k.cu: it runs their tiles with one slot.
#include "matvec_lean.cu"
// After matvec_q4k.cu and matvec_q6k.cu: it runs two of their kernels in one grid.
#include "matvec_mix.cu"
// After argmax.cu, matvec.cu and topk.cu: it sums rows as matvec_bf16 does, picks as argmax does and selects as topk_select does.
#include "logits_screen.cu"
