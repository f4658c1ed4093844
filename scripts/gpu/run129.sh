#!/usr/bin/env bash
# Session 18, step 58: the fused RMSNorm as a linear scale (LN in matvec.cu:
# the block stages x * norm_w in the pass that sums x^2, the rows multiply
# their sums by inv). bin/main = main (9c18d97), bin/a = LN in every
# memra_mv kernel but the wave one and f32 (matvec_f16/bf16 spill 4 bytes),
# bin/b = LN in matvec_q8_0 and matvec_q8_0_wide only. The sums change by
# rounding, so tokens are compared, not required equal; the GPU tests
# (matvec xnorm against float64, decode against the CPU) and gates decide.
# Build (here): main from HEAD, a from the working tree, b from a worktree
# with LN off in the f16/bf16 kernels; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
gpu_tests a
for b in main a b; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench 'GraphChain/(Q8_0|BF16)/.*/xnorm=true/graph' 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$b /; s/\s+20\s+[0-9]+ ns\/op//")
done
wait $SYNTH
for m in 0.8b-q8_0 9b-q8_0 0.8b-bf16; do
  for b in main a; do
    timeout 60 "./bin/$b/memra" run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "$OUT/tok-$m-$b.txt" 2>&1
  done
  if ! grep -qE '^[0-9 ,]+$' "$OUT/tok-$m-a.txt"; then echo "$m: no tokens printed"; continue; fi
  cmp -s <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-main.txt") <(grep -E '^[0-9 ,]+$' "$OUT/tok-$m-a.txt") && echo "$m: 64 greedy tokens main == a" || echo "$m: greedy tokens main != a (rounding; see tok-$m-*.txt)"
done
el "gates"
gate a $M/9b-q8_0.gguf 64 256 0
gate a $M/0.8b-bf16.gguf 300 500 1
gate b $M/0.8b-q8_0.gguf 64 500 0
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf 1024 main a b main a b
el done
