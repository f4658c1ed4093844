#!/usr/bin/env bash
# Session 37 (step 92): pring_hx_brm4s, pring_hx_brm4 with each warp's 4
# rows of state copied into its ring by the producer ahead of the mixer
# phase (run252: pring_hx_brm4's loads after the barrier, ~4 µs a phase
# under the stream), checked against float64 and bit for bit against
# pring_hx_brm4, timed and traced on the mixed chain beside pring_hx_brm
# and pring_hx_brm4; every pring form as in run252; the graph's nodes.
# carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[lm]"
el "pring forms, the layer chain and the mixer"
timeout 300 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el done
