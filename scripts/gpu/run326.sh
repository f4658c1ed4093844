#!/usr/bin/env bash
# Session 54, step 101 as landed: q8_0's staged batch kernels (x copied into
# shared memory, the loads through per-warp cp.async rings) apart from the
# kernels that read x from global memory, whose row addresses stay in
# registers (run325's shared kernel reloaded them every trip: 9B bf16
# priming 1.8% slower); q8_0 staged only where a block takes more than one
# unit; every normed input from matvec_batch_norm. bin/base is main before
# the step (76d3d5d), bin/main the step. Tests and BenchmarkGPUMatvecBatch
# (8 tokens) on both; prime time at P=512 on the four presets, alternated,
# decode at 1k alongside; gates. carry ["bin"]. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "batch and prefill GPU tests (main)"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|GraphEqualsEager|SessionFeed|SessionEqualsEager|EarlyLoads|MatvecShared' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
grep -E -- '--- (PASS|FAIL): TestGPUPrefillMatchesTokenFeed/.*staged' "$OUT/gputest.txt"
for b in base main; do
  el "BenchmarkGPUMatvecBatch n8 ($b)"
  for f in 'GPUMatvecBatch/(BF16|Q8_0)/.*/n8/' 'GPUMatvecBatch/norm/'; do
    (cd engine/gpu && timeout 150 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 300x -test.bench "$f" 2>&1 |
      grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+300\s+/ /")
  done
done
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for b in base main base main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates (main)"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-bf16.gguf" 300 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
gate main "$M/9b-q8_0.gguf" 300 64 0
gate main "$M/9b-bf16.gguf" 300 32 0
el "memra run on cuda, a 300-token prompt (base, main)"
for b in base main; do
  for m in 0.8b-bf16 0.8b-q8_0; do
    timeout 60 ./bin/$b/memra run -m "$M/$m.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "($b $m)"
  done
done
el done
