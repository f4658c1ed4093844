#!/usr/bin/env bash
# Session 12: the Q4_K tensor-core matvec with its tiles streamed through a
# per-warp shared-memory ring (mvexp mmaks_, mvq4s.cuh; perf.md step 35)
# against the engine's matvec_q4_k / _wide and step 29's register forms,
# norm fused, on the 9B and 0.8B Q4_K shapes. mvexp checks every output
# against float64 and the mmaks_ bits against the engine kernel of equal KW.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
el "mvexp -xnorm"
timeout 300 ./bin/new/mvexp -cubin bin/mvexp.cubin -xnorm -variants mmak \
  -shapes 24576x4096,12352x4096,10240x4096,4096x12288,4096x4096,248320x4096,7168x1024,8224x1024,1024x3584,1024x2048,248320x1024 | grep -E '==|q4_k|mmak|copy'
el done
