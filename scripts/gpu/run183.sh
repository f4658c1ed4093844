#!/usr/bin/env bash
# Session 28, perf.md step 82: engine/internal/barload, a grid barrier alone
# and beside blocks that stream from HBM or from the L2 on the same SMs
# (barload.cubin built here with nvcc 11.8 for sm_90). bin/main.
# carry ["bin"]. ~1 minute. (It ran barload before its -active flag: every
# thread of a streamer block reads, as -active 1024 does now.)
set -u
source scripts/gpu/lib.sh
start_run
el "barload, 2000 barriers"
timeout 120 ./bin/main/barload -cubin bin/main/barload.cubin
el "barload, 500 barriers"
timeout 60 ./bin/main/barload -cubin bin/main/barload.cubin -barriers 500 -reps 3
el done
