#!/usr/bin/env bash
# Session 32, docs/perf.md step 87: run209 found pring's staging of x' 3.8-4.3
# us a phase dearer than none; this times the same chain with no rows (the
# grid barrier and the staging alone) beside pring's forms again.
# carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error"
el "pring: checks, timed with 2 slots a warp, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
el done
