#!/usr/bin/env bash
# Session 85 (the device call ran these lines as one command, on the H100
# that run461's last call had found, not an H200; log
# docs/results/h100-run467-log.txt, tables h100-run467.{md,json,svg}):
# docs/perf.md's table command on main after step 140 (2782007), compared
# with run456's (session 82, main after step 138, another H100). carry
# ["bin"]; binaries: `bash scripts/gpu/bins.sh m=main:memra,bench` at 2782007.
# Graph rows at 1k against run456: 0.8B bf16 1.009, q8_0 1.014, the 9B
# 1.021-1.029, but 0.8B Q5_K 0.968 and Q6_K 0.967: across two machines, so
# run468 is the A/B of those on one.
set -u; source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"; wait_synth; full_table m; el compare; ./bin/m/bench -compare docs/results/h100-run456.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | grep -E "graph|geomean" | head -60; cp $(ls -t /tmp/table/bench-*.json | head -1) $OUT/table.json; cp $(ls -t /tmp/table/bench-*.md | head -1) $OUT/table.md; el done
