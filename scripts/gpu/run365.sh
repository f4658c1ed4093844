#!/usr/bin/env bash
# Session 66, step 117 as landed (969a9a8: memra_mvb_stream for the 16-bit
# batch kernels only; q8_0's SASS unchanged) against de47370: every
# engine/gpu GPU test on the new binary first (no synth beside it), then
# BenchmarkGPUMatvecBatch n8 for BF16 and F16 (alternated twice), prime ms
# at P=512 on the bf16 presets (alternated twice, decode at 1k beside),
# gates, and memra run's prompt rate. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh old=de47370:bench,memra,engine_gpu.test new=969a9a8
# ~7 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
gpu_tests new
synth new "0.8b 9b" "bf16"
for b in old new old new; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 300x -test.bench 'GPUMatvecBatch/(BF16|F16)/.*/n8/' 2>&1 |
    grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+300\s+/ /; s/-16 [0-9]+ ns\/op\s+[0-9.]+ MB\/s//")
done
wait_synth
ms="$M/0.8b-bf16.gguf,$M/9b-bf16.gguf"
i=0
for b in old new old new; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (new)"
gate new "$M/0.8b-bf16.gguf" 300 128 0
gate new "$M/0.8b-bf16.gguf" 300 128 1
gate new "$M/9b-bf16.gguf" 300 32 0
el "memra run on cuda, a 300-token prompt"
for b in old new old new; do
  timeout 60 ./bin/$b/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "($b 0.8b-bf16)"
done
el done
