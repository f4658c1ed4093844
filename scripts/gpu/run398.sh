#!/usr/bin/env bash
# Session 72: main at aa5eafb+ (the kernel tables indexed once; a prefill
# profile's norm bytes on the stage launch): the profile, prefill, graph
# and decode GPU tests, gates on the 0.8B bf16 and Q4_K and the 9B
# excluded for time, and bench -profile 2 on the 0.8B Q4_K (the stage
# launches' bytes). carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test
# ~2 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth main "0.8b" "bf16 q4_k"
run_tests main 'TestGPUProfile|TestGPUPrefillMatchesTokenFeed|TestGPUGraphEqualsEager|TestGPUSessionEqualsEager'
wait_synth
el "gates (main)"
gate main "$M/0.8b-bf16.gguf" 300 128 0
gate main "$M/0.8b-q4_k.gguf" 300 128 1
el "bench -profile 2 (0.8b q4_k)"
timeout 100 ./bin/main/bench -model "$M/0.8b-q4_k.gguf" -ctx 64 -reps 3 -tokens 16 -prompt 512 -profile 2 -sampled=false -out /tmp/p > /tmp/p.md 2> /tmp/p.txt
echo "rc $?"
grep -E 'prime|prefill profile' /tmp/p.txt
awk '/per prefill chunk/{p=1} p&&/^\|/{print; if (++n>8) exit}' /tmp/p.md
el done
