#!/usr/bin/env bash
# Session 74: main after session 73's last two commits (ReplaySet moved
# into engine/cuda, prefill's per-chunk path choice), which ran on no GPU:
# every engine/cuda and engine/gpu GPU test, then gates on main's own
# binary (0.8B bf16 and 9B q8_0, f16 and FP8 KV), on any GPU.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main
# plus bin/main/engine_cuda.test (go test -c ./engine/cuda), repacked.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
el "engine/cuda GPU tests"
(cd engine/cuda && timeout 120 "$R/bin/main/engine_cuda.test" -test.run 'GPU' -test.v > "$OUT/cudatest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/cudatest.txt" | grep -v "^    --- PASS"
gpu_tests main
synth main "0.8b 9b" "bf16 q8_0"
wait_synth
el gates
gate main "$M/0.8b-bf16.gguf" 300 64 0
gate main "$M/0.8b-q8_0.gguf" 77 64 1
gate main "$M/9b-q8_0.gguf" 300 32 0
gate main "$M/9b-bf16.gguf" 77 32 1
el done
