#!/usr/bin/env bash
# Session 70, on the H200 that ran run383.sh, kept warm: docs/perf.md's
# full table (run303's command, full_table) on main after step 121 and
# bench -compare against run303. It ran as this one command line in the
# device call; kept here as it ran. carry ["bin"], run383's binaries
# (`bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test`).
# ~4.5 min (the bf16 and q8_0 models were already in /tmp/models).
source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"; wait_synth; full_table main; el compare; ./bin/main/bench -compare docs/results/h200-run303.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -75; el done
