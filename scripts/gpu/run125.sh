#!/usr/bin/env bash
# Session 17, step 55: half the q8_0 scale loads without changing the
# weight stream (run122's pairs changed both). Timing only: bin/jt reads,
# per row and trip, one 4-byte word at a lane's j-major index
# ((c0/2)*Tp + t: the layout an upload would write so a lane's scales for
# trips t, t+1 sit side by side); the upload is unchanged, so the outputs
# are wrong. bin/old = main. Graph chains of the q8_0 shapes, bench at 1k
# on 9B and 0.8B q8_0 in rotation. Build (here): bench, memra and
# engine_gpu.test of each; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth old "0.8b 9b" "q8_0"
for b in old jt; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024 old jt old jt
el done
