#!/usr/bin/env bash
# Prepared in session 12 for the next GPU session (branch next/prologue-loads):
# gdn_conv loads its taps and conv state, rmsnorm_gated its weight and gate,
# attn_prep the position, its rope cos/sin (float64) and norm weights, and
# attn_split prefetches its first 64 keys into L2, before griddepcontrol.wait
# (what kernels two or more back wrote; spec_test.go checks the
# trigger-after-wait order, in the source and in the SASS, and
# TestGPUEarlyLoadsFollowNoWriter the launch order). bin/old = main, bin/new =
# the branch. Every GPU test, 4 gates (FP8 on and off, one at P = 3,000),
# greedy tokens, bench at 1k and 4k old/new alternating (two rounds), a 0.8B
# profile.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
gpu_tests new
wait $SYNTH
el "gates, greedy tokens"
( gate new $M/0.8b-bf16.gguf 300 2000 0; gate new $M/0.8b-q8_0.gguf 3000 1000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( gate new $M/9b-q8_0.gguf 64 1000 1; gate new $M/9b-bf16.gguf 1500 600 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
greedy new $M/0.8b-q8_0.gguf
wait $g1 $g2
cat $OUT/gates?.txt
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf 1024,4096 old new old new
el "profile 0.8b-bf16 (new)"
timeout 60 ./bin/new/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -14
el done
