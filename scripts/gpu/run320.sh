#!/usr/bin/env bash
# Session 53, step 100's second part: the batch matvecs' epilogue as one
# reduce-scatter (memra_warp_sum_scatter: lane j ends with sum j, the same
# pairs as 32 butterflies) instead of 32 butterflies and lane 0's stores.
# Batch, chunk and prefill tests; BenchmarkGPUMatvecBatch (bf16, q8_0, 8
# tokens) for bin/c981 (step 100's first part) and bin/main; gates; prime
# time at P=512 alternated c981 main c981 main with decode at 1k alongside;
# memra run on a 300-token prompt; every engine/gpu GPU test.
# carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "batch, chunk and prefill tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|Chunk|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-prefill.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-prefill.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/' "$OUT/gputest-prefill.txt"
for b in c981 main; do
  el "batch benchmark ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/(BF16|Q8_0)/.*/n8/' -test.benchtime 50x 2>&1 | grep -E "Benchmark|FAIL|panic" | awk -v b=$b '{print b, $1, $3, $4, $5, $6}')
done
el "default gate"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "gates"
gate main "$M/0.8b-bf16.gguf" 300 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
gate main "$M/9b-q8_0.gguf" 200 128 0
gate main "$M/9b-bf16.gguf" 77 64 1
el "bench prime P=512: c981 main c981 main"
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for b in c981 main c981 main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  timeout 120 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $? ($b)"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "memra run on cuda, a 300-token prompt"
timeout 60 ./bin/main/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo
gpu_tests main
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el done
