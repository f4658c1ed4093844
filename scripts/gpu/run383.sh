#!/usr/bin/env bash
# Session 70, after step 121 landed r8p (8 rows a warp in the plain 16-bit
# batch kernels): the committed fatbin's batch, chunk and prefill GPU tests,
# gates, and the goal rows' bench (0.8B and 9B, bf16 and q8_0, graph decode
# at 64, 1k and 4k, with prime ms) on main; on an H200, bench -compare
# against run352 (session 62, the last H200 table). carry ["bin"]; binaries
# from `bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test`.
# ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
run_tests main 'Batch|Prefill|Chunk'
synth main "0.8b 9b" "bf16 q8_0"
wait_synth
el "gates"
gate main "$M/9b-bf16.gguf" 300 32 0
gate main "$M/0.8b-q8_0.gguf" 64 128 1
el "bench (goal rows)"
mkdir -p /tmp/table
timeout 240 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf" \
  -ctx 64,1024,4096 -reps 3 -tokens 64 -out /tmp/table > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
echo "bench rc $?"
grep -E '\| (graph|sampled|eager) \|' /tmp/table/stdout.txt | cut -d'|' -f2,3,4,5,6,9,13
grep -E 'prime|copy' /tmp/table/stderr.txt | head -8
tar czf "$OUT/table.tgz" -C /tmp table
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  el "compare with run352 (H200)"
  ./bin/main/bench -compare docs/results/h200-run352.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -40
fi
el done
