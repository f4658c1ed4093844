#!/usr/bin/env bash
# Session 14, step 45: the K-quant matrices of 4,096 rows (the 9B down and
# output projections) on the wide tensor-core kernels (16-row units, 8 warps
# a row group: twice the blocks of the plain kernel's 32-row units), after
# run95's ncu found the plain kernels latency-bound there with 128 blocks.
# bin/new = main (MatvecWide: K-quants <= 2048 rows), bin/kw = <= 4096 rows.
# Graph chains at 4096 x 12288 and 4096 x 4096 on both, a gate on kw, then
# bench new/kw in rotation on the 9B K-quant presets at 1k (two rounds).
set -u
source scripts/gpu/lib.sh
start_run
synth new "9b" "q4_k q5_k q6_k"
for b in new kw; do
(cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
  -test.bench 'GraphChain/(Q4_K|Q5_K|Q6_K)/(4096x12288|4096x4096)/.*/graph' 2>&1 | grep -E 'Benchmark' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
el "gate, bench"
gate kw $M/9b-q5_k.gguf 64 300 1
bench_rotation $M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf 1024 new kw new kw
el done
