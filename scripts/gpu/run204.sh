#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: pfeed and pfpre with 1, 2 and 4 producer
# warps (is one producer warp what holds the stream at ~3 µs a phase?),
# each checked bit for bit, timed whole and with x's staging or the sums
# left out, beside pchain; then the graph nodes of the same two shapes.
# carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain, pfeed and pfpre timed"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pfeed,pfpre -producers 1,2,4
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
