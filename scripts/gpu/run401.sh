#!/usr/bin/env bash
# Session 72, a last try cut to the device time left (run400 without the
# 9B): on an H200 only, main's 0.8B bf16 and q8_0 at 1k against run384
# (bench -compare): graph rows as before, eager and prime ms after step
# 124's host change. On any other GPU it stops at once. carry ["bin"];
# binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench
# ~1.5 min on an H200.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case $gpu in *H200*) ;; *) el "not an H200: nothing to run"; exit 0 ;; esac
synth main "0.8b" "bf16 q8_0"
wait_synth
mkdir -p /tmp/goal
timeout 100 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/goal > /tmp/goal/stdout.txt 2> /tmp/goal/stderr.txt
echo "rc $?"
grep -E 'prime|ctx +1024 (graph|eager)' /tmp/goal/stderr.txt
./bin/main/bench -compare docs/results/h200-run384.json "$(ls -t /tmp/goal/bench-*.json | head -1)" 2>&1 | tail -20
tar czf "$OUT/goal.tgz" -C /tmp goal
el done
