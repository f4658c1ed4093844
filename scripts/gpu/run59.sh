#!/usr/bin/env bash
# Session 9: run58's Q4_K tensor-core kernels again, with register-capped
# forms (__launch_bounds__ blocks per SM: _b2, _b3; _b0 as in run58), beside
# the engine's matvec_q4_k, each alone on the GPU, every output checked
# against float64 first. bin/mvexp.cubin built here with nvcc 11.8.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
el "mvexp"
timeout 400 ./bin/mvexp -cubin bin/mvexp.cubin -variants mmak_q4 \
  -shapes 4096x4096,4096x12288,12352x4096,24576x4096,10240x4096,1024x3584,7168x1024,8224x1024,1024x2048,248320x1024 | grep -v -E 'bf16|q8_0'
el done
