#!/usr/bin/env bash
# Session 72: main at 5b326bb (ProfilePrefill, its test counting the
# embedding rows): every engine/gpu GPU test, then bench -profile 4 on the
# 0.8B bf16 and q8_0 at 1k (the step tables and the new prefill chunk
# tables, 16-bit and q8_0 batch kernels). carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test
# ~5 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
gpu_tests main
synth main "0.8b" "bf16 q8_0"
wait_synth
el "bench -profile 4 (0.8b bf16, q8_0)"
mkdir -p /tmp/prof
timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -profile 4 -sampled=false -out /tmp/prof > "$OUT/prof-0.8b.md" 2> /tmp/prof/stderr.txt
echo "rc $?"
grep -E 'prime|profile|graph' /tmp/prof/stderr.txt | head -12
awk '/per prefill chunk/{p=1; n=0} p&&/^(\||##)/{print; if (++n>10) p=0}' "$OUT/prof-0.8b.md"
el done
