#!/usr/bin/env bash
# Session 67, step 119: every batch path with n == 8 tokens known at compile
# time (scripts/gpu/patches/mvb/full-all.patch, bin/new) against main: the
# batch kernels' tests on new, BenchmarkGPUMatvecBatch for 8 tokens
# (bf16, f16, q8_0), then prime ms at P=512 on the bf16 and q8_0 presets,
# each alternated twice, and gates. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=596260c:bench,engine_gpu.test \
#     new=596260c+scripts/gpu/patches/mvb/full-all.patch:memra,gate,bench,engine_gpu.test
# ~7 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
el "tests (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)" )
synth new "0.8b 9b" "bf16 q8_0"
for b in main new main new; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/(BF16|F16|Q8_0)/.*/n8/' -test.benchtime 200x 2>&1 | grep -E "^Bench" | sed "s/^/$b /")
done
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for b in main new main new; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (new)"
gate new "$M/9b-q8_0.gguf" 300 32 0
gate new "$M/0.8b-q8_0.gguf" 300 128 0
gate new "$M/0.8b-bf16.gguf" 300 128 0
el done
