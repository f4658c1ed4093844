#!/usr/bin/env bash
# Session 26, after step 75. The K-quant ring (mvring.cuh) freed a slot
# only after its sums, so S slots held S - 1 tiles in flight while a warp
# summed: with 2 slots one. run167 found Q5_K faster with 2 slots and more
# blocks an SM, Q4_K slower (fewer tile bytes in flight). bin/ra = branch
# next/ring-ahead: each lane reads its share of the slot into registers,
# then the slot takes the next copy before the sums, S in flight (Q4_K 56
# -> 72 registers, blocks an SM unchanged at the presets' shapes; Q5_K and
# Q6_K bounded to 3 blocks an SM, 80 registers, no spill). Same sums.
# Prediction: the latency-bound 4,096-row nodes (2 slots, 1 -> 2 in
# flight) 5-15% faster, 9B K-quants +2-5%, 0.8B +0-2%. bin/main = main
# (f42c332). Kernel and decode tests, chains, tokens, gates, bench at 1k
# twice. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k q6_k"
el "K-quant matvec and decode GPU tests (ra)"
(cd engine/gpu && timeout 200 "$R/bin/ra/engine_gpu.test" -test.run 'KernelMatvec/Q[456]_K|MatvecShared|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 190s > "$OUT/gputest-ra.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-ra.txt" | grep -v "^    --- PASS" | head -20
for b in main ra; do chain $b '(Q4_K|Q5_K|Q6_K)/.*/.*/graph'; done
wait_synth
el "64 greedy tokens, gates"
tokens_cmp main ra "0.8b-q4_k 0.8b-q5_k 0.8b-q6_k 9b-q4_k 9b-q5_k 9b-q6_k"
gate ra $M/9b-q6_k.gguf 64 256 0
gate ra $M/9b-q5_k.gguf 300 256 1
gate ra $M/0.8b-q4_k.gguf 64 256 0
bench_rotation "$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 main ra main ra
el done
