#!/usr/bin/env bash
# Session 37 (step 92): pring_hx_brm4_trace with thread 0's stamps inside
# the mixer phase (q and k staged, kv summed, o summed, outputs in shared
# memory), to split its ~4.2 µs of work (runs 252-255) between its loads
# under the ring's stream and its arithmetic; every pring form as in
# run255; the graph's nodes. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[lm]"
el "pring forms, the layer chain and the mixer"
timeout 300 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el done
