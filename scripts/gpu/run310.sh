#!/usr/bin/env bash
# Session 52, prefill (3e5ff21): prompts primed in chunks of 8 tokens by
# the matvec_batch kernels. The batch kernel tests and the prefill-vs-token
# feed test first, then gates whose graph stream is primed in chunks and
# whose eager stream step by step (0.8B and 9B, bf16 and q8_0, f16 and FP8
# KV), then prime time with and without -token-feed in one bench process
# pair (P=512, decode at 1k alongside, to see decode unchanged), then every
# engine/gpu GPU test. carry ["bin"]. ~8 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "batch kernel and prefill tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-prefill.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-prefill.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/' "$OUT/gputest-prefill.txt"
el "default gate"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "gates"
gate main "$M/0.8b-bf16.gguf" 300 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
gate main "$M/9b-q8_0.gguf" 200 128 0
gate main "$M/9b-bf16.gguf" 77 64 1
el "bench prime P=512, chunks then token feed"
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
for f in "" "-token-feed"; do
  d=/tmp/bp$f; mkdir -p $d
  timeout 150 ./bin/main/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false $f -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $? ($f)"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp bp-token-feed
gpu_tests main
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el done
