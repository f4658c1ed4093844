#!/usr/bin/env bash
# Prepared in session 18 for a later GPU session (the device was withdrawn
# after run129): main's tree with step 57 (the wave kernel), every GPU test,
# 3 gates, then docs/perf.md's full table (run114's command), tarred. Run it
# on main as it stands, after merging whichever of next/linear-norm
# (run130.sh) and next/attn-8warp (run131.sh) paid.
# Build (here): bin/new from main (gate, memra, bench, engine_gpu.test);
# carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests new
wait_synth
el gates
gate new $M/0.8b-bf16.gguf 300 1000 1
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/9b-q4_k.gguf 300 256 1
full_table new
el done
