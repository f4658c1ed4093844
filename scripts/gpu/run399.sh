#!/usr/bin/env bash
# Session 72: main after the review's mends (the profile and prefill GPU
# tests refactored onto shared checks; BenchmarkGPUPrefillHost counting the
# whole prompt's launches): those tests, then BenchmarkGPUPrefillHost of
# old (7dda177, before the kernel tables were indexed) and main alternated
# twice with nothing else on the host (run397's ran beside synth jobs).
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:engine_gpu.test old=7dda177:engine_gpu.test
# ~1 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run_tests main 'TestGPUProfile|TestGPUPrefillMatchesTokenFeed'
for b in old main old main; do
  el "BenchmarkGPUPrefillHost ($b)"
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUPrefillHost' -test.benchtime 40x 2>&1 | grep -E '^Bench' | sed "s/^/$b /")
done
el done
