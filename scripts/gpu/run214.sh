#!/usr/bin/env bash
# Session 32, docs/perf.md step 87: run213 again with PRG_HQ's groups of h dealt
# to the blocks in turn (run213 gave each block whole groups, contiguous, and
# the stream slowed by 45%). pring with h quantised once, by the
# blocks that write it (PRG_HQ: a block's gate|up units are whole groups of
# 32 outputs, which it quantises after its sums; the down phase copies h in
# int8 instead of staging and quantising all of it in every block), checked
# against float64 and bit for bit against pring without it; timed beside
# it, and the same chains with no rows. carry ["bin"]. ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring: checks, timed with 2 slots a warp with and without PRG_HQ, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
el done
