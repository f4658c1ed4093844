#!/usr/bin/env bash
# Session 49, main with MEMRA_PDL and MEMRA_L2WINDOW read through one parser
# (engine/cuda switchFromEnv): every engine/cuda and engine/gpu GPU test,
# the default gate, a gate on 0.8B Q4_K, and the env switches' errors.
# carry ["bin"]. ~6 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q4_k"
el "cuda GPU tests"
(cd engine/cuda && timeout 90 "$R/bin/main/engine_cuda.test" -test.run 'GPU|FromEnv' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|L2 |panic' | head -30)
gpu_tests main
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "gate 0.8B q4_k P=64 N=256"
timeout 150 ./bin/main/gate "$M/0.8b-q4_k.gguf" > "$OUT/gate-q4k.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-q4k.txt" | head -2 | tr '\n' ' ')"
el "env switches"
MEMRA_PDL=2 ./bin/main/gate > /dev/null 2> "$OUT/pdl.txt"; echo "  MEMRA_PDL=2 rc $?: $(head -c 300 "$OUT/pdl.txt")"
MEMRA_L2WINDOW=on ./bin/main/gate > /dev/null 2> "$OUT/l2.txt"; echo "  MEMRA_L2WINDOW=on rc $?: $(head -c 300 "$OUT/l2.txt")"
./bin/main/memra version
el done
