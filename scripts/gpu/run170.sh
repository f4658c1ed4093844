#!/usr/bin/env bash
# Session 26, after steps 75-76. First every engine/gpu GPU test on main
# (f42c332: step 75 changed matvec_q5_k; run167 ran only the matvec,
# decode and graph tests on it). Then bin/b4 = branch next/q5k-b4: the
# Q5_K kernels under __launch_bounds__(256, 4), 56 and 54 registers, no
# spill (72 under a bound of one). At 1,024 columns (every 0.8B matrix) a
# block's shared memory is ~50 KB, so registers held Q5_K to 3 blocks an SM;
# now 4. At 4,096 and 12,288 columns shared memory holds it to 3 and 2
# either way. Same sums. Prediction: 0.8B Q5_K +1-3% (run167: Q5_K gains
# from more warps an SM at equal bytes in flight), 9B Q5_K within +-1%.
# carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q5_k"
gpu_tests main
el "Q5_K matvec and decode GPU tests (b4)"
(cd engine/gpu && timeout 150 "$R/bin/b4/engine_gpu.test" -test.run 'KernelMatvec/Q5_K|MatvecShared|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest-b4.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-b4.txt" | grep -v "^    --- PASS" | head -20
for b in main b4; do chain $b 'Q5_K/.*/.*/graph'; done
wait_synth
el "64 greedy tokens, gates"
tokens_cmp main b4 "0.8b-q5_k 9b-q5_k"
gate b4 $M/0.8b-q5_k.gguf 64 256 0
gate b4 $M/9b-q5_k.gguf 300 256 1
bench_rotation "$M/0.8b-q5_k.gguf,$M/9b-q5_k.gguf" 1024 main b4 main b4
el done
