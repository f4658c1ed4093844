#!/usr/bin/env bash
# Session 28: main at 0b1bfc9 (the cache's KV element size through
# kvElemBytes, shared with the profile): the ProfileStep tests, decode
# against the CPU, graph and session against eager, and a gate with FP8 KV
# on 0.8B q8_0. bin/main. carry ["bin"]. ~2 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'ProfileStep|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|KernelAttention' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |    --- |ok|FAIL|PASS)|panic")
wait_synth
gate main $M/0.8b-q8_0.gguf 300 256 1
el done
