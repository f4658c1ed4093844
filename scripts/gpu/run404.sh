#!/usr/bin/env bash
# Session 73, step 125's question: is a prefill chunk still the host's
# after step 124? BenchmarkGPUPrefillChunkGraph on real synth models: a
# chunk of 8 at position 0 eager (what prefill pays) and as one captured
# graph replayed (its GPU time alone), then main's priming at P = 512.
# Any GPU. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth main "0.8b" "bf16 q8_0 q4_k"
SYNTH0=$SYNTH
synth main "9b" "q8_0"
SYNTH="$SYNTH0 $SYNTH"
wait_synth
for m in 0.8b-bf16 0.8b-q8_0 0.8b-q4_k 9b-q8_0; do
  for r in 1 2; do
    el "chunk graph $m round $r"
    (cd engine/gpu && MEMRA_BENCH_MODEL=$M/$m.gguf timeout 120 "$R/bin/main/engine_gpu.test" -test.run '^$' \
      -test.bench 'PrefillChunkGraph' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|FAIL|panic')
  done
done
el done
