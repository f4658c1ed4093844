#!/usr/bin/env bash
# Session 31, docs/perf.md step 86: pdeep (each warp's units of the next two
# phases copied into its own shared-memory slots with cp.async) against
# pchain (register prefetch, 132 and 264 blocks) on the 0.8B bf16 FFN chain,
# whole and with x's staging or the sums left out; then the engine's graph
# nodes of the same two shapes. pchain.cu needs PTX 8.0 (pstream), so it is
# compiled here with nvcc 13. bin/main = pchain and engine_gpu.test of the
# working tree. carry ["bin"]. ~3 minutes.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill"
el "pchain: checks, then pchain and pdeep timed"
timeout 150 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pdeep
chain main 'BF16/(7168x1024|1024x3584)/.*/graph'
el done
