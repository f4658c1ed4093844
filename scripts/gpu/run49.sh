#!/usr/bin/env bash
# Session 8: docs/perf.md step 25, run48 again on pchain as committed (its norm through memra_block_sum, the check printed with %.3g). The 0.8B FFN matvecs as one persistent
# kernel with grid barriers (engine/internal/pchain), against the same
# shapes as graph nodes (BenchmarkGPUGraphChain) and the copy bandwidth, in
# one run. bin/main = main's engine_gpu.test and pchain
# (tar cJf bin/bin.txz -C /tmp/binall .); pchain.cu is compiled here.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
nvcc --version | tail -2
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "registers|spill"
el "pchain"
timeout 200 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 1,2
el "graph chain"
(cd engine/gpu && timeout 120 $R/bin/main/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/(swiglu|BF16)/(7168x1024|1024x3584|graph|stream)' -test.benchtime 50x) > $OUT/chain.txt 2>&1
grep -E "Benchmark|FAIL|panic" $OUT/chain.txt | awk '{print $1, $(NF-1), $NF}'
el done
