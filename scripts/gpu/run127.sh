#!/usr/bin/env bash
# Session 17, step 56: matvec_q8_0_wide reads its scales in lane order (one
# 4-byte load for a trip of two chunks; run126's jtw form, now with the
# upload writing that order). bin/old = e257b2a, bin/new = this tree. The
# arithmetic is main's (the same scales, the same order of additions), so
# greedy tokens must equal old's bit for bit. Every GPU test, tokens old ==
# new on both q8_0 presets, 2 gates, bench old/new in rotation at 1k.
# Build (here): bin/new, bin/old; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "q8_0"
gpu_tests new
wait $SYNTH
for m in 0.8b-q8_0 9b-q8_0; do
  for b in old new; do
    timeout 60 "./bin/$b/memra" run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "$OUT/tok-$m-$b.txt" 2>&1
  done
  cmp -s <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-old.txt") <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-new.txt") && echo "$m: 64 greedy tokens old == new" || echo "$m: greedy tokens DIFFER"
done
el "gates"
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/0.8b-q8_0.gguf 300 500 1
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024 old new old new
el done
