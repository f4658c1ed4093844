#!/usr/bin/env bash
# Session 87 (`bash scripts/gpu/run473.sh`, asked for as nvidia-h200; it
# came as an H100, log docs/results/h100-run473-log.txt):
# run461's H200 table where the card is an H200, else run472's A/B of step
# 143 (the device has given H100s for H200 requests since session 74).
# carry ["bin"]; binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# m=main:memra,bench a=9ac22d6+scripts/gpu/patches/attn/prepsplit.patch:bench
# p=9ac22d6+scripts/gpu/patches/attn/prepsplit-staged.patch:bench` at 33c5442
# (main's code is 9ac22d6's but for a comment, so m stands for run472's o;
# BINS_ARCHS applies to the patched a and p only).
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
  profile_at m "0.8b-bf16 0.8b-q8_0 9b-q8_0"
  grep -A22 '^## Kernel time per graph step' /tmp/prof/stdout.txt
  ;;
*)
  synth m "0.8b" "bf16 q8_0"
  first=$SYNTH
  synth m "9b" "q8_0"
  SYNTH="$first $SYNTH"
  wait_synth
  bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 m a p m a p m a p
  ;;
esac
el done
