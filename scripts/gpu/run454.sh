#!/usr/bin/env bash
# Session 81 (`bash scripts/gpu/run454.sh`): main with steps 138
# (readback.patch) and the top-k refactor (topkkeep.patch) landed, each
# tested alone in run453. n = main now, m = main before (06b1d6d). n's
# tests of what the two touched, together in one fatbin; the gate on the
# 0.8B bf16; then the eager rows' question from run453 (n's eager 555-628
# tok/s against m's 600-704 on the 0.8B, a path neither change touches):
# bench on the 0.8B bf16 and q8_0 at 1k, m n n m m n n m, 5 reps each.
# carry ["bin"]; binaries: `bash scripts/gpu/bins.sh n=main:memra,bench,gate,engine_gpu.test
# m=06b1d6d:bench`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
synth n "0.8b" "bf16 q8_0"
el "tests (n)"
(cd engine/gpu && timeout 240 "$R/bin/n/engine_gpu.test" -test.run 'Argmax|SampleDraw|GraphEqualsEager|RunsAhead|Sampled|Penalty|LogitsScreen|ScreenedEqualsFull|ScreenedTop|SessionTop|TopK|Synthetic|Continue|DecodeMatchesCPU' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|panic' | grep -v '^    --- PASS')
wait_synth
el "gate (n)"
gate n "$M/0.8b-bf16.gguf" 64 256 0
gate n "$M/0.8b-q8_0.gguf" 64 256 0
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf"
i=0
for mode in m n n m m n n m; do
  i=$((i + 1)); d=/tmp/be/$mode-$i; mkdir -p "$d"
  timeout 150 ./bin/$mode/bench -model "$ms" -ctx 1024 -reps 5 -tokens 64 -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode ($i): rc $?"
  grep -E '\| (eager|graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-eager.tgz" -C /tmp be
el done
