#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: run197 again with pdeep's ninth warp
# arriving at the grid barrier before the copies of phase p + 2 are issued
# (in run197 it arrived after them, and the copies and the barrier still
# added up), in the same three forms of arrival. carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain and pdeep timed"
timeout 150 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pdeep
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
