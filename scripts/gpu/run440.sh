#!/usr/bin/env bash
# Session 78, step 132's end-to-end test (`bash scripts/gpu/run440.sh`):
# TestGPUScreenedGreedyEqualsFull (screened greedy graph tokens against
# eager's and against a FullLogits load, bf16 and f16, tied and not, a
# 3,000-row matrix whose copy takes the wide q8_0 kernel) and the screen's
# kernel test. ~1 minute. carry ["bin"]; bin/new/engine_gpu.test from
# `CGO_ENABLED=0 go test -c -ldflags=-s ./engine/gpu` of the working tree.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests new 'ScreenedGreedyEqualsFull|LogitsScreen'
el done
