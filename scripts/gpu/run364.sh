#!/usr/bin/env bash
# Session 66: the unstaged batch kernels' loads a trip ahead, across the
# ends of units (scripts/gpu/patches/mvb/pipe-all.patch, bin/pipe) against main
# (bin/main). Correctness first (the batch kernels bit for bit their decode
# kernels, prefill bit for bit token feed: pipe), then
# BenchmarkGPUMatvecBatch n8 (the 16-bit and q8_0 shapes, global and
# staged, alternated), prime ms at P=512 on the four presets (alternated
# twice, decode at 1k beside), gates on pipe. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=de47370:memra,gate,bench,engine_gpu.test \
#     pipe=de47370+scripts/gpu/patches/mvb/pipe-all.patch:memra,gate,bench,engine_gpu.test
# (The patch applies to de47370.) ~3 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
el "batch and prefill tests (pipe)"
(cd engine/gpu && timeout 200 "$R/bin/pipe/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 190s > "$OUT/gputest-pipe.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-pipe.txt" | grep -v "^    --- PASS" | head -20
synth main "0.8b 9b" "bf16 q8_0"
for b in main pipe main pipe; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 300x -test.bench 'GPUMatvecBatch/(BF16|Q8_0)/.*/n8/' 2>&1 |
    grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+300\s+/ /")
done
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for b in main pipe main pipe; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (pipe)"
gate pipe "$M/0.8b-bf16.gguf" 300 128 0
gate pipe "$M/0.8b-q8_0.gguf" 300 128 1
gate pipe "$M/9b-q8_0.gguf" 300 32 0
gate pipe "$M/9b-bf16.gguf" 300 32 0
el "memra run on cuda, a 300-token prompt"
for b in main pipe; do
  for m in 0.8b-bf16 0.8b-q8_0; do
    timeout 60 ./bin/$b/memra run -m "$M/$m.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "($b $m)"
  done
done
el done
