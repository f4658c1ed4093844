#!/usr/bin/env bash
# Session 86 (`bash scripts/gpu/run469.sh`, asked for as nvidia-h200, ran
# on an H100; log docs/results/h100-run469-log.txt): main with step 140's
# launch only before CUDA-core output projections (after run468). carry
# ["bin"]; binaries, at 9ac22d6: `bash scripts/gpu/bins.sh o=1e89bb7:bench
# m=main:memra,gate,bench,engine_gpu.test`.
# The tests the rule touches (decode against the CPU for every type, graph
# against eager, omit, early loads, profiles, the fused kernel), a gate on a
# K-quant 0.8B and on the 0.8B bf16, then main before this session (o) and
# main (m) in turn, twice each, graph rows of the 0.8B bf16, q8_0, Q4_K,
# Q5_K and Q6_K at 1k: the K-quant rows should now be o's, bf16 and q8_0
# ~1% over.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd engine/gpu && timeout 150 "$R/bin/m/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|OmitParts|EarlyLoads|ProfileStep|ProfileGraphStep|GDNDeltaNormed' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    --- PASS")
synth m "0.8b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
gate m "$M/0.8b-q6_k.gguf" 64 256 0
gate m "$M/0.8b-bf16.gguf" 64 256 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf" 1024 o m o m
el done
