#!/usr/bin/env bash
# Session 36 (step 91): pring_hx_brc8, pring_hx_brc testing its cap once a
# round of 8 units (caps 8, 12, 16, 24) instead of before each copy (run249:
# pring_hx_brc's test a unit cost the stream 18% at every cap), checked,
# timed and traced beside every form at 2 slots, the layer chain again; the
# graph's nodes; and pring_hx_brr and pring_hx_brlr (a down phase's residuals
# loaded at its start) on the FFN and layer chains. carry ["bin"]. ~1.5 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[cr8l]"
el "pring forms and the layer chain"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el done
