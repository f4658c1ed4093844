#!/usr/bin/env bash
# Session 78, after run436 on the same warm machine (`bash
# scripts/gpu/run437.sh`): every engine/gpu GPU test of step 132's build
# (bin/new), and a gate on an f16 0.8B (the f16 verify kernel end to end).
# carry ["bin"]; binaries as run436.sh says.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests new
synth new "0.8b" "f16"
wait_synth
gate new "$M/0.8b-f16.gguf" 300 64 0
el done
