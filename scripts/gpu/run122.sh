#!/usr/bin/env bash
# Session 17, step 55: q8_0 scales in pairs (one 4-byte load for two
# 16-byte loads: a lane takes chunk c of a row's first half with chunk
# c + nb of its second). Timing only: the upload still stores the scales
# unpaired, so these outputs are wrong. bin/pr = the paired loop (the
# unpaired one kept for other widths: 126 registers in the wide kernel),
# bin/pro = the paired loop alone (111), bin/nos and bin/old as in run120.
# Graph chains of the q8_0 shapes, bench at 1k on 9B and 0.8B q8_0 in
# rotation. Build (here): bench and engine_gpu.test of each; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth old "0.8b 9b" "q8_0"
for b in old nos pr pro; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024 old nos pr pro old nos pr pro
el done
