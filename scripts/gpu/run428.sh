#!/usr/bin/env bash
# Session 76: on an H200, docs/perf.md's current table (lib.sh full_table,
# main; compared with run410's JSON), which steps 127-129 have not had on
# one; on another GPU it says so and stops. Run before run430.sh in one
# call: `bash scripts/gpu/run428.sh; bash scripts/gpu/run430.sh` (~5 minutes
# for the table with its models, run410; TABLE=0 skips it). (Prepared in session 75 as step
# 130's run; that part became run430.sh.)
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test pre127=16afdf8:bench
# (run429.sh's too). Not run in session 76 (no H200 came); its run430 ran
# on binaries built with f and g, which this script does not use.
# Session 77 started it on an H100 asked for as nvidia-h200: it printed
# "not an H200: no table" and stopped (no H200 came that session either).
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in *H200*) ;; *) el "not an H200: no table"; exit 0 ;; esac
[ "${TABLE:-1}" = 1 ] || { el "TABLE=0: no table"; exit 0; }
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table main
el compare
./bin/main/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
el done
