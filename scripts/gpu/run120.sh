#!/usr/bin/env bash
# Session 17, step 55: is the q8_0 scale array what holds the 4,096-row
# q8_0 matrices at ~3 TB/s? Timing only (the outputs of these variants are
# wrong on purpose): bin/old = main; bin/s0 = every row reads row 0's
# scales (the scale stream leaves DRAM, its loads stay); bin/nos = no scale
# loads (d = 1); s0p / nosp = the same with the wide kernel's grid held to
# main's 2 blocks per SM (both variants need fewer registers: 72 and 64
# against 126). Graph chains of the q8_0 shapes, then bench at 1k on 9B
# q8_0 in rotation. Build (here): bench and engine_gpu.test of each
# variant (worktrees of e257b2a); carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth old "9b" "q8_0"
for b in old s0 nos s0p nosp; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
bench_rotation $M/9b-q8_0.gguf 1024 old s0 nos s0p nosp old s0 nos
el done
