#!/usr/bin/env bash
# Session 41, main at the session's end (host-side changes only since
# run270: interrupts stop convert and synth cleanly, bench's duplicate
# checks): every engine/gpu GPU test, gates on 0.8B (f16 and FP8 KV) and 9B
# (q8_0 and Q5_K), 24 greedy tokens cuda against cpu, and perf.md's full
# table (ten 0.8B and 9B presets, contexts 64 to 32k) with main's final
# binary. carry ["bin"]. ~6 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests main
wait_synth
el "gates"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/0.8b-bf16.gguf" 64 128 1
gate main "$M/9b-q8_0.gguf" 64 64 0
gate main "$M/9b-q5_k.gguf" 64 64 0
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
full_table main
el done
