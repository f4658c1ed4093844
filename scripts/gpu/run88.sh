#!/usr/bin/env bash
# Session 13, step 40: Q5_K on the tensor cores (matvec_q4k.cu's kernel with
# a fifth-bit plane, ktile.Q5K). bin/old = f6a4e96 (step 39 and the faster
# Q6_K tiling), bin/new = the change. Every GPU test, Q5_K gates and greedy
# tokens, the Q5_K matvecs' event timing old/new, bench old/new in rotation
# on the Q5_K presets at 1k and 4k, load times of the K-quant presets (old
# and new: Q6_K's tiling after f6a4e96 is in both), and a 9B q8_0 profile at
# 1k for where the time goes.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "q5_k q6_k q8_0"
gpu_tests new
el "Q5_K matvecs, event timing (old, new)"
for b in old new; do
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvec/Q5_K/(24576x4096|12288x4096|4096x12288)' -test.benchtime 100x 2>&1 | grep -E 'Benchmark' | sed "s/^/$b /")
done
wait $SYNTH
el "gates, greedy tokens"
( gate new $M/0.8b-q5_k.gguf 3000 1000 1; gate new $M/0.8b-q6_k.gguf 64 1000 0 ) > $OUT/gates1.txt 2>&1 & g1=$!
( gate new $M/9b-q5_k.gguf 64 600 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
greedy new $M/0.8b-q5_k.gguf
wait $g1 $g2
cat $OUT/gates?.txt
bench_rotation $M/0.8b-q5_k.gguf,$M/9b-q5_k.gguf 1024,4096 old new old new
el "load times (old, new)"
for b in old new; do
  timeout 120 ./bin/$b/bench -model $M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf -ctx 64 -reps 1 -tokens 8 -out /tmp/bn/load-$b 2>/dev/null | grep -E '^\| (0.8b|9b)-q[56]_k \| f16 \| [0-9.]+ \|' | cut -d'|' -f2,4 | sed "s/^/$b /"
done
el "profile 9b-q8_0 (new)"
timeout 60 ./bin/new/bench -model $M/9b-q8_0.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -24
el done
