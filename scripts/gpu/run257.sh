#!/usr/bin/env bash
# Session 38 (step 93): gdn_mixout, a Gated DeltaNet layer's conv, delta
# rule, gated norm and output projection in one kernel. Its kernel test
# against the four kernels, the decode, graph, profile and early-load tests;
# the gate; then bench graph tok/s at 1k with MEMRA_GDN_MIXOUT=0 (the four
# kernels) and =1 alternating on one machine. carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "engine/gpu tests"
(cd engine/gpu && timeout 240 "$R/bin/main/engine_gpu.test" -test.run 'GDNMixout|DecodeMatchesCPU|GraphEqualsEager|ProfileStepBytes|EarlyLoads|OmitParts|KernelGDN' -test.v -test.timeout 230s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|x error" "$OUT/gputest.txt" | head -60
wait_synth
el "gate"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
mkdir -p /tmp/bn
for mode in 0 1 0 1; do
  el "bench MEMRA_GDN_MIXOUT=$mode"
  d=/tmp/bn/mix$mode-$(date +%s%N); mkdir -p "$d"
  MEMRA_GDN_MIXOUT=$mode timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf,$M/9b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
