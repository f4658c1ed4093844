#!/usr/bin/env bash
# Session 28: the current kernels inside a graph (BenchmarkGPUGraphChain,
# every shape, µs a node: the "in a graph" table of perf.md's top kernels,
# last measured in run38/run39) and perf.md's full table over an f16 cache in
# one run (its rows came from run161, run174 and run176). main at the
# profile change (no kernel change since run177). bin/main. carry ["bin"].
# ~7 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
(cd engine/gpu && timeout 60 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.benchtime 20x -test.bench 'GPUCopy' 2>&1 | grep -E 'Benchmark|FAIL|panic')
chain main 'swiglu_256/graph'
chain main '.*/.*/.*/graph'
chain main '.*/.*/.*/L2/graph'
wait_synth
full_table main
el done
