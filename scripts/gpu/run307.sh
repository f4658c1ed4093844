#!/usr/bin/env bash
# Session 49, main with the cache's buffer plan split out of NewCache
# (Model.cacheBufs): every engine/gpu GPU test, the default gate, and bench
# on 0.8B bf16 at 1k (its L2 set-aside and speed against run306).
# carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16"
gpu_tests main
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "bench 0.8B bf16 1k"
./bin/main/bench -model "$M/0.8b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$OUT/results" 2>&1 | grep -E 'copy|graph|eager|L2|set' | head -10
grep -o '"l2_set_aside":[0-9]*' "$OUT/results/latest.json" | head -2
el done
