#!/usr/bin/env bash
# Session 30, step 85: the narrow q8_0 kernel and its wave form prefetch
# their own loads one (bin/pd1) or two (bin/pd2) trips ahead into L2
# (branch next/mv-prefetch, MEMRA_PD), against main (bin/main): the matvec
# and decode GPU tests, the graph chain's q8_0 cases, 64 greedy tokens
# against main's, graph tok/s at 1k in rotation. carry ["bin"]. ~7 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
for b in pd1 pd2; do
  el "engine/gpu tests ($b)"
  (cd engine/gpu && timeout 150 "$R/bin/$b/engine_gpu.test" -test.run 'KernelMatvec|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-$b.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-$b.txt" | grep -v "^    --- PASS" | head -10
done
for b in main pd1 pd2 main; do chain $b 'Q8_0/.*/.*/graph'; done
wait_synth
tokens_cmp main pd1 "0.8b-q8_0 9b-q8_0"
tokens_cmp main pd2 "0.8b-q8_0 9b-q8_0"
bench_rotation "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 main pd1 pd2 main pd1 pd2
el done
