#!/usr/bin/env bash
# Session 39, main after step 95 (q8_0 and Q4_K matrices of up to 5,120 rows
# on the wide kernels): the GPU tests the kernel rule touches, the gates on
# 27B q8_0 (FP8 KV off and on), 27B Q4_K (when the machine still holds it)
# and 9B q8_0, 24 greedy tokens cuda against cpu on 27B q8_0, bench graph
# at 1k on 27B q8_0. carry ["bin"]. ~3-5 min.
set -u
source scripts/gpu/lib.sh
start_run
el "synth 27b q8_0, 9b q8_0 (kept where the machine has them)"
synth main "27b 9b" "q8_0"
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'MatvecShared|MatvecKernelRule|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gates"
gate main "$M/27b-q8_0.gguf" 64 128 0
gate main "$M/27b-q8_0.gguf" 300 64 1
[ -s "$M/27b-q4_k.gguf" ] && gate main "$M/27b-q4_k.gguf" 64 64 0
gate main "$M/9b-q8_0.gguf" 64 64 0
greedy main "$M/27b-q8_0.gguf"
el "bench"
timeout 100 ./bin/main/bench -model "$M/27b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/b6 2>/dev/null | grep -E '\| graph \||copy bandwidth'
el done
