#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: pchain.cu after its refactor (one norm
# reduction, one producer-kernel body; the same SASS under nvcc 11.8)
# compiled by nvcc 13: every kernel's checks, and pfpre and pchain timed
# once more beside the graph nodes. carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain and pfpre timed"
timeout 150 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pfpre
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
