#!/usr/bin/env bash
# Session 40: main with the NaN-logits change (argmax_final and sample_draw
# write kernels.NoToken when every logit is NaN; the host reads out[0] and
# fails with model.ErrNaNLogits) and step 95's final column-bound rule.
# Every engine/gpu GPU test; gates on 0.8B q8_0, 9B q8_0 and 27B q8_0 (the
# column bound's presets: 0.8B back on its plain kernels at 5,120 rows);
# bench graph and sampled at 1k on 0.8B q8_0, base (main before the
# change, f97946f) and main alternating. carry ["bin"]. ~6-8 min.
set -u
source scripts/gpu/lib.sh
start_run
el "synth 0.8b, 9b and 27b q8_0 (kept where the machine has them)"
synth main "0.8b 9b 27b" "q8_0"
gpu_tests main
grep -E "^(--- |=== RUN).*(NaN|Argmax|SampleDraw)" "$OUT/gputest.txt" | head -12
wait_synth
el "gates"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
gate main "$M/27b-q8_0.gguf" 64 64 0
greedy main "$M/0.8b-q8_0.gguf"
mkdir -p /tmp/bn
for b in base main base main; do
  el "bench 0.8b-q8_0 1k ($b)"
  d=/tmp/bn/$b-$(date +%s%N); mkdir -p "$d"
  timeout 60 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| (graph|sampled) \|' | cut -d'|' -f2,4,5,6,9,13
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
