#!/usr/bin/env bash
# Session 68 (run on nvidia-h100-x1 as one call, the command line below):
# main after the session's robustness commits (6a5965c) on an H100, the
# gates with an FP8 KV cache on the bf16, q8_0 and Q4_K_M presets and a
# memra run --json on the GPU. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,gate,bench old=de47370:bench
# (the log: docs/results/h100-run375-log.txt). ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "bf16 q8_0 q4_k_m"
wait_synth
for m in 0.8b-bf16 0.8b-q8_0 0.8b-q4_k_m; do gate main "$M/$m.gguf" 300 128 1; done
for m in 9b-bf16 9b-q8_0 9b-q4_k_m; do gate main "$M/$m.gguf" 300 64 1; done
./bin/main/memra run -m "$M/0.8b-bf16.gguf" -p hello -n 16 --greedy --json
echo rc=$?
el done
