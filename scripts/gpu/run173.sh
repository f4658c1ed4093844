#!/usr/bin/env bash
# Prepared in session 26, run in session 27 (perf.md step 79; ris merged).
# Step 78 found the big K-quant nodes
# limited by instruction issue and the integer pipe, and counted the loop
# that sums an item: ~65 of Q4_K's 327 instructions issue the next tile's
# copy (each lane's five 16-byte chunks got their own 64-bit address, and
# the slot was taken modulo 3). bin/ri = branch next/ring-issue: the copies
# at immediate offsets from one address pair, slots counted (loops Q4_K
# 327 -> 298, Q5_K 424 -> 392, Q6_K 518 -> 475; registers Q4_K 56 -> 51,
# Q5_K 72 -> 68, Q6_K 79 -> 80: no shape loses a block an SM). bin/ris =
# next/ring-issue-step: that, and the next unit's address stepped rather
# than recomputed (Q4_K 289, Q5_K 389, Q6_K 480; Q4_K 66 registers, still
# 3 blocks at 4,096 columns). bin/zp = next/ring-zpad: ri, and every lane
# loads every run's B fragment, zeros from a shared pad (784 bytes) for the
# runs it does not hold, instead of zeroing registers and predicating the
# load (Q4_K 297, Q5_K 391, Q6_K 459). Same tiles, same order of sums. Prediction:
# if issue-bound as step 78 says, ri's big nodes ~5-8% faster, 9B K-quants
# +3-6%, the 0.8B +1-2%; steps 76-77 warn that register and schedule
# changes can lose several percent whatever the count. bin/main = main.
# Kernel and decode tests of the three branches, chains, tokens, gates, bench
# at 1k twice (four binaries: ~8-9 minutes, near the 10-minute limit). carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
for b in ri ris zp; do kq_tests $b; done
for b in main ri ris zp; do chain $b '(Q4_K|Q5_K|Q6_K)/.*/.*/graph'; done
wait_synth
el "64 greedy tokens, gates"
tokens_cmp main ri "0.8b-q4_k 0.8b-q5_k 0.8b-q6_k 9b-q4_k 9b-q5_k 9b-q6_k"
tokens_cmp main ris "9b-q4_k 0.8b-q5_k"
tokens_cmp main zp "9b-q6_k 0.8b-q6_k"
gate ri $M/9b-q4_k.gguf 64 256 0
gate ri $M/9b-q6_k.gguf 300 256 1
gate ris $M/0.8b-q5_k.gguf 64 256 0
gate zp $M/9b-q6_k.gguf 64 256 0
bench_rotation "$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 main ri ris zp main ri ris zp
el done
