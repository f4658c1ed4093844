#!/usr/bin/env bash
# Session 22, main after step 68 (the tensor-core attention split over an
# FP8 cache at the split cap): the attention and decode GPU tests, gates
# across the cap with FP8 KV, and docs/perf.md's full table with -kv fp8
# (the f16 table is run142's: the f16 path is unchanged). bin/main; carry
# ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
attn_tests main
wait_synth
el gates
gate main $M/9b-q4_k.gguf 4300 128 1
gate main $M/0.8b-bf16.gguf 8400 200 1
full_table main -kv fp8
el done
