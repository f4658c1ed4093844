#!/usr/bin/env bash
# Session 32: main at the session's end on the H200, after the last review's fixes (pq_xd aligned, all of h NaN-filled before a checked pring launch): a gate on the 0.8B q8_0
# preset, the engine/gpu decode-against-CPU and graph-equals-eager tests,
# and pchain's checks (pchain.cu compiled by nvcc 13). carry ["bin"].
# ~3 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error" 
el "pchain checks"
timeout 120 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pfpre -types bf16,q8_0 2>&1 | grep -E "check|ab hbm pfpre(_q8)?(\/x8)? fence +blocks  132 stage true  dot true|rror"
timeout 120 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2 2>&1 | grep -E "check|rror|ab hbm pring.*stage true  dot true"
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
