#!/usr/bin/env bash
# Session 74: the review mends to step 127 (bench -profile's event cap
# 4,095; a chunk of 1 refused): engine/gpu's profile, prefill and graph
# tests of main, on any GPU.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests main 'Profile|PrefillReplay|PrefillMatchesTokenFeed|GraphEqualsEager|SessionFeed'
el done
