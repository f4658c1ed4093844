#!/usr/bin/env bash
# Session 13, last call: the final tree (77168ed plus mvexp's q8_0 ring
# forms): every GPU test (the k-mix decode test carries Q5_K matrices through
# putQ5K's bit transpose), a 0.8B Q5_K gate and greedy tokens, and mvexp's
# step-31 Q6_K forms, which now end through memra_tile_put.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b" "q5_k"
gpu_tests new
wait $SYNTH
gate new $M/0.8b-q5_k.gguf 300 1000 1
greedy new $M/0.8b-q5_k.gguf
el "mvexp mmk6_ (step 31's Q6_K forms)"
timeout 60 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants mmk6 -xnorm -shapes 24576x4096,7168x1024 | grep -E '==|mmk6|engine matvec_q6|WRONG'
el done
