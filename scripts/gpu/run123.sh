#!/usr/bin/env bash
# Session 17, step 55: run120-run122 found the q8_0 wide kernel 13% faster
# at 64 registers without its scale loads, and no way yet to make the scale
# loads cheaper. Here the geometries that fit 64 registers with the scale
# loads and without spilling (4 blocks per SM, ptxas here): bin/w1 = wide
# R4 KW4 U1, bin/w2 = wide R2 KW4 U2 TB (4-row units), bin/n1 = narrow R4
# KW1 U1, bin/n2 = narrow R2 KW1 U2 (16-row units), each bounded to 4
# blocks per SM, the other kernel as main's. Correct kernels: the matvec
# test against the CPU reference on each, graph chains of the q8_0 shapes,
# bench at 1k on 9B and 0.8B q8_0 in rotation. Build (here): bench and
# engine_gpu.test of each (worktrees of e257b2a); carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth old "0.8b 9b" "q8_0"
for b in old w1 w2 n1 n2; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/Q8_0/.*/.*/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024 old w1 w2 n1 n2 old w1 w2 n1 n2
for b in w1 w2 n1 n2; do
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run 'TestGPUKernelMatvec$' 2>&1 | tail -1 | sed "s/^/$b matvec test: /")
done
el done
