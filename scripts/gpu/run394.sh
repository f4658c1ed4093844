#!/usr/bin/env bash
# Session 72: step 104's open question with step 123's chunk profile: why
# the 0.8B Q3_K and IQ4_XS prime more slowly than its Q6_K (run340,
# run341): bench -profile 4 at ctx 64 (prime ms at P=512 and the tables
# of a prompt's first 4 chunks) on the 0.8B Q3_K, IQ4_XS, Q6_K and Q4_K,
# on any GPU; then, on an H200 only, run390's decode table (Q4_K_M,
# IQ4_XS, IQ4_NL, Q3_K, Q4_0 at 64 and 1k against run352). carry ["bin"];
# binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test
# (5b326bb) ~2 min on an H100, ~6 on an H200.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case $gpu in
  *H200*) synth main "0.8b 9b" "q3_k iq4_xs q6_k q4_k q4_k_m iq4_nl q4_0" ;;
  *) synth main "0.8b" "q3_k iq4_xs q6_k q4_k" ;;
esac
wait_synth
el "bench -profile 4 (0.8b q3_k, iq4_xs, q6_k, q4_k)"
mkdir -p /tmp/p104
timeout 240 ./bin/main/bench -model "$M/0.8b-q3_k.gguf,$M/0.8b-iq4_xs.gguf,$M/0.8b-q6_k.gguf,$M/0.8b-q4_k.gguf" -ctx 64 -reps 3 -tokens 16 -prompt 512 -profile 4 -sampled=false -out /tmp/p104 > "$OUT/p104.md" 2> /tmp/p104/stderr.txt
echo "rc $?"
grep -E 'prime|prefill profile' /tmp/p104/stderr.txt
awk '/per prefill chunk/{p=1; n=0} p&&/^(\||##)/{print; if (++n>9) p=0}' "$OUT/p104.md"
case $gpu in *H200*) ;; *) el "not an H200: no decode table"; exit 0 ;; esac
types_table main docs/results/h200-run352.json "q4_k_m iq4_xs iq4_nl q3_k q4_0"
el done
