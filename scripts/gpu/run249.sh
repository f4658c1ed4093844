#!/usr/bin/env bash
# Session 36 (step 91): pring_hx_brl and pring_hx_brlp, pring_hx_br taking
# the 9B output projection (4096 × 4096, kind 7) as a down phase: every
# pring form checked and timed at 2 slots (brl bit for bit against
# pring_hx on the FFN chain), then runLayer: the layer's chain (gate|up,
# down, projection) checked against float64, timed and traced, a layer's
# tail a launch with and without PDL; pring_hx_brc (a cap of 6, 9, 12,
# 16 or 24 units in flight a block) checked, timed and traced on the FFN
# chain; the graph's nodes of the three
# shapes; then, as run235, the 0.8B chains' checks, main's decode tests and
# gate (machines were scarce this session: one call does it all).
# carry ["bin"]. ~1.5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br"
el "pring forms and the layer chain"
timeout 240 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el "the 0.8B chains' checks"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pfpre -types bf16,q8_0 2>&1 | grep -E "check|ab hbm pfpre(_q8)?(\/x8)? fence +blocks  132 stage true  dot true|rror"
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
