#!/usr/bin/env bash
# Session 32, docs/perf.md step 87: pring_hq, h quantised once by the blocks
# that write it, as a kernel of its own (in run214 it was a flag of pring's,
# and nvcc 13 spilled 56 bytes in both forms); its groups of 32 outputs
# dealt to the blocks in turn. Checked against float64 and bit for bit
# against pring, timed beside it, and both chains with no rows.
# carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring and pring_hq: checks, timed with 2 slots a warp, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
el done
