#!/usr/bin/env bash
# Session 79, step 134 (`bash scripts/gpu/run445.sh`): the top kernel on
# 2,048-row blocks (four times the blocks of step 133's argmax chunks, so
# that a sampled step's few hundred candidates' sums spread over more SMs),
# all of a warp's candidate rows asked of the L2 before its first sum, and
# the threshold's values staged in shared memory. p = the working tree, m =
# step 133 (c77004c). p's screen kernel and end-to-end tests, the sampled,
# session and penalty tests; then graph and sampled decode of the 0.8B and
# 9B bf16 at 1k: p, m, and p with -full-logits, alternated twice.
# Prediction: p's sampled rows ~1-2% over m's on the 0.8B, ~0.5% on the 9B
# (part of the 18 and 35 µs a sampled step spends over the full path's
# draw), the greedy rows the same. ~3 minutes. carry ["bin"]; binaries:
# c77004c's (bins.sh) as bin/m, the working tree's as bin/p.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth p "0.8b 9b" "bf16"
el "screen tests (p)"
(cd engine/gpu && timeout 300 "$R/bin/p/engine_gpu.test" -test.run 'LogitsScreen|ScreenedEqualsFull|Sampled|SessionTop|Penalty' -test.v 2>&1 |
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
tar czf "$OUT/bench-sampled.tgz" -C /tmp bs
el done
