#!/usr/bin/env bash
# Session 32, docs/perf.md step 87: pring, the 9B q8_0 FFN as one persistent
# kernel whose consumer warps each take their units from a ring of 1 or 2
# slots that a producer warp fills across phases (x' in int8, dp4a),
# checked against float64 and 1 slot against 2 bit for bit; then the graph
# nodes of the same shapes; then the 0.8B checks again (pd_fill changed).
# carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring|_q8"
el "pring: checks, then timed with 1 and 2 slots a warp"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 1,2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el "the 0.8B checks, pfpre and pfpre_q8 timed"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1 -time pfpre -types bf16,q8_0 | grep -E "check|ab hbm"
el done
