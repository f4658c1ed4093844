#!/usr/bin/env bash
# Session 81 prepared it (its calls got a failed start, then a refusal
# with too little device time left); session 82 ran it on an H100 asked
# for as nvidia-h200 (`bash scripts/gpu/run455.sh`, log
# docs/results/h100-run455-log.txt). Step 139: the replays' tokens
# polled in the mapped ring, no event between replays. p = main with
# patches/poll.patch, m = main (step 138). p's StreamIdle, PollToken,
# graph, sampled, penalty, run-ahead, NaN and session tests and the gate
# on the 0.8B bf16; then the 0.8B bf16 and q8_0 at 1k, m p p m m p p m,
# 5 reps each (run454's rows spread by +-0.05%).
# Prediction: ~1.9 us a token less, ~+0.25% on the 0.8B graph rows.
# Result: within +-0.1%, not taken (docs/perf.md step 139).
# carry ["bin"]; binaries: `bash scripts/gpu/bins.sh
# p=main+scripts/gpu/patches/poll.patch:memra,bench,gate,engine_gpu.test,engine_cuda.test m=main:bench`
# (at a0ed9f4, before the patch moved to patches/poll/poll.patch when it
# was not taken).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth p "0.8b" "bf16 q8_0"
el "tests (p)"
(cd engine/gpu && timeout 200 "$R/bin/p/engine_gpu.test" -test.run 'PollToken|GraphEqualsEager|RunsAhead|Sampled|Penalty|ScreenedEqualsFull|SessionTop|Synthetic|NaN|Continue|Generate' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|panic' | grep -v '^    --- PASS')
[ -x bin/p/engine_cuda.test ] && (cd engine/cuda && timeout 60 "$R/bin/p/engine_cuda.test" -test.run 'StreamIdle|Sync' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|panic')
wait_synth
el "gate (p)"
gate p "$M/0.8b-bf16.gguf" 64 256 0
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf"
i=0
for mode in m p p m m p p m; do
  i=$((i + 1)); d=/tmp/bp/$mode-$i; mkdir -p "$d"
  timeout 150 ./bin/$mode/bench -model "$ms" -ctx 1024 -reps 5 -tokens 64 -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode ($i): rc $?"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench.tgz" -C /tmp bp
el done
