#!/usr/bin/env bash
# Session 73, step 126: gdn_conv_chunk with a chunk's inputs all loaded
# before its first output (scripts/gpu/patches/prefill/conv-all.patch)
# against main. On any GPU: the conv chunk and prefill tests on conv, prime
# ms at P = 512 alternated twice, BenchmarkGPUPrefillChunk on each, a gate.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:bench,engine_gpu.test \
#     conv=main+scripts/gpu/patches/prefill/conv-all.patch:memra,bench,gate,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth conv "0.8b" "bf16 q4_k"
S0=$SYNTH
synth conv "9b" "q8_0"
SYNTH="$S0 $SYNTH"
run_tests conv 'GDNConvChunk|GDNConv$|PrefillMatchesTokenFeed|PrefillReplay|ProfilePrefill'
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" main conv main conv
for m in 0.8b-bf16 9b-q8_0; do
  for b in main conv; do
    el "BenchmarkGPUPrefillChunk $m ($b)"
    (cd engine/gpu && MEMRA_BENCH_MODEL=$M/$m.gguf timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk$' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed "s/^/$b /")
  done
done
el gates
gate conv "$M/0.8b-bf16.gguf" 77 64 0
gate conv "$M/9b-q8_0.gguf" 300 32 0
el done
