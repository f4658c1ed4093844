#!/usr/bin/env bash
# Session 60 (prepared without a GPU): shorter loops for the IQ4 and Q6_K
# tiles (perf.md steps 107 and 108), kept as scripts/gpu/patches/
# kq-loops.patch: the IQ4 lookup in two permutes and an XOR with its
# codebook words in registers, Q6_K in one mma a sub-block. bin/main is
# main (memra and bench), bin/kql main with the patch (bash
# scripts/gpu/bins.sh main=main:memra,bench
# kql=main+scripts/gpu/patches/kq-loops.patch, nvcc needed; carry ["bin"]),
# built from the same commit. Every
# engine/gpu GPU test (its DecodeMatchesCPU also runs main's near-tie rule,
# session 59, on a GPU for the first time), memcheck on the IQ4 and Q6_K
# kernel cases (usual and lean), gates, greedy tokens cuda == cpu, main
# and kql alternated at 1k with priming at P = 512, 64 greedy tokens main
# against kql. ~8 min on a fresh machine.
# Predictions: decode loops IQ4_XS 522 -> 398, IQ4_NL 521 -> 396, Q6_K 474
# -> 423 SASS instructions an item (batch 850 -> 723, 807 -> 683, 779 ->
# 742): bound by instructions as the K-quants are (step 78), 9B IQ4_XS from
# ~399 to ~460-500 tok/s, 9B Q6_K from ~388 to ~420-440; IQ4 tokens and
# logits main's bit for bit, Q6_K's sums differ in their last bits.
set -u
source scripts/gpu/lib.sh
start_run
synth kql "0.8b 9b" "iq4_xs q6_k"
s1=$SYNTH
synth kql "9b" "iq4_nl"
SYNTH="$SYNTH $s1"
gpu_tests kql
echo "kernel cases passed: IQ4 $(grep -cE -- '--- PASS: TestGPUKernelMatvec(Batch)?/IQ4' "$OUT/gputest.txt"), Q6_K $(grep -cE -- '--- PASS: TestGPUKernelMatvec(Batch)?/Q6_K' "$OUT/gputest.txt"), failed $(grep -c -- '--- FAIL' "$OUT/gputest.txt")"
grep -E "worst relative|near-tie|identical: usual and lean" "$OUT/gputest.txt" | head -12
el "compute-sanitizer memcheck, IQ4 and Q6_K kernel cases, usual and lean"
(cd engine/gpu && timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$R/bin/kql/engine_gpu.test" -test.run '^TestGPUKernelMatvec$/(IQ4_XS|IQ4_NL|Q6_K)-(lean-)?wide[01]-(1003x1024|37x12288)-blocks' -test.v -test.timeout 95s > "$OUT/cs-kql.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/cs-kql.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-kql.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-kql.txt")")
wait_synth
el "gates (kql)"
gate kql "$M/0.8b-iq4_xs.gguf" 300 256 0
gate kql "$M/9b-iq4_xs.gguf" 300 64 1
gate kql "$M/0.8b-q6_k.gguf" 300 256 1
gate kql "$M/9b-q6_k.gguf" 300 64 0
el "greedy tokens, 0.8b-iq4_xs, cuda and cpu (kql)"
greedy kql "$M/0.8b-iq4_xs.gguf"
mkdir -p /tmp/bk
for b in main kql main kql; do
  el "bench 1k, prime 512 ($b)"
  d=/tmp/bk/$b-$(date +%s%N); mkdir -p $d
  timeout 70 "./bin/$b/bench" -model "$M/9b-iq4_xs.gguf,$M/9b-iq4_nl.gguf,$M/9b-q6_k.gguf,$M/0.8b-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-kql.tgz" -C /tmp bk
el "64 greedy tokens, main against kql"
tokens_cmp main kql "0.8b-iq4_xs 9b-iq4_xs 0.8b-q6_k 9b-q6_k"
el done
