#!/usr/bin/env bash
# Prepared in session 17 (branch next/q8-wide-wave), run in session 18: step 57,
# matvec_q8_0_wave (matvec_q8_0_wide held to 4 blocks an
# SM, 64 registers, no tail batch) for q8_0 matrices of 2,049 to 4,096 rows.
# run126's timing-only jt4 gave 9B q8_0 +1.6% over the lane-ordered wide
# kernel that main has since step 56. bin/old = main, bin/new = the branch.
# The sums are the wide kernel's, so greedy tokens must equal main's bit for
# bit. Every GPU test (they include step 56's 33 x 8192 shape, not yet run on
# a GPU), tokens old == new, graph chains of the q8_0 shapes, 2 gates, bench
# old/new in rotation at 1k and 32k on both q8_0 presets.
# Build (here): bin/old from main, bin/new from the branch (gate, memra,
# bench, engine_gpu.test each); carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "q8_0"
gpu_tests new
for b in old new; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
for m in 0.8b-q8_0 9b-q8_0; do
  for b in old new; do
    timeout 60 "./bin/$b/memra" run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "$OUT/tok-$m-$b.txt" 2>&1
  done
  if ! grep -qE '^[0-9 ,]+$' "$OUT/tok-$m-new.txt"; then echo "$m: no tokens printed"; continue; fi
  cmp -s <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-old.txt") <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-new.txt") && echo "$m: 64 greedy tokens old == new" || echo "$m: greedy tokens DIFFER"
done
el "gates"
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/0.8b-q8_0.gguf 300 500 1
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024,32768 old new old new
el done
