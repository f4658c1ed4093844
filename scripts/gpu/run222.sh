#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: where pring_hx's phase goes, stamped
# by pring_hx_trace (clock64 at each stage of a phase in every block, the
# warps' waits on their slots, the producer's copies and waits), after the
# checks and timings of run220. carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring, pring_hq, pring_hx: checks, timed with 2 slots a warp, traced, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
