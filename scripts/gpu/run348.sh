#!/usr/bin/env bash
# Session 62, main with bench -peer (bin/main built by
#   bash scripts/gpu/bins.sh main=main:memra,gate,bench
# and peer/ by scripts/llama/cuda-src.sh; carry ["bin","peer"]): the first of
# two or three calls on one warm machine (run349.sh, then run350.sh if time is left, must follow
# within its 30 s idle time, or the models and the build are lost). Writes
# the models of this session's table into /tmp/models and builds llama.cpp's
# CUDA llama-bench for the peer column, both at once. Six refused starts
# left too little device time for run350 and for the 9B bf16 and the Q6_K
# files: the 0.8B in bf16, q8_0 and Q4_K_M, the 9B in q8_0 and Q4_K_M.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nvcc --version | tail -1; nproc; df -h /tmp | tail -1
synth main "0.8b" "bf16 q8_0 q4_k_m"
s1=$SYNTH
synth main "9b" "q8_0 q4_k_m"
SYNTH="$SYNTH $s1"
llama_cuda 400
el "waiting for synth"
wait_synth
ls -la "$M"/*.gguf | awk '{print $5, $9}'; df -h /tmp | tail -1
el done
