#!/usr/bin/env bash
# Session 69: run377.sh cut to fit what device time was left after failed
# starts (~2.5 min on an H100): r8p's batch and prefill tests, the 16-bit
# batch launches for 8 tokens, prime ms at P=512 on the 0.8B and 9B bf16
# (main, r8p, main), the 9B bf16 gate on r8p. Same binaries as run377.sh.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "bf16"
run_tests r8p 'Batch|Prefill'
mvb_bench '(BF16|F16)/.*/n8/' main r8p
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" main r8p main
gate r8p "$M/9b-bf16.gguf" 300 32 0
el done
