#!/usr/bin/env bash
# Session 13, step 39: Q6_K on the tensor cores in the engine (matvec_q6k.cu,
# tiled weights). bin/old = ce0c9bb (main with step 38), bin/new = the
# change. Every GPU test, gates on Q6_K and the goal presets, greedy tokens
# on Q6_K, the Q6_K matvecs' event timing old/new (BenchmarkGPUMatvec),
# bench old/new in rotation on the Q6_K presets at 1k and 4k (two rounds),
# then docs/perf.md's full table with new.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
synth new "0.8b 9b" "bf16 q8_0 q4_k q6_k"
gpu_tests new
el "Q6_K matvecs, event timing (old, new)"
for b in old new; do
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvec/Q6_K/(24576x4096|12288x4096|4096x12288)' -test.benchtime 100x 2>&1 | grep -E 'Benchmark' | sed "s/^/$b /")
done
wait $SYNTH
el "gates, greedy tokens"
( gate new $M/0.8b-q6_k.gguf 3000 1000 1; gate new $M/0.8b-bf16.gguf 300 2000 0 ) > $OUT/gates1.txt 2>&1 & g1=$!
( gate new $M/9b-q6_k.gguf 64 600 0; gate new $M/9b-q8_0.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
greedy new $M/0.8b-q6_k.gguf
wait $g1 $g2
cat $OUT/gates?.txt
bench_rotation $M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf 1024,4096 old new old new
el "bench (full table, new)"
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
mkdir -p $OUT/table
timeout 300 ./bin/new/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out $OUT/table 2>$OUT/table/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
el done
