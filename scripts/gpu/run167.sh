#!/usr/bin/env bash
# Prepared in session 25, run in session 26 after run166 (docs/results/h200-run167-log.txt). Steps 73-74 found
# that at 4,096 rows the K-quant kernels gain when a shorter ring lets more
# blocks share an SM. The plain kernels (matrices of more than 4,096 rows:
# the 9B gate|up 24576 x 4096 and input projections, norm fused; the 0.8B's
# big ones and logits) are held the same way at 4,096 columns: Q5_K's 3-slot
# ring and x's copy take ~86 KB, 2 blocks an SM (its 72 registers allow 3),
# Q4_K's ~73 KB, 3 (its 56 allow 4). bin/main = main; bin/q4p = branch
# next/q4k-plain-s2 (matvec_q4_k with 2 slots: 4 blocks an SM at 4,096
# columns); bin/q5p = next/q5k-plain-s2 (matvec_q5_k with 2 slots: 3).
# Same sums (the ring does not change their order). Prediction: 9B Q5_K's
# gate|up node ~2 us faster (+2-4% end to end), Q4_K's less; the 0.8B (1,024
# columns: no more blocks fit) within +-1%. Kernel tests for the two types,
# tokens, gates, chains, bench at 1k twice. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q5_k"
for b in q4p q5p; do
  el "K-quant matvec and decode GPU tests ($b)"
  (cd engine/gpu && timeout 150 "$R/bin/$b/engine_gpu.test" -test.run 'KernelMatvec/Q[45]_K|MatvecShared|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-$b.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-$b.txt" | grep -v "^    --- PASS" | head -20
done
for b in main q4p q5p; do chain $b '(Q4_K|Q5_K)/24576x4096/.*/graph'; done
wait_synth
el "64 greedy tokens, gates"
tokens_cmp main q4p "0.8b-q4_k 9b-q4_k"
tokens_cmp main q5p "0.8b-q5_k 9b-q5_k"
gate q4p $M/9b-q4_k.gguf 64 256 0
gate q5p $M/9b-q5_k.gguf 300 256 1
bench_rotation "$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf" 1024 main q4p q5p main q4p q5p
el done
