#!/usr/bin/env bash
# Session 52, step 99's third form: the batch kernels issue each trip's
# next loads before summing the current ones, one block an SM, and
# normalise a chunk's tokens in one pass (memra_mvb_inputs). The batch
# kernel and prefill tests, the batch benchmark in every stage (0 global x,
# 1 normalised copies, 2 plain copies), prime time with and without
# -token-feed (P=512). carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "batch kernel and prefill tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-prefill.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-prefill.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/' "$OUT/gputest-prefill.txt"
el "batch benchmark"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/(BF16|Q8_0)/' -test.benchtime 50x 2>&1 | grep -E "Benchmark|FAIL|panic" | awk '{print $1, $3, $4, $5, $6}')
wait_synth
el "bench prime P=512, chunks then token feed"
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
for f in "" "-token-feed"; do
  d=/tmp/bp$f; rm -rf $d; mkdir -p $d
  timeout 150 ./bin/main/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false $f -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $? ($f)"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp bp-token-feed
el done
