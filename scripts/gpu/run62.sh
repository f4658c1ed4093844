#!/usr/bin/env bash
# Session 10, third call: Q6_K on the tensor cores (kernels/matvec_q6k.cu's
# template then, engine/internal/mvexp/mmk6.cuh since; ktile.Q6K tiles) at six geometries (mvexp mmk6_) beside the
# engine's CUDA-core matvec_q6_k, each alone on the GPU, every output
# checked against float64 first. bin/mvexp.cubin built here with nvcc 11.8.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
el "mvexp"
timeout 400 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants mmk6_q6 \
  -shapes 4096x4096,4096x12288,12352x4096,24576x4096,248320x4096,1024x3584,7168x1024,8224x1024,1024x2048,248320x1024 | grep -v -E 'bf16|q8_0|q4_k'
el done
