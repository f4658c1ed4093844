#!/usr/bin/env bash
# Session 59, branch next/q40: Q4_0 and IQ4_NL matrices on kernels of their
# own (ktile.Q40, ktile.IQ4NL: the code planes of Q3_K's and IQ4_XS's tiles
# with an f16 d a 32-column block; matvec_{q4_0,iq4_nl}[_wide][_lean],
# matvec_batch_*[_wide], embed_*), which main stores as Q8_0 (run339: 9B
# Q4_0 at 9B Q8_0's 372 tok/s). bin/q40 is this branch (scripts/gpu/bins.sh
# q40=next/q40; carry ["bin"]). The kernel, batch, lean, embed, prefill,
# recoded and decode-against-CPU tests; memcheck on Q4_0 and IQ4_NL kernel
# cases; gates; greedy tokens cuda == cpu; bench at 1k beside Q8_0; the
# batch kernels on the 0.8B's shapes. ~4 min.
# Prediction: Q4_0's loop is 268 SASS instructions an item (Q3_K's 278) on
# 2,304-byte tiles, so 9B Q4_0 near 9B Q3_K's 487 tok/s (run340), ~1.3x
# its recoded form; IQ4_NL's 521, so near IQ4_XS's 399 (run341).
set -u
source scripts/gpu/lib.sh
start_run
synth q40 "0.8b 9b" "q4_0 iq4_nl q8_0"
el "Q4_0 and IQ4_NL GPU tests (q40)"
(cd engine/gpu && timeout 170 "$R/bin/q40/engine_gpu.test" -test.run 'KernelMatvec/(Q4_0|IQ4_NL)|KernelMatvecBatch/(Q4_0|IQ4_NL)|KernelMatvecLean|KernelEmbed/(Q4_0|IQ4_NL)|MatvecSharedLimit|DecodeMatchesCPU/qwen35-(recoded|q4_0|iq4_nl)|RecodedEqualsWide|PrefillMatchesTokenFeed/(Q4_0|IQ4_NL|recoded)' -test.v -test.timeout 165s > "$OUT/gputest-q40.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst relative|identical" "$OUT/gputest-q40.txt" | grep -v "^    --- PASS" | head -30
echo "kernel cases passed: matvec $(grep -cE -- '--- PASS: TestGPUKernelMatvec/(Q4_0|IQ4_NL)' "$OUT/gputest-q40.txt"), batch $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/(Q4_0|IQ4_NL)' "$OUT/gputest-q40.txt"), failed $(grep -c -- '--- FAIL' "$OUT/gputest-q40.txt")"
grep -E -- '--- FAIL' "$OUT/gputest-q40.txt" | head -10
el "compute-sanitizer memcheck, Q4_0 and IQ4_NL kernel cases"
(cd engine/gpu && timeout 40 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$R/bin/q40/engine_gpu.test" -test.run 'TestGPUKernelMatvec$/(Q4_0|IQ4_NL)-.*-(1003x1024|37x12288)-' -test.v -test.timeout 38s > "$OUT/cs-q40.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/cs-q40.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-q40.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-q40.txt")")
wait_synth
el "gates (q40)"
gate q40 "$M/0.8b-q4_0.gguf" 300 256 0
gate q40 "$M/9b-q4_0.gguf" 300 64 1
gate q40 "$M/0.8b-iq4_nl.gguf" 64 128 0
el "greedy tokens, 0.8b-q4_0, cuda and cpu (q40)"
greedy q40 "$M/0.8b-q4_0.gguf"
mkdir -p /tmp/bq4
for p in 0.8b 9b; do
  el "bench $p at 1k (q40)"
  d=/tmp/bq4/$p; mkdir -p $d
  timeout 100 ./bin/q40/bench -model "$M/$p-q4_0.gguf,$M/$p-iq4_nl.gguf,$M/$p-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-q40.tgz" -C /tmp bq4
el "batch kernels on the 0.8B shapes (run340: Q3_K's own priming slower than its recoded Q6_K's)"
(cd engine/gpu && timeout 60 "$R/bin/q40/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/(Q6_K|Q3_K|Q4_0|IQ4_XS|Q8_0)/(7168x1024|1024x3584|1024x2048)' -test.benchtime 100x > "$OUT/bench-batch.txt" 2>&1)
grep -E '^Benchmark' "$OUT/bench-batch.txt" | sed 's/BenchmarkGPUMatvecBatch\///' | awk '{print $1, $3, $4, $5, $6}' | head -40
el done
