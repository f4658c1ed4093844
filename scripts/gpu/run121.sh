#!/usr/bin/env bash
# Session 17, step 55: run120 found the q8_0 wide kernel 13% faster on
# 4096 x 12288 without its scale loads (nos: 64 registers, 4 blocks per SM,
# the 512 units of a 4,096-row matrix in one wave). Is it the registers?
# bin/b4 = main's wide kernel bounded to 4 blocks per SM (64 registers, 24
# bytes spilled), bin/b3 = to 3 (80 registers, no spill); bin/nos and
# bin/old as in run120. Graph chains of the q8_0 shapes, bench at 1k on 9B
# q8_0 in rotation. Build (here): bench and engine_gpu.test of each;
# carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth old "9b" "q8_0"
for b in old nos b4 b3; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/4096.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
bench_rotation $M/9b-q8_0.gguf 1024 old nos b4 b3 old nos b4 b3
el done
