#!/usr/bin/env bash
# Session 8: docs/perf.md step 27. pchain.cu's pstream (the weights streamed
# ahead of the grid barriers through a ring of shared-memory tiles filled by
# cp.async.bulk, PTX 8.0: compiled here with nvcc 13) beside pchain and the
# engine's graph nodes of the same FFN, in one run. bin/main = main's
# engine_gpu.test and pchain (tar cJf bin/bin.txz -C /tmp/binall .).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
R=$PWD
nvcc --version | tail -2
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Function properties"
el "pchain + pstream"
timeout 45 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -blocks 2
el "graph chain"
(cd engine/gpu && timeout 120 $R/bin/main/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/(swiglu|BF16)/(7168x1024|1024x3584|graph|stream)' -test.benchtime 50x) > $OUT/chain.txt 2>&1
grep -E "Benchmark.*graph-|Copy|FAIL|panic" $OUT/chain.txt | awk '{print $1, $(NF-1), $NF}'
el done
