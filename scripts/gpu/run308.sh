#!/usr/bin/env bash
# Session 49, main after the review's mend (the cache's q rows through
# Model.qgRows): every engine/gpu GPU test and the default gate.
# carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
gpu_tests main
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
./bin/main/memra version
el done
