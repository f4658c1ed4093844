#!/usr/bin/env bash
# PREPARED, NOT RUN (`bash scripts/gpu/run463.sh`): main after step 140 on
# any GPU: every engine/gpu GPU test and four gates (step 140 changes every
# sm_90 decode step; ~8 minutes on an H100). carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=main` (the committed fatbin). run461 is the H200
# table.
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
