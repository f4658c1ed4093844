#!/usr/bin/env bash
# Session 30, step 85's second form: the q8_0 wave kernel (the 9B's
# 4,096-row matrices) with a head of 2 loads a row before its wait, in
# lane-order scales (branch next/q8-wave-head, bin/hl2; 462 bytes of spill
# under its 4-block bound), against main (bin/main): matvec and decode GPU
# tests, the graph chain's q8_0 cases, 64 greedy tokens against main's,
# graph tok/s at 1k in rotation. carry ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
el "engine/gpu tests (hl2)"
(cd engine/gpu && timeout 150 "$R/bin/hl2/engine_gpu.test" -test.run 'KernelMatvec|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-hl2.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-hl2.txt" | grep -v "^    --- PASS" | head -10
for b in main hl2 main hl2; do chain $b 'Q8_0/.*/.*/graph'; done
wait_synth
tokens_cmp main hl2 "0.8b-q8_0 9b-q8_0"
bench_rotation "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 main hl2 main hl2
el done
