#!/usr/bin/env bash
# Session 24: bin/main = main (b14b8f2), bin/w2 = branch next/bf16-wide-hl2
# (the wide f16/bf16 matvecs with HL = 2: a lane's whole share of a
# 3,584-column unit before the wait, 92 registers, 2 blocks an SM; same
# sums). Matvec and decode GPU tests (w2), 64 greedy tokens main == w2 on
# 0.8B bf16, a gate, the bf16 graph chains and bench at 1k main/w2 twice.
# carry ["bin"]. ~4 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16"
el "matvec and decode GPU tests (w2)"
(cd engine/gpu && timeout 200 "$R/bin/w2/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest-w2.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-w2.txt" | grep -v "^    --- PASS" | head -20
wait_synth
el "64 greedy tokens"
tokens_cmp main w2 "0.8b-bf16"
gate w2 $M/0.8b-bf16.gguf 64 256 0
for b in main w2; do chain $b 'BF16/1024x.*/.*/graph'; done
bench_rotation "$M/0.8b-bf16.gguf" 1024 main w2 main w2
el done
