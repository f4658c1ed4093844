#!/usr/bin/env bash
# Session 77: every engine/gpu GPU test of main (eb7bc25: step 130's kernels,
# whose whole suite had not run) and two 0.8B gates, on an H100 asked for as
# nvidia-h200 (run428, for an H200 only, had stopped on it at once). Ran
# inline as one command line; this is that line as a script.
# carry ["bin"]; binaries as run428.sh says.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests main 2>&1 | tail -60
synth main "0.8b" "bf16 q8_0"
wait_synth
el gates
gate main "$M/0.8b-bf16.gguf" 300 64 1
gate main "$M/0.8b-q8_0.gguf" 300 64 0
el done
