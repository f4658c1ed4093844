#!/usr/bin/env bash
# Session 32, docs/perf.md step 87: the persistent FFN chain in q8_0
# (pfeed_q8, pfreg_q8, pfpre_q8: the 0.8B q8_0 FFN shapes, each checked
# against float64 and bit for bit against pfeed_q8), timed whole and with
# x's staging or the sums left out, beside bf16's pchain, pfreg and pfpre; then
# the graph nodes of the same shapes in both types; then main's gate and
# decode tests (kernels/common.cuh changed; the fatbin is byte-identical).
# carry ["bin"]. ~4 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g'
el "pchain: checks, then pchain, pfreg and pfpre timed in bf16 and q8_0"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2 -time pchain,pfreg,pfpre -types bf16,q8_0
chain main '(BF16|Q8_0)/(7168x1024|1024x3584)/.*/graph'
el "engine/gpu tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|KernelMatvec' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
