#!/usr/bin/env bash
# Ran in session 92 (log docs/results/h100-run486-log.txt; perf.md step 150).
# Session 92: run484's rotation (this session, an H100) found step 148 cost
# the 0.8B Q6_K 4.2% at 1k (o = d7a5248 1,510.5/1,513.7 tok/s, m =
# 938a714 1,455.4/1,440.4) while the 9B Q6_K gained 2.8% and the 0.8B Q5_K
# 4.2%. Is it Q6_K's own kernels' early trigger? a (q6-last.patch): the
# Q6_K decode kernels (matvec_q6_k, matvec_q6_k_wide) release their
# successor at a block's last unit, as before step 148; b (q6-loop.patch):
# early where their grid loops (units > gridDim.x), at the last unit where
# it is one wave. Every other ring kernel as main. m, a and b in turn twice
# at 1k on the 0.8B and 9B Q6_K, the 0.8B Q5_K and Q4_K as controls (their
# kernels unchanged); tokens compared; gates of a and b. ~200 s with the
# start. carry ["bin"]; binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# m=938a714:memra,bench,gate
# a=938a714+scripts/gpu/patches/launch/q6-last.patch:memra,bench,gate
# b=938a714+scripts/gpu/patches/launch/q6-loop.patch:memra,bench,gate`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b" "q6_k q5_k q4_k"
first=$SYNTH
synth m "9b" "q6_k"
SYNTH="$first $SYNTH"
wait_synth
bench_rotation "$M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q4_k.gguf" 1024 m a b m a b
el tokens
tokens_cmp m a "0.8b-q6_k 9b-q6_k"
tokens_cmp m b "0.8b-q6_k 9b-q6_k"
el gates
gate a "$M/0.8b-q6_k.gguf" 64 256 0
gate b "$M/0.8b-q6_k.gguf" 64 256 0
gate b "$M/9b-q6_k.gguf" 64 128 0
el done
