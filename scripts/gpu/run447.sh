#!/usr/bin/env bash
# Session 79, PREPARED, NOT RUN (no machine came, then the device time
# was spent) (`bash scripts/gpu/run447.sh`): the screen kernel test after
# the review's mends (a tie across the top k's edge, the top k all in one
# chunk of 18 so that the threshold falls below the k-th largest lower
# bound, unwritten rows told from NaN ones, most rows left out where the
# bounds are finite). ~1 minute. carry ["bin"]; bin/t/engine_gpu.test from
# `CGO_ENABLED=0 go test -c -ldflags=-s ./engine/gpu` of the working tree.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
el "screen tests (t)"
(cd engine/gpu && timeout 200 "$R/bin/t/engine_gpu.test" -test.run 'LogitsScreen' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|candidates|panic|_test.go' | grep -v '^    --- PASS')
el done
