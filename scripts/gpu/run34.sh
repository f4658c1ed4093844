#!/usr/bin/env bash
# Session 6, fourth call: run33's graph chain again with L2-resident cases
# (one copy of the weights, which the L2 keeps) beside the HBM ones
# (docs/perf.md step 22). bin/ = main with BenchmarkGPUGraphChain's /L2 cases.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
R=$PWD
el "graph chain, copy"
(cd engine/gpu && timeout 300 $R/bin/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain' -test.benchtime 50x > $OUT/chain.txt 2>&1)
grep -E "Benchmark|ok|FAIL|panic" $OUT/chain.txt
el done
