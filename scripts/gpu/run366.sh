#!/usr/bin/env bash
# Session 66, step 118: q8_0 launches whose copies do not fit in shared
# memory (the 9B's 4096 x 12288 down projection) read their inputs laid out
# by matvec_batch_lay, through the rings (bin/new, branch next/laid) against
# main (bin/old, 969a9a8). The batch, prefill, decode and graph tests on
# new first; BenchmarkGPUMatvecBatch n8 for Q8_0 and the lay kernel
# (alternated twice), prime ms at P=512 on the q8_0 presets (alternated
# twice, decode at 1k beside), gates. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh old=969a9a8:bench,engine_gpu.test new=next/laid:memra,bench,gate,engine_gpu.test
# ~5 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
el "batch, prefill, decode and graph tests (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|DecodeMatchesCPU|GraphEqualsEager|BatchKernelPerVariant' -test.v -test.timeout 190s > "$OUT/gputest-new.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-new.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- "--- PASS: .*/laid/" "$OUT/gputest-new.txt" | sed 's/^/laid prefill cases passed: /'
synth new "0.8b 9b" "q8_0"
for b in old new old new; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  for f in 'GPUMatvecBatch/Q8_0/.*/n8/' 'GPUMatvecBatch/lay/'; do
    (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 300x -test.bench "$f" 2>&1 |
      grep -E 'Benchmark|FAIL|panic|missing|error' | sed -E "s/^/$b /; s/\s+300\s+/ /; s/-16 [0-9]+ ns\/op\s+[0-9.]+ MB\/s//")
  done
done
wait_synth
ms="$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf"
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
gate new "$M/9b-q8_0.gguf" 300 32 0
gate new "$M/9b-q8_0.gguf" 300 32 1
gate new "$M/0.8b-q8_0.gguf" 300 128 0
el done
