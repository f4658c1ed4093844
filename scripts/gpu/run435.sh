#!/usr/bin/env bash
# Session 78, on any GPU (`bash scripts/gpu/run435.sh`): every engine/gpu
# GPU test of main (step 131 landed, which the whole suite has not run on)
# and four gates (run429's without its H200 check and priming A/B).
# ~6 minutes on an H100. carry ["bin"]; binaries as run434.sh says.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests main
synth main "0.8b" "bf16 q8_0"
S0=$SYNTH
synth main "9b" "bf16 q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
el gates
gate main "$M/9b-q8_0.gguf" 300 64 0
gate main "$M/9b-bf16.gguf" 300 64 1
gate main "$M/0.8b-bf16.gguf" 300 64 1
gate main "$M/0.8b-q8_0.gguf" 300 64 0
el done
