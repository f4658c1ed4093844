#!/usr/bin/env bash
# Session 75, with the device time left (~370 s): docs/perf.md's table
# command on main after steps 128-129, compared with run410's, if the
# machine is an H200; on any other GPU nothing (its numbers would not be
# the H200 table's). carry ["bin"]; binaries of run426
# (bash scripts/gpu/bins.sh old=b395a66:bench new=main).
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
case $gpu in
*H200*) ;;
*) echo "not an H200: no table"; exit 0 ;;
esac
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table new
el compare
./bin/new/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
el done
