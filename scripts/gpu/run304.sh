#!/usr/bin/env bash
# Session 48, main at its end: the cuda GPU tests (TestGPUL2Window after its
# checks moved into a helper), the L2 hold and decode tests of engine/gpu,
# and the default gate. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
el "cuda GPU tests"
(cd engine/cuda && timeout 90 "$R/bin/main/engine_cuda.test" -test.run 'GPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|L2 |panic' | grep -v -- '--- PASS: TestGPU[^L]' | head -20)
el "engine/gpu decode tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'L2|GraphEqualsEager|SessionEqualsEager' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | head -20)
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
./bin/main/memra version
el done
