#!/usr/bin/env bash
# Session 6, third call: what a node costs inside a CUDA graph (docs/perf.md
# step 22). bin/ = main with BenchmarkGPUGraphChain. The copy ceiling, the
# chain benchmark (64 launches of one kernel per graph, replayed; the same
# 64 launched on the stream), and the standalone matvec timing of the same
# run for comparison.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
R=$PWD
el "graph chain, copy, matvec"
(cd engine/gpu && timeout 400 $R/bin/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain|Matvec/(Q8_0|BF16)/' -test.benchtime 50x > $OUT/chain.txt 2>&1)
grep -E "Benchmark|ok|FAIL|panic" $OUT/chain.txt
el done
