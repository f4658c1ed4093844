#!/usr/bin/env bash
# Prepared in session 22 (not yet run): run148's leftover, main after step 68:
# every GPU test and docs/perf.md's full table with -kv fp8 (run148's was cut
# by the session's device time). bin/main; carry ["bin"]. ~6 minutes: the
# ten models' synth overlaps the tests.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests main
wait_synth
full_table main -kv fp8
el done
