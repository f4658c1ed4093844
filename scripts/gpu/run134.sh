#!/usr/bin/env bash
# Session 19: every engine/gpu GPU test on bin/new2 (next/attn-8warp-fp8,
# the tree merged into main as e1e5eee), in the device minutes run133 left.
# carry ["bin"] (run133's bin.txz).
set -u
source scripts/gpu/lib.sh
start_run
gpu_tests new2
el done
