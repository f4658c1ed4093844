#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run461.sh`, asked for as nvidia-h200): run460's
# H200 half alone, since run460 ran on an H100. It came as an H100 and stopped
# at once ("not an H200: nothing to run"). carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=main:memra,bench`.
# On an H200: docs/perf.md's table command (lib.sh full_table) on main,
# compared with run410's JSON, then the 0.8B's and the 9B q8_0's graph-step
# profiles. On any other GPU it stops at once: run460 took that card's profiles.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*) ;;
*) el "not an H200: nothing to run"; exit 0 ;;
esac
synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table m
el compare
./bin/m/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
profile_at m "0.8b-bf16 0.8b-q8_0 9b-q8_0"
grep -A22 '^## Kernel time per graph step' /tmp/prof/stdout.txt
el done
