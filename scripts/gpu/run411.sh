#!/usr/bin/env bash
# Session 73: right after run410 on the same H200, main's (after step
# 125) prefill, replay, graph and session tests and BenchmarkGPUPrefillHost.
source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; run_tests main 'PrefillReplay|PrefillMatchesTokenFeed|GraphEqualsEager|SessionEqualsEager|ProfilePrefill'; el host; (cd engine/gpu && timeout 60 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench 'GPUPrefillHost' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|FAIL|panic'); el done
