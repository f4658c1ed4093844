#!/usr/bin/env bash
# Ran in session 61 on an H100 (no H200 was lent): docs/results/h100-run343-log.txt,
# perf.md step 112. The patches it names are on main since, main's build being kql's.
# Session 60 (prepared without a GPU): the K-quant loop work kept as
# patches on main, checked. kq-loops.patch (perf.md steps 107, 108): the
# IQ4 lookup in two permutes and an XOR with its codebook words in
# registers, Q6_K in one mma a sub-block; kq-nobreak.patch (step 109): the
# K-quant batch products without the group branch (Q4_K, Q5_K) and B loaded
# for the tokens past n as well (Q4_K and the Q6_K family); since session
# 61 also mixfuse.patch (step 111: the matrices that read one input fused
# in runs of one type, for mixed files). bin/main is main (memra and
# bench), bin/kql main with the three patches, bin/fus main with
# mixfuse.patch alone (memra and bench), from the same commit; build them
# here with
#   bash scripts/gpu/bins.sh main=main:memra,bench \
#     kql=main+scripts/gpu/patches/kq-loops.patch+scripts/gpu/patches/kq-nobreak.patch+scripts/gpu/patches/mixfuse.patch \
#     fus=main+scripts/gpu/patches/mixfuse.patch:memra,bench
# (nvcc needed) and carry ["bin"]; run344.sh and run345.sh time them. Every engine/gpu
# GPU test (its DecodeMatchesCPU also runs main's near-tie rule, session
# 59, on a GPU for the first time), memcheck on the IQ4, Q6_K and Q4_K
# kernel cases (usual, lean and batch), gates, greedy tokens cuda == cpu,
# 64 greedy tokens main against kql. ~8 min on a fresh machine.
# Predictions: every test PASS; IQ4 and Q4_K/Q5_K tokens main's (the same
# sums: the IQ4 operands are the same exact values, the batch change only
# computes what is then not put), Q6_K's sums differ in their last bits.
set -u
source scripts/gpu/lib.sh
start_run
synth kql "0.8b 9b" "iq4_xs q6_k"
s1=$SYNTH
synth kql "9b" "q4_k q5_k iq4_nl"
SYNTH="$SYNTH $s1"
gpu_tests kql
echo "kernel cases passed: IQ4 $(grep -cE -- '--- PASS: TestGPUKernelMatvec(Batch)?/IQ4' "$OUT/gputest.txt"), Q6_K $(grep -cE -- '--- PASS: TestGPUKernelMatvec(Batch)?/Q6_K' "$OUT/gputest.txt"), Q4_K/Q5_K batch $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/Q[45]_K' "$OUT/gputest.txt"), failed $(grep -c -- '--- FAIL' "$OUT/gputest.txt")"
grep -E "worst relative|near-tie|identical: usual and lean" "$OUT/gputest.txt" | head -12
grep -E -- "--- (PASS|FAIL).*(k-mix|FusionRuns|ProfileStep)" "$OUT/gputest.txt" | head -8
CS=/usr/local/cuda/bin/compute-sanitizer
memcheck() { # NAME REGEX SECONDS: memcheck on the kql test cases matching REGEX
  el "compute-sanitizer memcheck, $1"
  (cd engine/gpu && timeout "$3" $CS --tool memcheck --error-exitcode 9 --print-limit 20 "$R/bin/kql/engine_gpu.test" -test.run "$2" -test.v -test.timeout "$(( $3 - 5 ))s" > "$OUT/cs-$1.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY' "$OUT/cs-$1.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-$1.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-$1.txt")")
}
memcheck decode '^TestGPUKernelMatvec$/(IQ4_XS|IQ4_NL|Q6_K)-(lean-)?wide[01]-(1003x1024|37x12288)-blocks' 80
memcheck batch '^TestGPUKernelMatvecBatch$/(Q4_K|Q5_K|IQ4_XS|Q6_K)-wide[01]-17x2304-n[1458]$' 60
wait_synth
el "gates (kql)"
gate kql "$M/0.8b-iq4_xs.gguf" 300 256 0
gate kql "$M/9b-iq4_xs.gguf" 300 64 1
gate kql "$M/0.8b-q6_k.gguf" 300 256 1
gate kql "$M/9b-q6_k.gguf" 300 64 0
gate kql "$M/9b-q4_k.gguf" 300 64 0
el "greedy tokens, 0.8b-iq4_xs, cuda and cpu (kql)"
greedy kql "$M/0.8b-iq4_xs.gguf"
el "64 greedy tokens, main against kql"
tokens_cmp main kql "0.8b-iq4_xs 9b-iq4_xs 9b-q4_k 9b-q6_k"
el done
