#!/usr/bin/env bash
# Prepared in session 18 (branch next/attn-8warp), for a later GPU session:
# step 59, the attention split kernels with 8 warps a block instead of 4
# (MEMRA_ATTN_THREADS 256; the warps merge in two fixed stages so the
# shared buffers stay at 4 warps' size), at most 4 q heads a block (2 for
# the fp8 vector kernels) so that the vector kernels fit 128 registers and
# two blocks an SM (kernels.AttnSplitBlocksPerSM, which the host's grid
# rules now read: split cap 2·SMs/n_kv instead of 3·, one wave = 264
# blocks). ncu put the split at 1k on one warp a scheduler, 0.19 issued a
# cycle (run109); here a 64-key split takes 2 trips instead of 4 and, on
# 0.8B at 1k, 136 blocks of 8 warps replace 136 of 4. The lower split cap
# changes the long-context buckets (9B 99 -> 66 splits), so the bench runs
# 1k, 4k and 32k (and 9B at 32k with FP8 KV, where the fp8 vector kernels'
# G of 2 splits a group of 4 q heads over two blocks; a gate crosses the new
# cap with FP8 KV). The merge order changes: tokens are compared, not
# required equal.
# bin/main = main, bin/new = the branch; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention and decode GPU tests (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait $SYNTH
tokens_cmp main new "0.8b-q8_0 9b-q8_0"
el gates
gate new $M/0.8b-bf16.gguf 3000 1200 1
gate new $M/9b-q8_0.gguf 64 256 0
gate new $M/9b-q8_0.gguf 4300 64 1 # past the new split cap (66 splits = 4,224 keys), FP8 KV: G = 2
for b in main new; do
  for c in 1024 32768; do
    el "profile 9b-q8_0 ctx $c ($b)"
    timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx $c -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b 2>/dev/null | grep -E '^\| attn'
  done
done
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024,4096,32768 main new main new
# FP8 KV at 32k: the fp8 vector kernels' G falls to 2, so a group of 4 q
# heads takes two blocks and each K/V row is read twice (second review).
for b in main new; do
  el "bench 9b-q8_0 32k fp8 ($b)"
  timeout 120 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -kv fp8 -reps 3 -tokens 64 -out /tmp/bn-fp8-$b 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
el done
