#!/usr/bin/env bash
# Session 72: is the 0.8B's priming bound by the host? BenchmarkGPUPrefillHost
# (host µs a launch of a prefill chunk, µs a chunk, on a tiny model with the
# 0.8B's 24 layers), twice, with a CPU profile of the host ($OUT/cpu.out,
# for go tool pprof here). carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:bench,engine_gpu.test
# ~1 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E 'Model name|^CPU\(s\)|MHz' | head -4
el "BenchmarkGPUPrefillHost"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench 'GPUPrefillHost' -test.benchtime 40x -test.count 2 -test.cpuprofile "$OUT/cpu.out" 2>&1 | grep -E '^Bench|ok|FAIL|panic')
el done
