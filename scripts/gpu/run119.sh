#!/usr/bin/env bash
# Session 17, step 55: the q8_0 matvecs copy the first 16-byte load of each
# row of their first unit (and its scale word) into shared memory with
# cp.async before the grid wait: HL's head without its registers.
# bin/old = main (e257b2a), bin/new = both q8_0 kernels, bin/shn = the
# narrow kernel only (the wide one as main's). Graph chains of the q8_0
# shapes on all three, greedy tokens old / new (the arithmetic is the same
# by construction: the same loads added in the same order), bench
# old/new/shn in rotation at 1k on the two q8_0 presets (two rounds), the
# matvec and graph tests and two gates on new. Build (here): the three sets
# of binaries; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "q8_0"
for b in old new shn; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
for m in 0.8b-q8_0 9b-q8_0; do
  for b in old new; do
    timeout 200 "./bin/$b/memra" run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "$OUT/tok-$m-$b.txt" 2>&1
  done
  cmp -s <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-old.txt") <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-new.txt") && echo "$m: 64 greedy tokens old == new" || echo "$m: greedy tokens DIFFER"
done
el "bench"
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024 old new shn old new shn
el "tests, gates (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'Matvec|GraphEqualsEager|DecodeMatchesCPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|panic' | grep -v '^    ')
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/0.8b-q8_0.gguf 300 500 1
el done
