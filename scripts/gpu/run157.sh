#!/usr/bin/env bash
# Session 24: bin/main = main (92c0f2b), bin/hl = branch next/q8-narrow-hl
# (matvec_q8_0 with HL = 1: its first loads weak and before the wait, same
# sums), bin/dp = branch next/q8-dp4a (timing only: q8_0 against x quantised
# per 32, dp4a; changes the numbers, so its matvec test is expected to fail
# and prints how far off it is). engine/cuda GPU tests (LoadModuleFile's first
# GPU run), hl's matvec/decode tests, tokens and a gate, then graph chains and
# bench at 1k main/hl/dp twice. carry ["bin"]. ~6 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
el "engine/cuda GPU tests (main)"
(cd engine/cuda && timeout 120 "$R/bin/main/cuda.test" -test.run 'GPU' -test.v -test.timeout 110s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | head -40)
el "matvec and decode GPU tests (hl)"
(cd engine/gpu && timeout 200 "$R/bin/hl/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|LaneScales|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest-hl.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-hl.txt" | grep -v "^    --- PASS" | head -20
el "matvec GPU test (dp, expected to fail: how far off)"
(cd engine/gpu && timeout 100 "$R/bin/dp/engine_gpu.test" -test.run 'KernelMatvec' -test.v -test.timeout 90s > "$OUT/gputest-dp.txt" 2>&1)
grep -E "q8_0" "$OUT/gputest-dp.txt" | head -12
wait_synth
el "64 greedy tokens"
tokens_cmp main hl "0.8b-q8_0 9b-q8_0"
tokens_cmp main dp "0.8b-q8_0 9b-q8_0"
el "gate (hl)"
gate hl $M/0.8b-q8_0.gguf 64 256 0
gate hl $M/9b-q8_0.gguf 300 256 1
for b in main hl dp; do chain $b 'Q8_0/.*/.*/graph'; done
bench_rotation "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 main hl dp main hl dp
el done
