#!/usr/bin/env bash
# Prepared in session 67 (no GPU was lent after run371), for a session with
# one: step 119's copy for a full chunk in the Q4_K and Q5_K tensor-core
# batch kernels (scripts/gpu/patches/kq-full.patch, bin/kqf) against main:
# their batch test and the prefill test on kqf, BenchmarkGPUMatvecBatch
# Q4_K/Q5_K for 8 tokens and prime ms at P=512 on the 0.8B and 9B Q4_K,
# Q5_K and Q4_K_M presets, alternated twice, and gates on kqf. carry
# ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test \
#     kqf=main+scripts/gpu/patches/kq-full.patch:gate,bench,engine_gpu.test
# ~7 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "q4_k q5_k q4_k_m"
el "batch and prefill tests (kqf)"
(cd engine/gpu && timeout 200 "$R/bin/kqf/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" )
for b in main kqf main kqf; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/(Q4_K|Q5_K)/.*/n8/' -test.benchtime 200x 2>&1 | grep -E "^Bench" | sed "s/^/$b /")
done
wait_synth
ms="$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q4_k_m.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q4_k_m.gguf"
i=0
for b in main kqf main kqf; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (kqf)"
gate kqf "$M/9b-q4_k.gguf" 300 32 0
gate kqf "$M/9b-q5_k.gguf" 300 32 0
gate kqf "$M/0.8b-q4_k_m.gguf" 300 128 1
el done
