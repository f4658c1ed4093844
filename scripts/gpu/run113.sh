#!/usr/bin/env bash
# Session 16, the review's mends: sample_draw writes a trace (random
# number, candidates kept, probabilities) that TestGPUKernelSampleDraw
# compares with the host's bit for bit; topk_select's guard; the draw
# parameters written at Reserve; the CLI allocating one cache (graph path or
# Session) and keeping --ctx on the graph path. Every GPU test, 2 gates, the
# bench's graph and sampled rows at 1k, the CLI on each path (greedy,
# sampled on the device, sampled with a repetition penalty on the host) and
# a --ctx too small for the graph path.
# Build (here): as run111 (new only); carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
gpu_tests new
grep -E "case [0-9]" "$OUT/gputest.txt" | head -9
wait $SYNTH
gate new $M/0.8b-q8_0.gguf 300 1000 1
gate new $M/9b-bf16.gguf 64 256 0
mkdir -p /tmp/bn
timeout 200 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf -ctx 1024 -reps 3 -tokens 64 -out /tmp/bn 2>/dev/null \
  | grep -E '\| (graph|sampled) \||^\| [0-9]' | cut -d'|' -f2,4,5,6,9,12,13,14
for a in "--greedy" "--seed 7" "--seed 7 --repeat-penalty 1.1"; do
  for i in 1 2; do
    echo "0.8b-bf16 $a: $(timeout 60 ./bin/new/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 128 $a -device cuda 2>&1 >/dev/null | grep generated)"
  done
done
echo "ctx too small: $(timeout 60 ./bin/new/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 128 --ctx 64 -device cuda 2>&1 >/dev/null | tail -1)"
el done
