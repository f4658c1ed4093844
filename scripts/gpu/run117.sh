#!/usr/bin/env bash
# Session 16: the graph-against-session tests (sampled, penalty) through one
# helper (duplicates found them written twice). Every GPU test.
# Build (here): engine_gpu.test only; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
gpu_tests new
el done
