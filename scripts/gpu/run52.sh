#!/usr/bin/env bash
# Session 8: the experiment commands on engine/internal/evtime (their timing
# helper, shared since this run): evtime's GPU test, pchain/pstream as
# committed, and mvexp on one shape (its cubin compiled here), with the
# engine's graph chain for the pchain shapes. bin/main = this tree's
# engine_gpu.test, evtime.test, pchain, mvexp (tar cJf bin/bin.txz -C /tmp/binall .).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
el "evtime test"
./bin/main/evtime.test -test.v 2>&1 | tail -3
nvcc -O3 -arch=sm_90 -cubin -o bin/pchain.cubin engine/internal/pchain/pchain.cu
nvcc -O3 -arch=sm_90 -cubin -o bin/mvexp.cubin engine/internal/mvexp/mvexp.cu
el "pchain + pstream"
timeout 45 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 2
el "mvexp 4096x4096 engine kernels"
timeout 60 ./bin/main/mvexp -cubin bin/mvexp.cubin -shapes 4096x4096 -variants engine 2>&1 | tail -12
el "graph chain"
(cd engine/gpu && timeout 120 $R/bin/main/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/(swiglu|BF16)/(7168x1024|1024x3584|graph|stream)' -test.benchtime 50x) > $OUT/chain.txt 2>&1
grep -E "Benchmark.*graph-|Copy|FAIL|panic" $OUT/chain.txt | awk '{print $1, $(NF-1), $NF}'
el done
