#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: what pring_hx's epilogue (warp 0
# quantising the block's groups after the sums) costs its phase: timed and
# traced whole, without the epilogue (PRG_NO_EPI) and with it but without
# its stores (PRG_NO_QSTORE), both timing only; after the usual checks.
# carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring, pring_hq, pring_hx: checks, timed with 2 slots a warp, traced (whole, no epilogue, no epilogue stores), then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el done
