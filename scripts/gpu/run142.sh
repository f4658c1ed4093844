#!/usr/bin/env bash
# Session 21: main after steps 63-65 (bin/main): every engine/gpu GPU test,
# three gates, and perf.md's full table over an f16 cache. carry ["bin"]. ~6 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests main
wait_synth
el gates
gate main $M/0.8b-bf16.gguf 300 1000 1
gate main $M/9b-q8_0.gguf 64 256 0
gate main $M/9b-q4_k.gguf 300 256 1
full_table main
el done
