#!/usr/bin/env bash
# Session 13: q8_0 through the K-quants' ring (mvexp mmaq8r_: step 28's tiles
# on the tensor cores, memra_mvt's cp.async ring, the quad-spread scales)
# against the engine's q8_0 kernels: the 9B wide kernel streams 2.0 TB/s in
# run88's profile. Shapes a step runs without the norm, then with it.
set -u
source scripts/gpu/lib.sh
start_run
el "mvexp q8_0 ring, no norm"
timeout 150 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants q8r \
  -shapes 4096x12288,4096x4096,1024x3584 | grep -E '==|q8|copy|skipped|WRONG'
el "mvexp q8_0 ring, norm fused"
timeout 150 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants q8r -xnorm \
  -shapes 24576x4096,12352x4096,7168x1024,248320x1024 | grep -E '==|q8|copy|skipped|WRONG'
el done
