#!/usr/bin/env bash
# Session 80, steps 135-137 (`bash scripts/gpu/run452.sh`).
# Step 135: a sampled step's top k selected inside the screen's top
# kernel (each block's candidates' best 64 appended to a list, the last
# block merging them) in place of a vocabulary of logits and topk_select's
# two launches. Step 136: the argmax's end of the step (argmax_final) done
# by the last block of argmax_partial or logits_screen_verify, one launch
# fewer a greedy step. Step 137: the draw done by the launch that selects
# the top k (topk_select's last pass, the top kernel's last block),
# sample_draw gone, one launch fewer a sampled step.
# p = step 137 (with 135 and 136), q = step 135 alone (255bf1b), m = main
# before them (b9dd470). p's argmax, screen, top-k, counters, draw,
# end-to-end, sampled, session, penalty, profile and graph==eager tests;
# BenchmarkGPUGraphReadback (what the token's 4-byte read-back between
# replays costs the stream); then graph and sampled decode of the 0.8B and
# 9B bf16 and the 0.8B q8_0 at 1k: p, q, m, and p with -full-logits,
# alternated twice.
# Prediction: 135: sampled rows ~1% over m's on the 0.8B, ~0.2% on the
# 9B; 136: greedy rows ~+0.2% on the 0.8B (one node of 172-173), within
# noise on the 9B; 137: sampled rows ~+0.2% more on the 0.8B (p against
# q: the greedy rows show 136, the sampled ones 137). ~5 minutes.
# carry ["bin"]; binaries: `bash scripts/gpu/bins.sh
# p=STEP137:memra,bench,engine_gpu.test q=255bf1b:bench m=b9dd470:bench`.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth p "0.8b 9b" "bf16"
synth p "0.8b" "q8_0"
el "tests (p)"
(cd engine/gpu && timeout 300 "$R/bin/p/engine_gpu.test" -test.run 'Argmax|LogitsScreen|ScreenedEqualsFull|TopK|Counters|SampleDraw|Sampled|SessionTop|Penalty|ProfileStep|EarlyLoads|GraphEqualsEager' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|candidates|panic|_test.go' | grep -v '^    --- PASS' | grep -v 'all-candidates$')
el "readback (p)"
(cd engine/gpu && timeout 100 "$R/bin/p/engine_gpu.test" -test.run XXX -test.bench GraphReadback -test.benchtime 3000x -test.count 3 2>&1 | grep -E 'Benchmark|FAIL|panic')
wait_synth
ms="$M/0.8b-bf16.gguf,$M/9b-bf16.gguf,$M/0.8b-q8_0.gguf"
for r in 1 2; do for mode in p q m full; do
  b=$mode flag=""; [ $mode = full ] && b=p flag=-full-logits
  d=/tmp/bs/$mode-$r; mkdir -p "$d"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 $flag -out "$d" \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode round $r: rc $?"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
for r in 1 2; do for x in q p; do
  el "compare m -> $x (round $r)"
  ./bin/p/bench -compare /tmp/bs/m-$r/bench-*.json /tmp/bs/$x-$r/bench-*.json 2>&1 | grep -E '\| (graph|sampled) \||geomean' | cut -d'|' -f2,4,5,6,7,8
done; done
tar czf "$OUT/bench-sampled.tgz" -C /tmp bs
el done
