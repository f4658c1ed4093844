#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: PRG_PERM with the walk's group counts
# worked out once a phase in the producer instead of once a unit (in
# run219 pring_hx on the matrices in the grid's order streamed 17% slower
# than on them in plain order); checked and timed with 2 slots a warp.
# carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring, pring_hq, pring_hx: checks, timed with 2 slots a warp, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
el done
