#!/usr/bin/env bash
# Session 27: main at 0a9e12f (one matvecKey for the variant choice; no
# kernel change): every engine/gpu GPU test and a gate on 9B Q4_K, whose
# 4096 x 12288 matrices take the wave kernel. bin/main. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "9b" "q4_k"
gpu_tests main
wait_synth
gate main $M/9b-q4_k.gguf 64 128 0
el done
