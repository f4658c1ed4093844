#!/usr/bin/env bash
# Session 55, step 102's second part: the K-quant batch kernels read the
# chunk's inputs as matvec_batch_kq_stage staged them once into global
# memory (no per-block staging, 8 tokens a launch at any width, two blocks
# an SM). bin/prev is c01e381 (the first part: every block stages its
# tokens in shared memory), bin/main the change. The batch, prefill, graph
# and session tests; compute-sanitizer memcheck on K-quant batch cases;
# BenchmarkGPUMatvecBatch on the K-quant shapes; prime ms at P=512 and
# decode at 1k on the six K-quant presets, alternated twice; gates.
# carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
el "batch, prefill, graph and session GPU tests (main)"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|GraphEqualsEager|SessionFeed|SessionEqualsEager|EarlyLoads' -test.v -test.timeout 145s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
echo "K-quant batch cases passed: $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/Q' "$OUT/gputest.txt"); prefill K-quant cases passed: $(grep -cE -- '--- PASS: TestGPUPrefillMatchesTokenFeed/(Q[456]_K|kmix)' "$OUT/gputest.txt")"
el "compute-sanitizer memcheck, K-quant batch cases (main)"
CS=/usr/local/cuda/bin/compute-sanitizer
(cd engine/gpu && timeout 120 $CS --tool memcheck --error-exitcode 9 --print-limit 20 "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch/Q[456]_K-wide[012]-(1003x1024|40x6144|2050x256)-n(5|8)$' -test.v -test.timeout 115s > "$OUT/cs-memcheck.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/cs-memcheck.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-memcheck.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-memcheck.txt")")
el "BenchmarkGPUMatvecBatch, K-quants (prev, main)"
for b in prev main; do
  (cd engine/gpu && timeout 80 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 200x -test.bench 'GPUMatvecBatch/(Q[456]_K|kq-stage)/' 2>&1 |
    grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+200\s+/ /; s/-16 / /")
done
wait_synth
ms="$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf"
i=0
for b in prev main prev main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 100 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
  if [ $i = 2 ]; then
    el "gates (main)"
    gate main "$M/0.8b-q5_k.gguf" 300 256 0
    gate main "$M/0.8b-q4_k.gguf" 300 128 1
    gate main "$M/9b-q6_k.gguf" 300 64 0
  fi
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "memra run on cuda, a 300-token prompt (main)"
for m in 0.8b-q4_k 9b-q4_k; do
  timeout 60 ./bin/main/memra run -m "$M/$m.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "(main $m)"
done
el done
