#!/usr/bin/env bash
# Session 59, branch next/iq4xs: IQ4_XS matrices on kernels of their own
# (ktile.IQ4XS: Q3_K's tile shape with IQ4_NL codebook indices, looked up by
# byte permutes; matvec_iq4_xs[_wide][_lean], matvec_batch_iq4_xs[_wide],
# embed_iq4_xs), which main refuses (the file runs on the CPU). bin/iq4 is
# this branch (scripts/gpu/bins.sh iq4=next/iq4xs; carry ["bin"]). The
# IQ4_XS kernel, batch, lean, embed, prefill and decode-against-CPU tests;
# memcheck on the IQ4_XS kernel cases; gates; greedy tokens cuda == cpu;
# bench at 1k beside Q4_K and Q6_K. ~6 min on a fresh machine.
# Prediction: loop 522 SASS instructions an item against Q6_K's 474 and
# Q4_K's 289, on 2,336-byte tiles: instruction-bound as the K-quants are
# (perf.md step 78), 9B IQ4_XS near 9B Q6_K's 388 tok/s, a little under.
set -u
source scripts/gpu/lib.sh
start_run
synth iq4 "0.8b 9b" "iq4_xs q4_k q6_k"
el "IQ4_XS GPU tests (iq4)"
(cd engine/gpu && timeout 200 "$R/bin/iq4/engine_gpu.test" -test.run 'KernelMatvec/IQ4_XS|KernelMatvecBatch/IQ4_XS|KernelMatvecLean|KernelEmbed/IQ4_XS|MatvecSharedLimit|DecodeMatchesCPU/qwen35-(iq4|q3_k)|PrefillMatchesTokenFeed/IQ4_XS|GraphEqualsEager' -test.v -test.timeout 190s > "$OUT/gputest-iq4.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst relative" "$OUT/gputest-iq4.txt" | grep -v "^    --- PASS" | head -30
echo "IQ4_XS kernel cases passed: matvec $(grep -cE -- '--- PASS: TestGPUKernelMatvec/IQ4_XS' "$OUT/gputest-iq4.txt"), batch $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/IQ4_XS' "$OUT/gputest-iq4.txt"), failed $(grep -c -- '--- FAIL' "$OUT/gputest-iq4.txt")"
grep -E -- '--- FAIL' "$OUT/gputest-iq4.txt" | head -10
el "compute-sanitizer memcheck, IQ4_XS kernel cases"
(cd engine/gpu && timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$R/bin/iq4/engine_gpu.test" -test.run 'TestGPUKernelMatvec$/IQ4_XS-.*-(1003x1024|37x12288)-' -test.v -test.timeout 55s > "$OUT/cs-iq4.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/cs-iq4.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-iq4.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-iq4.txt")")
wait_synth
el "gates (iq4)"
gate iq4 "$M/0.8b-iq4_xs.gguf" 300 256 0
gate iq4 "$M/9b-iq4_xs.gguf" 300 64 1
el "greedy tokens, 0.8b-iq4_xs, cuda and cpu (iq4)"
greedy iq4 "$M/0.8b-iq4_xs.gguf"
mkdir -p /tmp/bi
for p in 0.8b 9b; do
  el "bench $p at 1k (iq4)"
  d=/tmp/bi/$p; mkdir -p $d
  timeout 100 ./bin/iq4/bench -model "$M/$p-iq4_xs.gguf,$M/$p-q4_k.gguf,$M/$p-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-iq4.tgz" -C /tmp bi
el done
