#!/usr/bin/env bash
# Session 17's final tree: no kernel changed (step 55's variants were not
# kept); GenerateGraph no longer rewrites the draw parameters Reserve has
# just written. Every GPU test, a greedy gate and a sampled CLI run on
# 0.8B q8_0 with FP8 KV. Build (here): bin/new; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b" "q8_0"
gpu_tests new
wait $SYNTH
el "gate, sampled run"
gate new $M/0.8b-q8_0.gguf 300 1000 1
MEMRA_KV_FP8=1 timeout 100 ./bin/new/memra run -m $M/0.8b-q8_0.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --seed 7 -device cuda 2>&1 | tail -2
el done
