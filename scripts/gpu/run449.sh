#!/usr/bin/env bash
# Session 80, step 135 (`bash scripts/gpu/run449.sh`): a sampled step's
# top k selected inside the screen's top kernel (each block's candidates'
# best 64 appended to a list, the last block merging them) in place of a
# vocabulary of logits and topk_select's two launches. p = step 135, m =
# main before it (b9dd470). p's screen kernel, top-k, end-to-end, sampled,
# session and penalty tests; then graph and sampled decode of the 0.8B and
# 9B bf16 at 1k: p, m, and p with -full-logits, alternated twice.
# Prediction: p's sampled rows ~1% over m's on the 0.8B, ~0.2% on the 9B,
# the greedy rows the same. ~4 minutes. carry ["bin"]; binaries:
# `bash scripts/gpu/bins.sh p=STEP135:memra,bench,engine_gpu.test
# m=b9dd470:bench`.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth p "0.8b 9b" "bf16"
el "screen tests (p)"
(cd engine/gpu && timeout 300 "$R/bin/p/engine_gpu.test" -test.run 'LogitsScreen|ScreenedEqualsFull|TopK|Sampled|SessionTop|Penalty' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|candidates|panic|_test.go' | grep -v '^    --- PASS' | grep -v 'all-candidates$')
wait_synth
for r in 1 2; do for mode in p m full; do
  b=$mode flag=""; [ $mode = full ] && b=p flag=-full-logits
  d=/tmp/bs/$mode-$r; mkdir -p "$d"
  timeout 150 ./bin/$b/bench -model "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 $flag -out "$d" \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode round $r: rc $?"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
for r in 1 2; do
  el "compare m -> p (round $r)"
  ./bin/p/bench -compare /tmp/bs/m-$r/bench-*.json /tmp/bs/p-$r/bench-*.json 2>&1 | grep -E '\| (graph|sampled) \||geomean' | cut -d'|' -f2,4,5,6,7,8
done
tar czf "$OUT/bench-sampled.tgz" -C /tmp bs
el done
