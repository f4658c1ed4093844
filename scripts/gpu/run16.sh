#!/usr/bin/env bash
# Prepared in session 3, not yet run: docs/perf.md step 12 per kernel family.
# bin/mvexp and bin/mvexp.cubin built here:
#   nvcc -O3 -arch=sm_90 -cubin -o bin/mvexp.cubin engine/internal/mvexp/mvexp.cu
#   CGO_ENABLED=0 go build -o bin/mvexp ./engine/internal/mvexp
# Times the engine's matvec kernels and the mvg_ variants of its template
# (tail batch, next-unit prefetch, more rows per warp for the wide q8_0) on
# every decode shape of both presets, on one block per unit and on the
# engine's resident grid; every output checked against float64, the looping
# grid bit for bit against one block per unit.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
el "mvexp"; timeout 500 ./bin/mvexp -cubin bin/mvexp.cubin
el done
