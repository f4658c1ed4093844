#!/usr/bin/env bash
# Session 52, step 99's last form: the Gated DeltaNet's conv and delta rule
# once each over a prompt chunk (gdn_conv_chunk, gdn_delta_chunk: each
# token's arithmetic the step kernels', the state in registers across the
# chunk). The chunk kernels' tests against the step kernels, the prefill
# tests, the batch benchmark, gates (graph primed in chunks, eager step by
# step), prime time with and without -token-feed (P=512, decode at 1k
# alongside), memra run on a 300-token prompt, then every engine/gpu GPU
# test. carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "batch kernel and prefill tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|KernelGDN|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-prefill.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-prefill.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/' "$OUT/gputest-prefill.txt"
grep -E -- '--- (PASS|FAIL): TestGPUKernelGDN.*Chunk' "$OUT/gputest-prefill.txt"
el "batch benchmark"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/(BF16|Q8_0)/' -test.benchtime 50x 2>&1 | grep -E "Benchmark|FAIL|panic" | awk '{print $1, $3, $4, $5, $6}')
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
  d=/tmp/bp$f; rm -rf $d; mkdir -p $d
  timeout 150 ./bin/main/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false $f -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $? ($f)"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp bp-token-feed
el "memra run on cuda, a 300-token prompt"
timeout 60 ./bin/main/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s|prompt' | head -6
gpu_tests main
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el done
