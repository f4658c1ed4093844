#!/usr/bin/env bash
# Session 20, main after steps 61 and 62 (fp8 attention splits at 8 warps,
# e4m3 decoded in hardware): every GPU test, 3 gates with FP8 KV, then
# docs/perf.md's full table with -kv fp8 (the f16 table is run132's).
# bin/new = main; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests new
wait_synth
el gates
gate new $M/0.8b-q8_0.gguf 3000 600 1
gate new $M/9b-q4_k.gguf 300 256 1
gate new $M/9b-bf16.gguf 64 256 1
full_table new -kv fp8
el done
