#!/usr/bin/env bash
# Session 73: run407's table (docs/perf.md's current table command, for
# the H200) on the warm H200 of run409, typed as one command right after
# it (run409's bin.txz: main=main:bench,engine_gpu.test and
# conv=...:memra,bench,gate,engine_gpu.test), so the models came from
# conv's memra synth (the same file writer) and no gate of main's ran:
source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; synth conv "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"; wait_synth; full_table main; el compare; ./bin/main/bench -compare docs/results/h200-run384.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70; el done
