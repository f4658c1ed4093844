#!/usr/bin/env bash
# Session 29: what the ffn kernels' grid barrier costs. bin/v1: run187's
# kernels (79-80 registers, h by plain loads); bin/nobar: the same with the
# barrier reduced to a block barrier (`if (bar) { __syncthreads(); return; }`
# first in memra_grid_barrier; timing only: the second product reads
# whatever h holds, so its tokens are meaningless). Graph tok/s at 1k,
# MEMRA_FFN_FUSE=0 and 1 with v1, 1 with nobar, twice round, and profiles.
# carry ["bin"] (bench and memra only). ~2 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth v1 "0.8b" "bf16 q8_0"
S1=$SYNTH
synth v1 "9b" "q8_0"
SYNTH="$S1 $SYNTH"
wait_synth
ms=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for r in v1:0 v1:1 nobar:1 v1:0 v1:1 nobar:1; do
  b=${r%:*} f=${r#*:}
  el "bench 1024 $b MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/$b-fuse$f-$(date +%s%N); mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,3,4,5,6,9,13
done
for r in v1:1 nobar:1; do
  b=${r%:*} f=${r#*:}
  el "profile $b MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/prof-$b-$f; mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 100 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out "$d" > "$d/stdout.txt" 2>"$d/stderr.txt"
  grep -E '^\| ffn' "$d/stdout.txt" | head -8
done
tar czf "$OUT/bench.tgz" -C /tmp bn
el done
