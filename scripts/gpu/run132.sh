#!/usr/bin/env bash
# Prepared in session 18 for a later GPU session (the device was withdrawn
# after run129): main's tree with step 57 (the wave kernel), every GPU test,
# 3 gates, then docs/perf.md's full table (run114's command), tarred. Run it
# on main as it stands, after merging whichever of next/linear-norm
# (run130.sh) and next/attn-8warp (run131.sh) paid.
# Build (here): bin/new from main (gate, memra, bench, engine_gpu.test);
# carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests new
wait $SYNTH
el gates
gate new $M/0.8b-bf16.gguf 300 1000 1
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/9b-q4_k.gguf 300 256 1
el "bench (full table)"
mkdir -p /tmp/table
timeout 330 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf \
  -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/table > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
grep -E '\| (graph|sampled) \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf $OUT/table.tgz -C /tmp table
el done
