#!/usr/bin/env bash
# Session 14, step 43: the attention splits' first 64 keys staged in shared
# memory by cp.async before the wait (branch next/attn-stage). bin/old =
# main (d605126), bin/new = the branch. Every GPU test; gates across the
# buckets, with FP8 KV, and one past the 9B split cap (chunks of 65+ keys:
# staged and streamed trips in one block); greedy tokens cuda == cpu; bench
# old/new in rotation at 1k, 4k, 32k (two rounds); then the split's in-graph
# cost (-omit attn-split) and its standalone time (-profile) on new.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
gpu_tests new
wait $SYNTH
el "gates, greedy"
gate new $M/0.8b-bf16.gguf 300 1000 0
gate new $M/0.8b-q8_0.gguf 3000 600 1
gate new $M/9b-q8_0.gguf 64 400 1
gate new $M/9b-bf16.gguf 6400 200 0
greedy new $M/0.8b-q8_0.gguf
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
bench_rotation $ALL 1024,4096,32768 old new old new
el "omit attn-split, profile (new)"
for p in none attn-split; do
  o=""; [ $p != none ] && o="-omit $p"
  d=/tmp/om/$p; mkdir -p $d
  timeout 120 ./bin/new/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 $o -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6 | sed "s/^/$p /"
done
mkdir -p $OUT/prof
timeout 150 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/9b-bf16.gguf -ctx 1024,32768 -reps 3 -tokens 64 -profile 8 -out $OUT/prof > $OUT/prof/table.txt 2>&1
grep -E 'profile:|attn_' $OUT/prof/table.txt | head -30
el done
