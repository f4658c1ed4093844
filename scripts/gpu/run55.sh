#!/usr/bin/env bash
# Session 8: docs/perf.md step 27, pwarp (each warp streams its own rows into its own 3 slots, no shared handshake) beside pstream and pchain: pstream
# whole and with x's staging (PS_NO_STAGE) and the tile reads and sums
# (PS_NO_DOT) left out, beside pchain (the engine's nodes: run53).
# bin/main = engine_gpu.test and pchain (tar cJf bin/bin.txz -C /tmp/binall .).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers"
el "pchain + pstream"
timeout 45 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 2
el done
