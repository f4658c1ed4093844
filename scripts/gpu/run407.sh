#!/usr/bin/env bash
# Session 73: run403 (stopped at once on an H100) again, on main after
# step 125, for an H200 only: docs/perf.md's full table (run384's
# command, full_table), where steps 124 and 125 move the eager and prime
# columns (graph rows as before: 0.995-1.005 of run384 expected), then
# bench -compare against run384 and three gates. On another GPU it stops
# at once.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,gate
# ~7 min on a fresh H200 (synth of ten models, then the table).
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case $gpu in *H200*) ;; *) el "not an H200: nothing to run"; exit 0 ;; esac
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table main
el compare
./bin/main/bench -compare docs/results/h200-run384.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -80
el gates
gate main "$M/0.8b-bf16.gguf" 64 128 0
gate main "$M/0.8b-q8_0.gguf" 64 128 1
gate main "$M/9b-q8_0.gguf" 300 32 0
el done
