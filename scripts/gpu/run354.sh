#!/usr/bin/env bash
# Session 63, on an H200 only (run353 got an H100), most wanted first, for
# a call that may be cut short: the mixed launch on the 0.8B and 9B Q4_K_M
# (graph decode at 64 and 1k, MEMRA_MIX=0 and =1 in turn, two rounds; gates
# with it), gates on 0.8B and 9B q8_0, then docs/perf.md's full table
# (run303's command) on main and bench -compare against run303. carry
# ["bin"], binaries from `bash scripts/gpu/bins.sh main=main:memra,gate,bench`.
# ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
# The tables are the H200's: on another card stop here (its tok/s would not compare).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { el "not an H200: nothing run"; exit 0; }
synth main "0.8b 9b" "q4_k_m"
wait_synth
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
rest=$SYNTH
el "gates (Q4_K_M, mixed)"
gate main "$M/0.8b-q4_k_m.gguf" 300 128 0
gate main "$M/9b-q4_k_m.gguf" 300 64 1
mix_ab "$M/0.8b-q4_k_m.gguf,$M/9b-q4_k_m.gguf" 2
SYNTH=$rest
wait_synth
el "gates (q8_0)"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
full_table main
el "compare with run303"
./bin/main/bench -compare docs/results/h200-run303.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -60
el done
