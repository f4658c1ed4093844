#!/usr/bin/env bash
# PREPARED, NOT RUN: session 88's one call got no machine (a failed start of
# 161 s), leaving 379 s of device time, too little for the ~330 s it takes.
# Session 88 (`bash scripts/gpu/run477.sh`, asked for as nvidia-h200): docs/
# perf.md's table command on main after steps 143 and 144. On an H200 it is
# run461's: the table compared with run410's, then the graph-step profiles
# of the 0.8B and the 9B q8_0. On any other GPU the same table compared with
# run467's (session 85's main on an H100), the table perf.md's "The same
# command on an H100" sections keep. carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=b0fcddd:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table m
el compare
case $gpu in
*H200*)
  ./bin/m/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  profile_at m "0.8b-bf16 0.8b-q8_0 9b-q8_0"
  grep -A22 '^## Kernel time per graph step' /tmp/prof/stdout.txt
  ;;
*)
  ./bin/m/bench -compare docs/results/h100-run467.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
esac
el done
