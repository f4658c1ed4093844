#!/usr/bin/env bash
# Session 87 (`bash scripts/gpu/run474.sh`, asked for as nvidia-h200; it
# came as an H100, log docs/results/h100-run474-log.txt with the 2k/4k/8k
# call typed inline after it on the same machine): main
# after step 143 landed (f86fc07, n) against main before it (33c5442, m).
# carry ["bin"]; binaries: `bash scripts/gpu/bins.sh m=33c5442:memra,bench
# n=f86fc07:gate,bench,engine_gpu.test` (both fatbins every architecture).
# On an H200: docs/perf.md's table command on n, compared with run410's
# JSON, and two gates. Elsewhere: m and n in turn twice (graph rows of
# the 0.8B bf16, q8_0 and Q4_K and the 9B q8_0 at 1k and 16k), three gates,
# then every engine/gpu GPU test of n.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table n
  el compare
  ./bin/n/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  el gates
  gate n "$M/0.8b-bf16.gguf" 64 256 0
  gate n "$M/9b-q8_0.gguf" 64 128 0
  ;;
*)
  synth m "0.8b" "bf16 q8_0 q4_k"
  first=$SYNTH
  synth m "9b" "q8_0"
  SYNTH="$first $SYNTH"
  wait_synth
  bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" 1024,16384 m n m n
  el gates
  gate n "$M/0.8b-bf16.gguf" 64 512 0
  gate n "$M/0.8b-q4_k.gguf" 64 256 0
  gate n "$M/9b-q8_0.gguf" 64 128 0
  gpu_tests n
  ;;
esac
el done
