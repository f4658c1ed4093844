#!/usr/bin/env bash
# Session 24: perf.md's full table over an f16 cache on main after step 71
# (bin/main: both of its parts; run158's table had only the first), and a
# gate on 0.8B bf16, whose wide kernels the second part changed.
# carry ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
gate main $M/0.8b-bf16.gguf 300 1000 1
full_table main
el done
