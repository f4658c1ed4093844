#!/usr/bin/env bash
# Session 55, step 102: K-quant prompts primed in chunks (matvec_batch_kq.cu:
# 4 tokens a mma, B's columns the tokens' x' hi and lo). bin/base is
# 41bf46a (K-quant prompts fed token by token), bin/main the change. The
# batch and prefill tests and the K-quant decode tests (their kernels now
# share memra_mvt_loop); BenchmarkGPUMatvecBatch on the K-quant shapes;
# prime ms at P=512 and decode at 1k on the six K-quant presets, the two
# binaries alternated twice; gates. carry ["bin"]. ~9 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
el "batch, prefill and K-quant GPU tests (main)"
(cd engine/gpu && timeout 230 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|KernelMatvec/Q[456]_K|MatvecShared|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 225s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/Q' "$OUT/gputest.txt"
grep -E -- '--- (PASS|FAIL): TestGPUPrefillMatchesTokenFeed/(Q|kmix)' "$OUT/gputest.txt" | head -30
el "BenchmarkGPUMatvecBatch, K-quants (main)"
(cd engine/gpu && timeout 90 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.benchtime 200x -test.bench 'GPUMatvecBatch/Q[456]_K/' 2>&1 |
  grep -E 'Benchmark|FAIL|panic' | sed -E "s/\s+200\s+/ /")
(cd engine/gpu && timeout 60 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.benchtime 200x -test.bench 'GPUMatvec/Q[456]_K/' 2>&1 |
  grep -E 'Benchmark|FAIL|panic' | sed -E "s/\s+200\s+/ /" | head -24)
wait_synth
ms="$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf"
i=0
for b in base main base main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 110 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
  if [ $i = 2 ]; then
    el "gates (main)"
    gate main "$M/0.8b-q4_k.gguf" 300 256 0
    gate main "$M/0.8b-q6_k.gguf" 300 128 1
    gate main "$M/9b-q5_k.gguf" 300 64 0
  fi
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "memra run on cuda, a 300-token prompt (base, main)"
for b in base main; do
  for m in 0.8b-q4_k 9b-q4_k; do
    timeout 60 ./bin/$b/memra run -m "$M/$m.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo "($b $m)"
  done
done
el done
