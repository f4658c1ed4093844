#!/usr/bin/env bash
# Session 62, main with bench -peer (bin/main by bash scripts/gpu/bins.sh
# main=main:memra,gate,bench at 4e06ec3; peer/ by scripts/llama/cuda-src.sh;
# carry ["bin","peer"]), on an H200 after eleven refused starts had left
# ~690 s of device time: the 0.8B in bf16, q8_0 and Q4_K_M and the 9B in
# q8_0 and Q4_K_M written while llama.cpp's CUDA llama-bench builds (at most
# 240 s: it was not done, and run352.sh on the still-warm machine finished
# it), the gates and greedy tokens, llama-bench on the five files had it
# been built, then memra's bench on them at 64 and 1k (with -peer, had
# there been reports).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nvcc --version | tail -1; nproc
synth main "0.8b" "bf16 q8_0 q4_k_m"
s1=$SYNTH
synth main "9b" "q8_0 q4_k_m"
SYNTH="$SYNTH $s1"
built=0
llama_cuda 240 && built=1
el "waiting for synth"
wait_synth
el "gates (main)"
gate main "$M/0.8b-q4_k_m.gguf" 300 256 0
gate main "$M/9b-q4_k_m.gguf" 300 64 1
gate main "$M/9b-q8_0.gguf" 64 64 0
el "greedy tokens, 0.8b-q4_k_m, cuda and cpu (main)"
greedy main "$M/0.8b-q4_k_m.gguf"
files="0.8b-bf16 0.8b-q8_0 0.8b-q4_k_m 9b-q8_0 9b-q4_k_m"
if [ $built = 1 ]; then
  ms=""; for m in $files; do ms="$ms $M/$m.gguf"; done
  llama_bench $ms
fi
peer_bench 120 $files
el done
