#!/usr/bin/env bash
# Session 8: docs/perf.md step 27, the per-phase chain taken apart: pstream
# whole and with x's staging (PS_NO_STAGE) and the tile reads and sums
# (PS_NO_DOT) left out, beside pchain and the engine's nodes, in one run.
# bin/main = engine_gpu.test and pchain (tar cJf bin/bin.txz -C /tmp/binall .).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers"
el "pchain + pstream"
timeout 45 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 2
el "graph chain"
(cd engine/gpu && timeout 120 $R/bin/main/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/(swiglu|BF16)/(7168x1024|1024x3584|graph|stream)' -test.benchtime 50x) > $OUT/chain.txt 2>&1
grep -E "Benchmark.*graph-|Copy|FAIL|panic" $OUT/chain.txt | awk '{print $1, $(NF-1), $NF}'
el done
