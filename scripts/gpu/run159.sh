#!/usr/bin/env bash
# Session 24: perf.md's full table over FP8 KV on main after step 71's
# narrow q8_0 head (bin/main = b14b8f2, as in run158, whose FP8 table ran
# past its 600 s). carry ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table main -kv fp8
el done
