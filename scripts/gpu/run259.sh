#!/usr/bin/env bash
# Session 38 (step 93): gdn_mixout with its serial L2 chains cut (the last
# block's partials and the norm's block sums loaded before they are added,
# four output rows a thread at once). Its kernel test; bench -profile of
# gdn_mixout alone; bench graph tok/s at 1k with MEMRA_GDN_MIXOUT=0 and =1
# alternating; the gates. carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "engine/gpu tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'GDNMixout|DecodeMatchesCPU|GraphEqualsEager|ProfileStepBytes|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | head -30
wait_synth
el "bench -profile 8, MEMRA_GDN_MIXOUT=1"
MEMRA_GDN_MIXOUT=1 timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/prof 2>/dev/null | grep -E "gdn_mixout|\| graph \|"
mkdir -p /tmp/bn
for mode in 0 1 0 1; do
  el "bench MEMRA_GDN_MIXOUT=$mode"
  d=/tmp/bn/mix$mode-$(date +%s%N); mkdir -p "$d"
  MEMRA_GDN_MIXOUT=$mode timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
