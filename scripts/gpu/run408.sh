#!/usr/bin/env bash
# Session 73: every engine/cuda and engine/gpu GPU test on main after
# step 125 (chunk graphs on by default), on any GPU, and two gates.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,gate,engine_gpu.test
# plus bin/main/engine_cuda.test (go test -c ./engine/cuda), repacked.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth main "0.8b" "q4_k"
el "engine/cuda GPU tests"
(cd engine/cuda && timeout 120 "$R/bin/main/engine_cuda.test" -test.run 'GPU' -test.v > "$OUT/cudatest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/cudatest.txt" | grep -v "^    --- PASS"
gpu_tests main
wait_synth
el gates
gate main "$M/0.8b-q4_k.gguf" 300 64 0
gate main "$M/0.8b-q4_k.gguf" 77 64 1
el done
