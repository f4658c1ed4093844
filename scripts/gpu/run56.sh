#!/usr/bin/env bash
# Session 9: the tensor-core q8_0 matvecs (engine/internal/mvexp/mma.cuh,
# docs/perf.md step 28) against the engine's kernels, each alone on the GPU,
# every output checked against float64 first. run56: the engine layout
# (LDG.64 per row pair); run57 adds the tiled layout (_l1). bin/mvexp.cubin built here with
# nvcc 11.8 (as the engine's fatbin), bin/mvexp with CGO_ENABLED=0.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
el "mvexp"
timeout 400 ./bin/mvexp -cubin bin/mvexp.cubin -variants mma_q8 \
  -shapes 4096x4096,4096x12288,12352x4096,24576x4096,1024x3584,7168x1024,248320x1024 | grep -v bf16
el done
