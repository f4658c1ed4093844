#!/usr/bin/env bash
# Session 80 prepared it (five failed starts and two refusals, then too
# little device time left); session 81 ran it. Step 138 (`bash scripts/gpu/run453.sh`): the token read back
# with no copy between replays. argmax_final and sample_draw also write
# the token into a ring of two int32 in mapped pinned host memory, at the
# step's position & 1, and ContinueGraph records only an event behind each
# replay (run452's BenchmarkGPUGraphReadback: the 4-byte copy cost the
# stream 7-8 us a replay). p = main with patches/readback.patch (step 138;
# 7e10e61 before it left main unrun), m = main. p's argmax, draw,
# graph==eager, run-ahead, sampled, penalty, screen kernel and end-to-end
# (step 135 as main has it: run452 tested it with steps 136-137 beside it)
# and session tests,
# BenchmarkGPUGraphReadback; then graph and sampled decode of the 0.8B
# bf16 and q8_0 at 1k, p and m alternated three times (the 9B left out:
# +0.15% there would sit inside the noise).
# Prediction: 7-8 us a token less: ~+1% on the 0.8B rows. ~3 minutes.
# carry ["bin"]; binaries (nvcc for the patched fatbin: README.md):
# `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# p=main+scripts/gpu/patches/readback.patch:memra,bench,engine_gpu.test
# r=main+scripts/gpu/patches/topkkeep.patch:engine_gpu.test m=main:bench`.
# Session 81 added r: topk_select's keep and rank passes shared with the
# screen's merge (a refactor: its top-k, screen and sampled tests).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth p "0.8b" "bf16 q8_0"
el "tests (p)"
(cd engine/gpu && timeout 200 "$R/bin/p/engine_gpu.test" -test.run 'Argmax|SampleDraw|GraphEqualsEager|RunsAhead|Sampled|Penalty|LogitsScreen|ScreenedEqualsFull|ScreenedTop|SessionTop|Synthetic|Continue' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|panic|_test.go' | grep -v '^    --- PASS')
el "tests (r: topkkeep.patch)"
(cd engine/gpu && timeout 150 "$R/bin/r/engine_gpu.test" -test.run 'TopK|LogitsScreen|ScreenedEqualsFull|ScreenedTop|SessionTop|Sampled' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|panic|_test.go' | grep -v '^    --- PASS')
el "readback (p)"
(cd engine/gpu && timeout 60 "$R/bin/p/engine_gpu.test" -test.run XXX -test.bench GraphReadback -test.benchtime 3000x -test.count 2 2>&1 | grep -E 'Benchmark|FAIL|panic')
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf"
for r in 1 2 3; do for mode in p m; do
  d=/tmp/bs/$mode-$r; mkdir -p "$d"
  timeout 150 ./bin/$mode/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode round $r: rc $?"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
for r in 1 2 3; do
  el "compare m -> p (round $r)"
  ./bin/p/bench -compare /tmp/bs/m-$r/bench-*.json /tmp/bs/p-$r/bench-*.json 2>&1 | grep -E '\| (graph|sampled) \||geomean' | cut -d'|' -f2,4,5,6,7,8
done
tar czf "$OUT/bench.tgz" -C /tmp bs
el done
