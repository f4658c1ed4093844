#!/usr/bin/env bash
# Session 33, docs/perf.md step 88: pring_hx, the 9B q8_0 FFN with the
# gate|up phases' x' quantised once too, by the down phases' blocks (x·w
# in int8 per 32 and its sums of squares; 1/rms after the sums), on down
# matrices stored row by row and by groups (PRG_PERM). Checked against
# float64 (x's int8 exactly), bit for bit across ring depths and layouts,
# timed beside pring and pring_hq, with no rows; the graph nodes of the
# same shapes; then main's gate and decode tests. carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring"
el "pring, pring_hq, pring_hx: checks, timed with 2 slots a warp, then with no rows"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288)/.*/graph'
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
