#!/usr/bin/env bash
# Session 63, the call after run353.sh on the same machine where it stays
# warm: docs/perf.md's full table (run303's command) on main with the mixed
# launch (its one-type files launch as before), gates on 0.8B q8_0 and 9B
# q8_0, and bench -compare against run303. run353's mixed files are removed
# first: the ten models take ~45 GB of the 64. carry ["bin"]. ~6 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
rm -f "$M"/*_k_m.gguf
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
el "gates"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
full_table main
el "compare with run303"
./bin/main/bench -compare docs/results/h200-run303.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -60
el done
