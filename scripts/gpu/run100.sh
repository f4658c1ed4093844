#!/usr/bin/env bash
# Prepared in session 14 for the next GPU session (the session's device time
# ran out): what the final tree of session 14 has not run on the H200.
# Every GPU test (TestGPUGraphStopRunsAhead in its reviewed form: against
# eager steps, stops at 0, 37 and the last token; ContinueGraphFunc's
# synchronise on error paths; the sync-only token events), then gates on the
# 9B Q4_K and Q6_K presets, whose 4,096-row matrices take the wide kernels
# since step 45, and a 0.8B q8_0 gate with FP8 KV.
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "q8_0 q4_k q6_k"
gpu_tests new
wait $SYNTH
el "gates"
gate new $M/9b-q4_k.gguf 64 400 1
gate new $M/9b-q6_k.gguf 300 400 0
gate new $M/0.8b-q8_0.gguf 300 600 1
el done
