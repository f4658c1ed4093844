#!/usr/bin/env bash
# Session 37 (step 92): pring_hx_brm4n, pring_hx_brm4 with the mixer a call
# compiled apart (run254: the mixer's templates made the other phases 1.9
# µs a layer slower, in their sums and staging), checked bit for bit
# against pring_hx_brm4, timed with and without mixer phases beside
# pring_hx_brl, pring_hx_brm4 and _brm4s, traced; every pring form as in
# run254; the graph's nodes. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[lm]"
el "pring forms, the layer chain and the mixer"
timeout 300 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el done
