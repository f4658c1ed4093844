#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: pring_hx's epilogue reads the block's
# outputs from shared memory (prg_out) instead of back from the L2, which
# run222's trace put at 2.3-2.9 µs a phase; with the review's fixes to the
# checks (NaN sums fail, 7 phases compare the int8 copies too, no tie
# allowance for x·w). Checked, timed with 2 slots a warp, traced, no rows;
# the graph nodes; then main's decode tests and gate. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring, pring_hq, pring_hx: checks, timed with 2 slots a warp, traced, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el "the 0.8B chains' checks"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pfpre -types bf16,q8_0 2>&1 | grep -E "check|ab hbm pfpre(_q8)?(\/x8)? fence +blocks  132 stage true  dot true|rror"
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
