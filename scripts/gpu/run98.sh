#!/usr/bin/env bash
# Session 14, step 44: graph replays queued one ahead of the token read-back
# (ContinueGraphFunc queues replay i+1 before waiting for token i), so the
# GPU does not wait on the host between tokens. bin/old = main (d605126),
# bin/new = the change. Every GPU test (TestGPUGraphStopRunsAhead new),
# gates, greedy tokens cuda == cpu, bench old/new in rotation at 1k and 4k
# (two rounds), then the full table with new on every preset.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests new
el "gates, greedy"
gate new $M/0.8b-bf16.gguf 300 1000 0
gate new $M/0.8b-q8_0.gguf 3000 600 1
gate new $M/9b-bf16.gguf 64 400 0
greedy new $M/0.8b-q8_0.gguf
ALL4=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
bench_rotation $ALL4 1024,4096 old new old new
wait $SYNTH
el "bench (full table, new)"
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf
mkdir -p $OUT/table
timeout 280 ./bin/new/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out $OUT/table 2>$OUT/table/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
el done
