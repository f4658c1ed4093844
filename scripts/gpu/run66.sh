#!/usr/bin/env bash
# Session 10, last call: mvexp -xnorm (the norm fused, as a decode step runs
# its projections; run65 showed the CUDA-core kernels faster that way) on
# the Q4_K and Q6_K decode shapes: the engine's kernels and mvk_q4_cuda
# (the CUDA-core Q4_K kernel the engine ran before step 30).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
el "mvexp -xnorm"
timeout 150 ./bin/new/mvexp -cubin bin/mvexp.cubin -xnorm -variants mvk_q4 \
  -shapes 4096x4096,12352x4096,24576x4096,7168x1024,248320x1024,248320x4096 | grep -E '==|q4_k|q6_k|mvk_q4|copy'
el done
