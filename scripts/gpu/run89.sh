#!/usr/bin/env bash
# Session 13: Q6_K's ring slots per shape (run87: the engine's matvec_q6_k,
# KW4 S2, took 21.6 us on 4096 x 12288 where Q5_K's KW4 S3 took 13.5 in
# run88). mvexp's mmak_q6_ forms (the engine's template at other KW and S,
# bit for bit against the engine kernel of the same KW) against the engine's
# Q6_K kernels: the shapes a step runs without the fused norm, then those it
# runs with it.
set -u
source scripts/gpu/lib.sh
start_run
el "mvexp Q6_K, no norm"
timeout 200 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants q6_k \
  -shapes 4096x12288,4096x4096,1024x3584,1024x2048 | grep -E '==|q6_k|copy|skipped|FAIL|mismatch'
el "mvexp Q6_K, norm fused"
timeout 200 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants q6_k -xnorm \
  -shapes 24576x4096,12352x4096,7168x1024,248320x1024 | grep -E '==|q6_k|copy|skipped|FAIL|mismatch'
el done
