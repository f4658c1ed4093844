#!/usr/bin/env bash
# Session 37 (step 92): pring_hx_brm4, the mixer phase over four blocks a
# head (128 blocks share the state's traffic; the projection's staging
# applies each head's 1/rms), checked against float64 and timed and traced
# on the mixed chain beside pring_hx_brm (run251: its mixer phase 13 µs);
# every pring form as in run251; the graph's nodes. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[lm]"
el "pring forms, the layer chain and the mixer"
timeout 300 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el done
