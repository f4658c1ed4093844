#!/usr/bin/env bash
# Session 82 (`bash scripts/gpu/run456.sh`), typed on the H100 that ran
# run455 while it was warm (asked for as nvidia-h200): docs/perf.md's
# table command (lib.sh full_table) on main (a0ed9f4) with the ten synth
# presets, compared with run356's H100 table (session 64). Log
# docs/results/h100-run456-log.txt; report docs/results/h100-run456.md
# with JSON and SVG. ~5 minutes. carry ["bin"]; binaries: run455's (m's
# bench is main's; p's memra only synthesises the models).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth p "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table m
el compare
./bin/m/bench -compare docs/results/h100-run356.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
el done
