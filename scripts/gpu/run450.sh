#!/usr/bin/env bash
# Session 80, prepared and never run as such: run458.sh took it as its
# H200 part (it ran on an H100, session 84), and run460.sh carries it now;
# still not run on an H200 (no H200 came; the one machine was an H100)
# (`bash scripts/gpu/run450.sh`), for an H200 only:
# docs/perf.md's current table (lib.sh full_table) with main's bench,
# compared with run410's JSON, which steps 127-135 have not had. ~7
# minutes. carry ["bin"]; binaries: `bash scripts/gpu/bins.sh
# p=main:memra,bench` (main after step 135).
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
