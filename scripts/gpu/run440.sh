#!/usr/bin/env bash
# Session 78, step 132's end-to-end test (`bash scripts/gpu/run440.sh`):
# TestGPUScreenedGreedyEqualsFull (screened greedy graph tokens against
# eager's and against a FullLogits load, bf16 and f16, tied and not, a
# 3,000-row matrix whose copy takes the wide q8_0 kernel) and the screen's
# kernel test (since the review's mend, its overflowing winner too: the
# unbounded rule for c*|x'|_1 >= (2*cols + 32)*2^102, not yet run on a GPU).
# ~1 minute. carry ["bin"]; bin/new/engine_gpu.test from
# `CGO_ENABLED=0 go test -c -ldflags=-s ./engine/gpu` (main after the mend:
# `bash scripts/gpu/bins.sh new=main:engine_gpu.test` does the same).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests new 'ScreenedGreedyEqualsFull|LogitsScreen'
el done
