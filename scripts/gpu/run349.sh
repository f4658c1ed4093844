#!/usr/bin/env bash
# Session 62, second call after run348.sh on the same warm machine: the
# llama.cpp build finished if run348 ran out of time, memra's gates and
# greedy tokens on the Q4_K_M files, and llama-bench (the peer) on the
# run348's files, then memra's bench on the same
# files at 64 and 1k with -peer on llama-bench's reports (run350.sh adds
# 32k and the other K-quants).
set -u
source scripts/gpu/lib.sh
start_run
el "gates (main)"
gate main "$M/0.8b-q4_k_m.gguf" 300 256 0
gate main "$M/9b-q4_k_m.gguf" 300 64 1
gate main "$M/9b-q8_0.gguf" 64 64 0
el "greedy tokens, 0.8b-q4_k_m, cuda and cpu (main)"
greedy main "$M/0.8b-q4_k_m.gguf"
if llama_cuda 240; then
  ms=""
  for m in 0.8b-bf16 0.8b-q8_0 0.8b-q4_k_m 9b-q8_0 9b-q4_k_m; do ms="$ms $M/$m.gguf"; done
  llama_bench $ms
fi
# memra on the same files right after, on the same machine.
peer_bench 240 0.8b-bf16 0.8b-q8_0 0.8b-q4_k_m 9b-q8_0 9b-q4_k_m
el done
