#!/usr/bin/env bash
# Session 90 (`bash scripts/gpu/run482.sh`, asked for as nvidia-h200; it
# came as an H100, log docs/results/h100-run482-log.txt with the profile
# call typed inline after it on the same machine): step
# 147, the matvecs' trigger of their dependents moved from a block's last
# unit to just after its wait (scripts/gpu/patches/launch/trigger.patch).
# carry ["bin"]; binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# m=d7a5248:memra,bench t=d7a5248+scripts/gpu/patches/launch/trigger.patch:memra,bench,gate,engine_gpu.test`.
# On an H200: docs/perf.md's table command on main (m), compared with
# run410's JSON (the A/B then follows in a second call). Elsewhere: m and t
# in turn twice (graph rows of the 0.8B bf16, q8_0 and Q4_K and the 9B
# q8_0 at 1k), greedy tokens of m and t compared, three gates of t,
# and t's matvec, decode and graph GPU tests.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table m
  el compare
  ./bin/m/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
*)
  synth m "0.8b" "bf16 q8_0 q4_k"
  first=$SYNTH
  synth m "9b" "q8_0"
  SYNTH="$first $SYNTH"
  wait_synth
  bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" 1024 m t m t
  el tokens
  tokens_cmp m t "0.8b-bf16 0.8b-q8_0 0.8b-q4_k 9b-q8_0"
  el gates
  gate t "$M/0.8b-bf16.gguf" 64 256 0
  gate t "$M/0.8b-q4_k.gguf" 64 256 0
  gate t "$M/9b-q8_0.gguf" 64 128 0
  el "matvec, decode and graph GPU tests (t)"
  (cd engine/gpu && timeout 200 "$R/bin/t/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    " | head -30
  ;;
esac
el done
