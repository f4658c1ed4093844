#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run468.sh`, no kind named, ran on an H100;
# log docs/results/h100-run468-log.txt): is run467's 0.8B K-quant shortfall
# against run456 (Q5_K 0.968, Q6_K 0.967 at 1k, on another H100) step 140 or
# the machine? Main before this session (o, 1e89bb7: gdn_delta and
# rmsnorm_gated apart) and main (m, df4f04b) in turn, twice each, graph rows
# of the 0.8B bf16, Q4_K, Q5_K and Q6_K at 1k on one GPU. It is step 140:
# Q5_K 0.970, Q6_K 0.959 (bf16 1.012), so since then the engine fuses only
# before a CUDA-core output projection. carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh o=1e89bb7:bench m=main:memra,bench` at df4f04b.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth m "0.8b" "bf16 q4_k q5_k q6_k"
wait_synth
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 o m o m
el done
