#!/usr/bin/env bash
# Session 35, docs/perf.md step 90: pring_hx_br again (its second run) and
# pring_hx_br_trace, step 88's stamps on it beside pring_hx_er's: every
# form checked and timed with 1 and 2 slots a warp, the traces, the graph
# nodes. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_(er|br)(_trace)?'"
el "pring forms: checks, timed with 1 and 2 slots a warp, traced, then with no rows"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 1,2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
