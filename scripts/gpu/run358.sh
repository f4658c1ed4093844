#!/usr/bin/env bash
# Session 64, step 114's why: BenchmarkGPUGraphChain's Q4_K and Q5_K cases
# (µs a node inside a graph), run357's old and new binaries in turn.
# carry ["bin"] (run357's bin.txz). ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
for b in old new; do chain "$b" '(Q4_K|Q5_K)/.*/.*/graph'; done
el done
