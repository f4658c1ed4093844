#!/usr/bin/env bash
# Session 63, on an H200 only (run353 got an H100): docs/perf.md's full table
# (run303's command) on main with the mixed launch (one-type files launch as
# before), the 0.8B and 9B Q4_K_M at the same contexts, gates on 0.8B q8_0
# and 9B q8_0, and bench -compare against run303. carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
# The table is the H200's: on another card stop here (its tok/s would not compare).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { el "not an H200: no table"; exit 0; }
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k q4_k_m"
wait_synth
el "gates"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/9b-q8_0.gguf" 64 64 0
full_table main
el "bench Q4_K_M"
mkdir -p /tmp/qkm
timeout 120 ./bin/main/bench -model "$M/0.8b-q4_k_m.gguf,$M/9b-q4_k_m.gguf" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/qkm \
  2>/tmp/qkm/stderr.txt | grep -E '\| (graph|sampled) \|' | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/qkm.tgz" -C /tmp qkm
el "compare with run303"
./bin/main/bench -compare docs/results/h200-run303.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -60
el done
