#!/usr/bin/env bash
# Prepared in session 71 (its device time ran out), for a session with a
# GPU: (1) step 104's open question on any GPU: BenchmarkGPUMatvecBatch for
# 8 tokens on the 0.8B's input projections (8224 x 1024, 5120 x 1024) and
# its other shapes in Q3_K, IQ4_XS, Q4_K and Q6_K (run340 and run341 had
# the 0.8B Q3_K and IQ4_XS priming more slowly than its recoded Q6_K);
# (2) on an H200 only, main's decode at 64 and 1k on the types whose
# kernels changed since an H200 last ran them: Q4_K_M (step 113's mixed
# launch; run352 ran session 62's main: bench -compare against it), IQ4_XS
# and IQ4_NL (steps 107-108), Q3_K and Q4_0. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test
# ~4 min on an H200.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case $gpu in *H200*) synth main "0.8b 9b" "q4_k_m iq4_xs iq4_nl q3_k q4_0" ;; esac
mvb_bench '(Q3_K|IQ4_XS|Q4_K|Q6_K)/(8224|5120|7168|1024)x[0-9]+/n8/' main
case $gpu in *H200*) ;; *) el "not an H200: no decode table"; exit 0 ;; esac
wait_synth
types_table main docs/results/h200-run352.json "q4_k_m iq4_xs iq4_nl q3_k q4_0"
el done
