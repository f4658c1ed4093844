#!/usr/bin/env bash
# Session 35, docs/perf.md step 90: pring_hx_brs (pring_hx_br with x'
# staged by bulk copies from thread 0 instead of 16-byte loads from every
# thread), checked bit for bit against pring_hx with 1 slot and timed beside
# every form with 2 slots a warp; pring_hx_br and pring_hx_brs traced; the
# graph nodes. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_(er|br|brs)(_trace)?'"
el "pring forms: checks, timed with 2 slots a warp, traced, then with no rows"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
