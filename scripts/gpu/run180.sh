#!/usr/bin/env bash
# Session 28: BenchmarkGPUGraphChain again on an idle host (run179 ran it
# beside ten `memra synth` processes; its µs a node are event times from
# the first launch's enqueue to the last's end, so a host that falls behind
# the GPU shows in them), 50 replays a case; then perf.md's FP8 KV table in
# one run. (Comment corrected after the run: it had blamed the host for
# BF16 1024 x 3584's 5.19 us against run160's 3.95, which was the kernel
# before step 71's HL = 2; run160 measured the merged kernel at 5.51.
# Against run180, five of run179's cases read 0.36-1.25 us slower.)
# main as run179. bin/main. carry ["bin"]. ~7 minutes.
set -u
source scripts/gpu/lib.sh
start_run
(cd engine/gpu && timeout 60 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.benchtime 20x -test.bench 'GPUCopy' 2>&1 | grep -E 'Benchmark|FAIL|panic')
chain50() {
  (cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run '^$' -test.benchtime 50x \
    -test.bench "GraphChain/$1" 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/\s+50\s+[0-9]+ ns\/op//")
}
el "graph chain, 50 replays"
chain50 'swiglu_256/graph'
chain50 '.*/.*/.*/graph'
chain50 '.*/.*/.*/L2/graph'
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
full_table main -kv fp8
el done
