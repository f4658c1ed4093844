#!/usr/bin/env bash
# Session 36 (step 91): pring_hx_brl and pring_hx_brlp, pring_hx_br taking
# the 9B output projection (4096 × 4096, kind 7) as a down phase: every
# pring form checked and timed at 2 slots (brl bit for bit against
# pring_hx on the FFN chain), then runLayer: the layer's chain (gate|up,
# down, projection) checked against float64 and timed, a layer's tail a
# launch with and without PDL; the graph's nodes of the three shapes.
# carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br"
el "pring forms and the layer chain"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el done
