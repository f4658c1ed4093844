#!/usr/bin/env bash
# Session 58 (prepared without a GPU; not run yet), branch next/q3k: Q3_K
# matrices on kernels of their own (ktile.Q3K: Q6_K's low-nibble plane of
# codes q + 8, one mma a sub-block; matvec_q3_k[_wide][_lean],
# matvec_batch_q3_k[_wide], embed_q3_k) against main, which stores them as
# Q6_K (gguf.Recode, perf.md step 103). bin/main is main, bin/q3k this
# branch. The Q3_K kernel, batch, embed, prefill and decode-against-CPU
# tests; memcheck on the Q3_K kernel cases; gates; greedy tokens cuda ==
# cpu; bench at 1k and priming at P=512, main and q3k alternated twice.
# Binaries (built here, CGO_ENABLED=0): for b in main q3k, with REV main
# and next/q3k: git worktree add -f /tmp/w-$b REV && (cd /tmp/w-$b && go
# tool mage cuda:bins) && mkdir -p /tmp/binall/$b && cp
# /tmp/w-$b/bin/{memra,gate,bench,engine_gpu.test} /tmp/binall/$b/; then
# XZ_OPT=-9 tar cJf bin/bin.txz -C /tmp/binall . ; carry ["bin"]. ~8 min.
# Prediction: the Q3_K tiles are 2,336 bytes against the recoded 3,360 and
# the decode loop 278 SASS instructions an item against Q6_K's 474, nearly
# Q4_K's (2,368 bytes, 289), so 9B Q3_K decodes at about 9B Q4_K's speed
# (502 tok/s in run303), 1.25-1.35x main's recoded Q3_K (9B Q6_K's 388).
set -u
source scripts/gpu/lib.sh
start_run
synth q3k "0.8b 9b" "q3_k"
el "Q3_K GPU tests (q3k)"
(cd engine/gpu && timeout 240 "$R/bin/q3k/engine_gpu.test" -test.run 'KernelMatvec/Q3_K|KernelMatvecBatch/Q3_K|KernelMatvecLean|KernelEmbed/Q3_K|MatvecSharedLimit|DecodeMatchesCPU/qwen35-(recoded|q3_k)|PrefillMatchesTokenFeed/(Q3_K|mixed)|RecodedEqualsWide' -test.v -test.timeout 230s > "$OUT/gputest-q3k.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst relative" "$OUT/gputest-q3k.txt" | grep -v "^    --- PASS" | head -30
echo "Q3_K kernel cases passed: matvec $(grep -cE -- '--- PASS: TestGPUKernelMatvec/Q3_K' "$OUT/gputest-q3k.txt"), batch $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/Q3_K' "$OUT/gputest-q3k.txt"), failed $(grep -c -- '--- FAIL' "$OUT/gputest-q3k.txt")"
el "compute-sanitizer memcheck, Q3_K kernel cases"
(cd engine/gpu && timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$R/bin/q3k/engine_gpu.test" -test.run 'TestGPUKernelMatvec$/Q3_K-.*-(1003x1024|37x12288)-|TestGPUKernelMatvecBatch/Q3_K-wide[01]-(1003x1024|40x6144)-n(1|5|8)$' -test.v -test.timeout 115s > "$OUT/cs-q3k.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/cs-q3k.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-q3k.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-q3k.txt")")
wait_synth
el "gates (q3k)"
gate q3k "$M/0.8b-q3_k.gguf" 300 256 0
gate q3k "$M/0.8b-q3_k.gguf" 64 128 1
gate q3k "$M/9b-q3_k.gguf" 300 64 0
el "greedy tokens, 0.8b-q3_k, cuda and cpu (q3k)"
greedy q3k "$M/0.8b-q3_k.gguf"
mkdir -p /tmp/bq
for b in main q3k main q3k; do
  el "bench q3_k at 1k, prime at P=512 ($b)"
  d=/tmp/bq/$b-$(date +%s); mkdir -p $d
  timeout 150 ./bin/$b/bench -model "$M/0.8b-q3_k.gguf,$M/9b-q3_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt | sed "s/^/$b /"; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9 | sed "s/^/$b /"
done
tar czf "$OUT/bench-q3k.tgz" -C /tmp bq
el done
