#!/usr/bin/env bash
# Session 45: Load and tiledLaunches now share one list of each layer's
# fusions (model.go fusions), no kernel changed. The checks of run286, which
# exercise the fused matrices' kernels: every engine/gpu and engine/cuda
# GPU test, gates (default, 0.8B q8_0, 0.8B and 9B Q4_K), greedy cuda == cpu
# on 0.8B Q4_K, a bad MEMRA_ATTN_MMA refused (exit 2), bench at 1k on 0.8B
# q8_0 and 0.8B/9B Q4_K against run271. carry ["bin"]. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k"
synth_k=$SYNTH
synth main "0.8b" "q8_0"
SYNTH="$SYNTH $synth_k"
./bin/main/memra version
gpu_tests main
el "engine/cuda tests"
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el gates
echo "gate default: $(timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 64 256 0
gate main "$M/0.8b-q4_k.gguf" 64 256 0
gate main "$M/9b-q4_k.gguf" 64 256 0
MEMRA_ATTN_MMA=yes ./bin/main/gate default 8 8 2>&1 | head -2; echo "MEMRA_ATTN_MMA=yes: rc ${PIPESTATUS[0]}"
el "greedy 0.8b-q4_k"
greedy main "$M/0.8b-q4_k.gguf"
el "bench"
./bin/main/bench -model "$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out /tmp/b -compare docs/results/h200-run271.json 2>&1 | grep -E 'results in|\| graph \||geomean' | cut -c1-200
el done
