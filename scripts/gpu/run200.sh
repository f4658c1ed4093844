#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: pfreg (pfeed with each warp's units of
# the next phase moved from its slot into registers between arriving at the
# grid barrier and waiting on it) beside pfeed and pchain, whole and with
# x's staging or the sums left out; then the engine's graph nodes of the
# same two shapes. The checks now compare 7 phases of every kernel with
# pchain's bits, h filled with NaNs first. carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain, pfeed and pfreg timed"
timeout 150 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pfeed,pfreg
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
