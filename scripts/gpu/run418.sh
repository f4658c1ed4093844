#!/usr/bin/env bash
# Session 74, step 127 as it lands (chunks of 32, each batch launch four
# passes of 8 tokens as its grid rows), built from c8dfbbb on the session's
# branch, whose fatbin held sm_90 only: the landed fatbin's sm_90 code
# (docs/results/h100-run418-sassdiff.txt):
# every engine/gpu GPU test, four gates, BenchmarkGPUPrefillChunk (chunks
# of 1 to 32 tokens) on the 0.8B bf16 and 9B q8_0 presets, and prime ms at
# P = 512 of old (main before step 127, chunks of 8) against new,
# alternated twice, on the 0.8B bf16, q8_0 and Q4_K and 9B q8_0 and bf16
# presets, on any GPU.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh old=16afdf8:bench new=c8dfbbb
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests new
synth new "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth new "9b" "q8_0 bf16"
SYNTH="$S0 $SYNTH"
wait_synth
el gates
gate new "$M/0.8b-bf16.gguf" 300 64 0
gate new "$M/0.8b-q4_k.gguf" 77 64 1
gate new "$M/9b-q8_0.gguf" 300 32 0
gate new "$M/9b-bf16.gguf" 77 32 1
for m in 0.8b-bf16 9b-q8_0; do
  el "BenchmarkGPUPrefillChunk $m"
  (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 150 "$R/bin/new/engine_gpu.test" -test.run '^$' \
    -test.bench 'GPUPrefillChunk/replay' -test.benchtime 10x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m /")
done
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf,$M/9b-bf16.gguf" old new old new
el done
