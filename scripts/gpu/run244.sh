#!/usr/bin/env bash
# Session 35, docs/perf.md step 90: one FFN a launch (2 phases, the chain's
# FFNs in turn, back to back on the stream) for pring_hx, pring_hx_er and
# pring_hx_br, beside the 64-phase chain and the graph's nodes: what the
# persistent FFN costs where a launch holds one layer's FFN. Every form
# checked and timed with 2 slots a warp. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_(er|br)'"
el "pring forms: checks, timed with 2 slots a warp, one FFN a launch, traced, then with no rows"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
