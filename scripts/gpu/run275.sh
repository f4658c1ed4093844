#!/usr/bin/env bash
# Session 41, main's final binaries (the graph-stop tests share graphUntil;
# docs and CLI help changes): every engine/gpu GPU test, the gate on the
# built-in default model and on 0.8B q8_0 (f16 and FP8 KV), 24 greedy
# tokens cuda against cpu. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
gpu_tests main
wait_synth
el "gates"
echo "gate default: $(timeout 120 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -2 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/0.8b-q8_0.gguf" 300 128 1
greedy main "$M/0.8b-q8_0.gguf"
el done
