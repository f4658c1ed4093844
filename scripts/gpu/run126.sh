#!/usr/bin/env bash
# Session 17, step 55: run125's lane-ordered scale words in the wide q8_0
# kernel only (the narrow kernel as main's), timing only (the upload is
# unchanged, so outputs are wrong): bin/jtw unbounded with the tail batch
# (128 registers), bin/jt4 bounded to 4 blocks an SM without the tail batch
# (64 registers, no spill; the 4,096-row matrices' 512 units in one wave,
# as run120's nos). bin/old = main. Graph chains of the q8_0 shapes, bench
# at 1k on 9B and 0.8B q8_0 in rotation. Build (here): bench and
# engine_gpu.test of each; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth old "0.8b 9b" "q8_0"
for b in old jtw jt4; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024 old jtw jt4 old jtw jt4
el done
