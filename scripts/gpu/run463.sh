#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run463.sh`, asked for as nvidia-h200, ran on
# an H100; log docs/results/h100-run463-log.txt, with the failing test's
# lines from its gputest.txt appended): main after step 140 (5833663) on any
# GPU: every engine/gpu GPU test and four gates (step 140 changes every sm_90
# decode step; 323 s on the H100). carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=main` at 5833663 (the committed fatbin). Every test
# and gate passed but TestGPUOmitParts, whose node counts did not know the
# fused launch; its mend ran in run464. run461 is the H200 table.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
gpu_tests m
synth m "0.8b" "bf16 q4_k"
first=$SYNTH
synth m "9b" "q8_0 q5_k"
SYNTH="$first $SYNTH"
wait_synth
el gates
gate m "$M/0.8b-bf16.gguf" 64 512 0
gate m "$M/0.8b-q4_k.gguf" 64 256 1
gate m "$M/9b-q8_0.gguf" 64 256 0
gate m "$M/9b-q5_k.gguf" 64 128 0
el done
