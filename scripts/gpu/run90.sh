#!/usr/bin/env bash
# Session 13, last call: the Q5_K presets across contexts for docs/perf.md's
# table (new = 45769e8 with ktile's faster Q5_K tiling), and per-kernel
# profiles of the 0.8B and 9B bf16 presets at 1k (where the time goes).
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "q5_k bf16"
wait $SYNTH
el "bench Q5_K presets, every context"
mkdir -p $OUT/q5
timeout 200 ./bin/new/bench -model $M/0.8b-q5_k.gguf,$M/9b-q5_k.gguf -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out $OUT/q5 2>$OUT/q5/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
grep -E '^\| (0.8b|9b)-q5_k \| f16 \| [0-9.]+ \|' $OUT/q5/latest.md | cut -d'|' -f2,4
for p in 0.8b-bf16 9b-bf16; do
  el "profile $p (new)"
  timeout 90 ./bin/new/bench -model $M/$p.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof-$p 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -20
done
el done
