#!/usr/bin/env bash
# Session 75, steps 128-129 as they land (main after them, with the review
# mends: the prompt's ids copied through a pinned buffer, more chunk kernel
# cases). On an H100: every engine/gpu GPU test, four gates, and graph
# decode at 1k of old (main before the steps) and new alternated twice on
# the 0.8B bf16 and q8_0 (the embed kernels, which decode runs, changed).
# On an H200: the tests the steps touch, the gates, prime ms at P = 512 of
# old and new alternated twice, and docs/perf.md's table command on new,
# compared with run410's.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh old=b395a66:bench new=main
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
case $gpu in
*H200*)
  run_tests new 'KernelEmbed|KernelGDN|Prefill|Profile|GraphEqualsEager|SessionFeed|SessionEqualsEager|DecodeMatchesCPU|CacheBufs'
  synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  ;;
*)
  gpu_tests new
  synth new "0.8b" "bf16 q8_0 q4_k"
  S0=$SYNTH
  synth new "9b" "q8_0 bf16"
  SYNTH="$S0 $SYNTH"
  wait_synth
  ;;
esac
el gates
gate new "$M/0.8b-bf16.gguf" 300 64 0
gate new "$M/0.8b-q4_k.gguf" 77 64 1
gate new "$M/9b-q8_0.gguf" 300 32 0
gate new "$M/9b-bf16.gguf" 77 32 1
case $gpu in
*H200*)
  prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf,$M/9b-bf16.gguf" old new old new
  full_table new
  el compare
  ./bin/new/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
*)
  bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" 1024 old new old new
  ;;
esac
el done
