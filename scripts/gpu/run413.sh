#!/usr/bin/env bash
# Session 73: the review's mends to step 125 (engine/cuda replay.go,
# engine/gpu chunkReplay): every engine/cuda GPU test and the prefill,
# replay and profile tests of engine/gpu, on any GPU.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh new=mends:engine_gpu.test
# plus bin/new/engine_cuda.test (go test -c ./engine/cuda), repacked.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
(cd engine/cuda && timeout 60 "$R/bin/new/engine_cuda.test" -test.run 'GPU' -test.v > "$OUT/cudatest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic|replay_gpu_test" "$OUT/cudatest.txt" | grep -v "^    --- PASS"
run_tests new 'PrefillReplay|PrefillMatchesTokenFeed|ProfilePrefill|SessionFeed'
el done
