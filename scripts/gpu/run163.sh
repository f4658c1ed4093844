#!/usr/bin/env bash
# Session 25, step 73: ring depths of the wide K-quant kernels (step 72's
# partsr found its one-part Q6_K wide kernel, 2 ring slots, 1.0 us faster
# on 4096 x 12288). bin/main = main (4f49714); bin/q6 = branch
# next/q6k-wide-s2 (the wide Q6_K ring 2 slots instead of 3: 2 blocks an
# SM at 12,288 columns; the same sums, whatever the ring); bin/q56 = branch
# next/q5k-wide-s2 (q6, and the wide Q5_K ring 2 slots instead of 4 with
# MatvecWide taking Q5_K up to 4,096 rows, as Q4_K and Q6_K). Matvec and
# decode GPU tests (q56), greedy tokens main == q6 == q56 (Q6_K; main ==
# q56 on Q5_K, whose 4,096-row kernel changes: KW8 against KW4, so not
# bit-equal there), gates, chains, bench at 1k twice. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q5_k q6_k"
el "matvec and decode GPU tests (q56)"
(cd engine/gpu && timeout 200 "$R/bin/q56/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest-q56.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-q56.txt" | grep -v "^    --- PASS" | head -20
for b in main q6 q56; do chain $b '(Q5_K|Q6_K)/(4096x12288|4096x4096)/.*/graph'; done
wait_synth
el "64 greedy tokens"
tokens_cmp main q6 "0.8b-q6_k 9b-q6_k"
tokens_cmp main q56 "0.8b-q6_k 9b-q6_k 0.8b-q5_k 9b-q5_k"
el "gates, greedy"
gate q56 $M/9b-q6_k.gguf 64 256 0
gate q56 $M/9b-q5_k.gguf 300 256 1
gate q56 $M/0.8b-q5_k.gguf 64 256 0
greedy q56 $M/0.8b-q5_k.gguf
bench_rotation "$M/9b-q5_k.gguf,$M/9b-q6_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 main q6 q56 main q6 q56
el done
