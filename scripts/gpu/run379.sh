#!/usr/bin/env bash
# Session 69, the second call on the H200 after run368.sh (its table): every
# engine/gpu GPU test of main on the H200 (none ran there since session 62
# that this repository holds), then run377.sh's r8p measurement (the plain
# 16-bit batch kernels with 8 rows a warp, scripts/gpu/patches/mvb/r8p.patch)
# on the same card. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test \
#     old=de47370:bench r8p=main+scripts/gpu/patches/mvb/r8p.patch:gate,bench,engine_gpu.test
# (run368.sh's and run377.sh's together). ~7 min on an H200.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
gpu_tests main
synth main "0.8b 9b" "bf16"
run_tests r8p 'Batch|Prefill|Chunk'
mvb_bench '(BF16|F16)/.*/n8/' main r8p main r8p
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" main r8p main r8p
# Why the 0.8B Q3_K and IQ4_XS primed more slowly than Q6_K (perf.md step
# 104, not looked into): their batch launches on the 0.8B shapes.
mvb_bench '(Q3_K|IQ4_XS|Q6_K|Q4_K)/(7168x1024|1024x3584|1024x2048)/n8/' main
el "gates (r8p)"
gate r8p "$M/9b-bf16.gguf" 300 32 0
gate r8p "$M/0.8b-bf16.gguf" 300 128 1
el done
