#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: what the grid barrier costs pfpre, by
# its arrival: fence + atomicAdd (run201's), red.release, a relaxed
# atomicAdd and no barrier at all (the last two time a wrong result), whole
# and with x's staging or the sums left out, beside pchain; then the
# engine's graph nodes of the same two shapes. carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain and pfpre timed"
timeout 150 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pfpre -arrive fence,red,relaxed,nobar
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
