#!/usr/bin/env bash
# Session 37 (step 92), main at the session's end: every pring form checked
# and timed as in run253, with pring_hx_brm4 and pring_hx_brm4s also timed
# on the layer's chain without mixers (what their templates cost the other
# phases); the graph's nodes; the 0.8B chains' checks; main's decode tests
# and gate. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[lm]"
el "pring forms, the layer chain and the mixer"
timeout 300 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
el "the 0.8B chains' checks"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pfpre -types bf16,q8_0 2>&1 | grep -E "check|ab hbm pfpre(_q8)?(\/x8)? fence +blocks  132 stage true  dot true|rror"
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
