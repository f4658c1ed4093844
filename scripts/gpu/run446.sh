#!/usr/bin/env bash
# Session 79, PREPARED, NOT RUN (no machine came for it, then too little
# device time was left) (`bash scripts/gpu/run446.sh`), for an H200 only: docs/perf.md's
# current table (lib.sh full_table) with step 134's bench, compared with
# run410's JSON, which steps 127-134 have not had. ~8 minutes. carry
# ["bin"]; binaries as for run445.sh (bin/p: the working tree's).
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in *H200*) ;; *) echo "not an H200: no table"; exit 0 ;; esac
synth p "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table p
el compare
./bin/p/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
el done
