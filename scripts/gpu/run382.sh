#!/usr/bin/env bash
# Session 69: run381.sh cut again to the device time left (~6 min of budget
# after eleven failed starts), most wanted first so that a cut-off run
# still answers: r8p's batch and prefill tests, the 16-bit batch launches
# for 8 tokens (main, r8p), prime ms at P=512 on the 0.8B bf16 (main, r8p,
# main, r8p), then on the 9B bf16 (main, r8p). Same binaries as run377.sh.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b" "bf16"
small=$SYNTH
synth main "9b" "bf16"
big=$SYNTH
run_tests r8p 'Batch|Prefill'
mvb_bench '(BF16|F16)/.*/n8/' main r8p
SYNTH=$small; wait_synth
prime_ab "$M/0.8b-bf16.gguf" main r8p main r8p
mv "$OUT/bench-prime.tgz" "$OUT/bench-prime-0.8b.tgz"
SYNTH=$big; wait_synth
prime_ab "$M/9b-bf16.gguf" main r8p
el done
