#!/usr/bin/env bash
# Session 88 (`bash scripts/gpu/run475.sh`, asked for as nvidia-h200; it
# came as an H100, log docs/results/h100-run475-log.txt with the two calls
# typed inline after it): prepared in session 87, whose device time ran
# out in failed starts. Step
# 143's fused launch only where a split block serves one q head (r: main
# at 2263c43: the rule of 44d3663, the test mends of b9ebf6a and 2263c43) against
# main before the step (33c5442, m) and with the launch at every bucket
# (f86fc07, n), after run474 had n lose past 2k. carry ["bin"]; binaries:
# `bash scripts/gpu/bins.sh m=33c5442:memra,bench n=f86fc07:bench
# r=2263c43:memra,gate,bench,engine_gpu.test`.
# Everywhere: the GPU tests the rule touches, a gate whose steps cross from
# the fused buckets to the unfused ones (0.8B bf16 from 2,048 tokens: 32 to
# 34 splits), a q8_0 gate. On an H200 then run461's table on r (main),
# compared with run410's, and its graph-step profiles; elsewhere m, n and r
# once each, graph rows of the 0.8B bf16 and q8_0 at 1k and 4k.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*) synth r "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k" ;;
*) synth r "0.8b" "bf16 q8_0" ;;
esac
wait_synth
el "GPU tests (r)"
(cd engine/gpu && timeout 120 "$R/bin/r/engine_gpu.test" -test.run 'PrepInSplit|AttnPrepSplit|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|OmitParts|EarlyLoads|ProfileStepBytes|ProfileGraphStep' -test.v -test.timeout 110s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
el gates
gate r "$M/0.8b-bf16.gguf" 2048 128 0
gate r "$M/0.8b-q8_0.gguf" 64 512 0
case $gpu in
*H200*)
  full_table r
  el compare
  ./bin/r/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  profile_at r "0.8b-bf16 0.8b-q8_0 9b-q8_0"
  grep -A22 '^## Kernel time per graph step' /tmp/prof/stdout.txt
  ;;
*)
  bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" 1024,4096 m n r
  ;;
esac
el done
