#!/usr/bin/env bash
# Session 27 (perf.md step 80): bin/bk = branch next/bfrag-keep. The
# K-quant steps zeroed the B fragments of the runs a lane does not hold for
# every run (16 CS2R an item); bk keeps a lane's four fragment classes
# across items, zero from the start, and loads its own class with one
# predicated ld.shared written in PTX (as C++ ptxas redid the address
# arithmetic under the predicate: Q4_K 364). Loops: Q4_K 289 -> 309, Q5_K
# 389 -> 412 (lane-derived values recomputed every item), Q6_K 480 -> 472
# and 80 -> 70 registers. Prediction: Q4_K and Q5_K 2-6% slower on the big
# nodes, Q6_K within +-1% (+0.5-1% on 9B Q6_K). Tests, chains, tokens,
# gates, bench at 1k twice. bin/main = main. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
kq_tests bk
for b in main bk; do chain $b '(Q4_K|Q5_K|Q6_K)/.*/.*/graph'; done
wait_synth
el "64 greedy tokens, gates"
tokens_cmp main bk "0.8b-q4_k 0.8b-q5_k 0.8b-q6_k 9b-q4_k 9b-q5_k 9b-q6_k"
gate bk $M/9b-q6_k.gguf 64 256 0
gate bk $M/0.8b-q4_k.gguf 300 256 1
bench_rotation "$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 main bk main bk
el done
