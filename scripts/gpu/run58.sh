#!/usr/bin/env bash
# Session 9: Q4_K on the tensor cores (mma.cuh's mmak_ kernels, tiled
# layout) against the engine's matvec_q4_k, each alone on the GPU, every
# output checked against float64 first; the q8_0 tiled kernels again beside
# the engine's. bin/mvexp.cubin built here with nvcc 11.8, bin/mvexp with
# CGO_ENABLED=0.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
el "mvexp"
timeout 400 ./bin/mvexp -cubin bin/mvexp.cubin -variants mmak_q4 \
  -shapes 4096x4096,4096x12288,12352x4096,24576x4096,1024x3584,7168x1024,248320x1024 | grep -v -E 'bf16|q8_0'
timeout 200 ./bin/mvexp -cubin bin/mvexp.cubin -variants _l1 -shapes 4096x4096,24576x4096 | grep -v -E 'bf16|q4_k'
el done
