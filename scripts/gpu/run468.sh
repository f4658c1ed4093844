#!/usr/bin/env bash
# PREPARED, NOT RUN (`bash scripts/gpu/run468.sh`): is run467's 0.8B K-quant
# shortfall against run456 (Q5_K 0.968, Q6_K 0.967 at 1k, on another H100)
# step 140 or the machine? Main before this session (o, 1e89bb7: gdn_delta
# and rmsnorm_gated apart) and main (m) in turn, three times each, graph
# rows of the 0.8B bf16, Q4_K, Q5_K and Q6_K at 1k on one GPU. carry
# ["bin"]; binaries: `bash scripts/gpu/bins.sh o=1e89bb7:bench
# m=main:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth m "0.8b" "bf16 q4_k q5_k q6_k"
wait_synth
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 o m o m o m
el done
