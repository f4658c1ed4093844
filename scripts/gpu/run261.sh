#!/usr/bin/env bash
# Session 38, main at the session's end (the engine as in session 37; step 93
# is on branch next/gdn-mixout): the decode, graph, kernel and profile GPU
# tests, the gates on 0.8B q8_0 and 9B q8_0, and bench graph tok/s at 1k on
# the four goal presets. carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "engine/gpu tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|KernelGDN|ProfileStepBytes|EarlyLoads|OmitParts' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
el "bench"
timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/b 2>/dev/null | grep -E '\| graph \||copy'
el done
