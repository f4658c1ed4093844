#!/usr/bin/env bash
# Session 24: bin/main = main after step 71's narrow q8_0 head (b14b8f2):
# every engine/gpu GPU test, three gates, perf.md's full table over an f16
# cache and over FP8 KV; between them bin/dpn = branch next/q8-dp4a-noq
# (timing only: the dp4a q8_0 loop with x never quantised, outputs garbage:
# what the loop costs alone) in graph chains and bench at 1k against main.
# carry ["bin"]. ~9 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests main
wait_synth
el gates
gate main $M/0.8b-bf16.gguf 300 1000 1
gate main $M/9b-q8_0.gguf 64 256 0
gate main $M/0.8b-q8_0.gguf 3000 500 1
full_table main
mv "$OUT/table.tgz" "$OUT/table-f16.tgz"
for b in main dpn; do chain $b 'Q8_0/.*/.*/graph'; done
bench_rotation "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" 1024 main dpn main dpn
rm -rf /tmp/table
full_table main -kv fp8
mv "$OUT/table.tgz" "$OUT/table-fp8.tgz"
el done
