#!/usr/bin/env bash
# Session 37 (step 92): pring_hx_brm, pring_hx_brl taking a mixer phase
# (kind 6: the gated delta rule of the 9B preset's 32 V heads, one block a
# head, reading the down phase's residual as v, its gated norm's output in
# int8 the projection's input), checked against float64 and timed on the
# chain [gate|up, down, mixer, projection] beside pring_hx_brl's layer, and
# traced; every pring form as in run250; the graph's nodes; and what the
# engine's own mixer kernels cost inside a 9B q8_0 graph step (bench -omit
# at 1k: the whole step, without gdn_delta and rmsnorm_gated, without all
# three DeltaNet kernels, the whole step again). carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "9b" "q8_0"
nvcc -O3 -arch=sm_90 -cubin -Xptxas -v -o bin/pchain.cubin engine/internal/pchain/pchain.cu 2>&1 | grep -E "error|registers|spill|Compiling" | paste - - - | sed 's/ptxas info    : //g' | grep -E "error|pring_hx_br[lm]"
el "pring forms, the layer chain and the mixer"
timeout 300 ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2
chain main 'Q8_0/(24576x4096|4096x12288|4096x4096)/.*/graph'
wait_synth
el "bench -omit on 9b q8_0 (1k, graph)"
for p in none gdn-delta,gdn-norm gdn none; do
  o=""; [ $p != none ] && o="-omit $p"
  d=/tmp/om/$p; mkdir -p $d
  timeout 150 ./bin/main/bench -model $M/9b-q8_0.gguf -ctx 1024 -reps 3 -tokens 64 $o -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | sed "s/^/$p /"
done
el done
