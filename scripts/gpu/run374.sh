#!/usr/bin/env bash
# Prepared in session 67 (no GPU was lent after run371), for a session with
# one: the q8_0 ring kernels' scales a trip at a time
# (scripts/gpu/patches/q8-cs.patch, bin/cs) against main: the batch and
# prefill tests on cs, BenchmarkGPUMatvecBatch q8_0 for 8 tokens and prime
# ms at P=512 on the 0.8B and 9B q8_0, alternated twice, and gates on cs.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test \
#     cs=main+scripts/gpu/patches/q8-cs.patch:gate,bench,engine_gpu.test
# ~4 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "q8_0"
el "batch and prefill tests (cs)"
(cd engine/gpu && timeout 200 "$R/bin/cs/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" )
for b in main cs main cs; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/Q8_0/.*/n8/' -test.benchtime 200x 2>&1 | grep -E "^Bench" | sed "s/^/$b /")
done
wait_synth
ms="$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf"
i=0
for b in main cs main cs; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (cs)"
gate cs "$M/9b-q8_0.gguf" 300 32 0
gate cs "$M/0.8b-q8_0.gguf" 300 128 1
el done
