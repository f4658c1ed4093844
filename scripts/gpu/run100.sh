#!/usr/bin/env bash
# Prepared in session 14 for the next GPU session (the session's device time
# ran out): what the final tree of session 14 has not run on the H200.
# Every GPU test (TestGPUGraphStopRunsAhead in its reviewed form: against
# eager steps, stops at 0, 37 and the last token; ContinueGraphFunc's
# synchronise on error paths; the sync-only token events), then gates on the
# 9B Q4_K and Q6_K presets, whose 4,096-row matrices take the wide kernels
# since step 45, and a 0.8B q8_0 gate with FP8 KV. Then the K-quant load
# times of main (bin/new) and branch next/tile-overlap (bin/tile: the next
# chunk tiled while this one copies), alternating, from bench's models table.
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# bench from a worktree of next/tile-overlap into /tmp/binall/tile/,
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
el "load times (models table: load s), new / tile alternating"
for b in new tile new tile; do
  d=/tmp/ld/$b-$(date +%s%N); mkdir -p $d
  timeout 150 ./bin/$b/bench -model $M/9b-q4_k.gguf,$M/9b-q6_k.gguf,$M/9b-q8_0.gguf -ctx 64 -reps 1 -tokens 8 -out $d > $d/out.txt 2>&1
  grep -E '^\| 9b-' $d/out.txt | grep -v ' graph \| eager ' | cut -d'|' -f2,4,5 | sed "s/^/$b /"
done
el done
