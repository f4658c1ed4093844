#!/usr/bin/env bash
# Session 16: run115's TestGPUGraphPenaltyEqualsSession failed only its
# check that a penalty of 1.3 changes the tiny model's greedy stream (the
# device and host streams were equal; the penalty never reached the argmax);
# the test now also runs a penalty of 0.01, which must. Every GPU test.
# Build (here): engine_gpu.test only, as run111; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
gpu_tests new
grep -A3 "RUN   TestGPUGraphPenaltyEqualsSession" "$OUT/gputest.txt" | head -5
el done
