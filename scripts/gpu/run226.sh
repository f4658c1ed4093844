#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: pring_hx with its producer held from a
# phase's sums' end to the next phase's x staged (PRG_HOLD), checked (bit
# for bit against pring_hx) and timed beside the other forms, and traced;
# the graph nodes. carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring's forms: checks, timed with 2 slots a warp, traced, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
