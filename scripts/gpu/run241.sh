#!/usr/bin/env bash
# Session 35, docs/perf.md step 90: pring_hx_br (pring_hx_er with each
# warp's 2 slots as one ring of bytes: 3 gate|up units in flight a warp, 2
# down rows), checked bit for bit against pring_hx with 1 slot and timed
# beside every form with 1 and 2 slots (br with 2 only); the graph nodes;
# ncu on pring_hx_er and pring_hx_br. carry ["bin"]. ~1.5 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_(er|fr|br)'"
el "pring forms: checks, timed with 1 and 2 slots a warp, traced, then with no rows"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 1,2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
ncu_ring pring_hx_er pring_hx_br
el done
