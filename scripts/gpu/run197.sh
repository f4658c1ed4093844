#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: run196 again with pdeep's grid barrier
# arrived at by a ninth warp that copies nothing (run196's arrival fenced
# in a copying warp, and its copies and barrier added up), in three forms of
# arrival (fence + atomicAdd, red.release, relaxed: timing only). carry
# ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain and pdeep timed"
timeout 150 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pdeep
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
