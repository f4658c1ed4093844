#!/usr/bin/env bash
# Session 32, docs/perf.md step 87: the q8_0 persistent FFN with its sums
# on x' quantised to int8 (PQ_X8: dp4a), after run207 found the f32 sums
# ~1 us a phase on the chain's critical path; each form checked against
# float64 and bit for bit against pfeed_q8 in the same form. carry ["bin"].
# ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|_q8|pfpre"
el "pchain: checks, then pfreg and pfpre timed in q8_0, x' in f32 and in int8"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1 -time pfreg,pfpre -types q8_0
chain main 'Q8_0/(7168x1024|1024x3584)/.*/graph'
el done
