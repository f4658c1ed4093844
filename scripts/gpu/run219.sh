#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: pring_hx's PRG_PERM now stores both
# matrices in the order the grid takes their units (run218 grouped the
# down rows only); checked as in run218 and timed with 1 and 2 slots a
# warp beside pring and pring_hq. carry ["bin"]. ~40 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring, pring_hq, pring_hx: checks, timed with 1 and 2 slots a warp, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 1,2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
