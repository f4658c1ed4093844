#!/usr/bin/env bash
# Session 62, second call after run348.sh on the same warm machine: the
# llama.cpp build finished if run348 ran out of time, memra's gates and
# greedy tokens on the Q4_K_M files, and llama-bench (the peer) on the
# table's bf16, q8_0, Q6_K and Q4_K_M files, which memra's bench times in
# run350.sh.
set -u
source scripts/gpu/lib.sh
start_run
el "gates (main)"
gate main "$M/0.8b-q4_k_m.gguf" 300 256 0
gate main "$M/9b-q4_k_m.gguf" 300 64 1
gate main "$M/9b-q8_0.gguf" 64 64 0
el "greedy tokens, 0.8b-q4_k_m, cuda and cpu (main)"
greedy main "$M/0.8b-q4_k_m.gguf"
if llama_cuda 300; then
  ms=""
  for p in 0.8b 9b; do for t in bf16 q8_0 q6_k q4_k_m; do ms="$ms $M/$p-$t.gguf"; done; done
  llama_bench $ms
fi
el done
