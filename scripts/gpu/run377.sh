#!/usr/bin/env bash
# Session 68, after run376 (run372's variants on an H100): r8all's 9B bf16
# priming gain (-5.0%) came from the plain 16-bit batch kernels with 8
# rows a warp, while r8's wide kernels with 8 rows cost the 0.8B bf16
# (+4%). r8p: the plain f16/bf16 batch kernels with 8 rows a warp (one
# block an SM), the wide ones as main (scripts/gpu/patches/mvb/r8p.patch,
# on 6a5965c). Its batch and prefill tests, BenchmarkGPUMatvecBatch 16-bit
# for 8 tokens and prime ms at P=512 on the 0.8B and 9B bf16 (main, r8p
# alternated twice), gates. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test \
#     r8p=main+scripts/gpu/patches/mvb/r8p.patch:gate,bench,engine_gpu.test
# ~3 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "bf16"
run_tests r8p 'Batch|Prefill|Chunk'
mvb_bench '(BF16|F16)/.*/n8/' main r8p main r8p
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" main r8p main r8p
el "gates (r8p)"
gate r8p "$M/9b-bf16.gguf" 300 32 0
gate r8p "$M/0.8b-bf16.gguf" 300 128 1
el done
