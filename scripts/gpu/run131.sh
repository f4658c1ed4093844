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
# 1k, 4k and 32k. The merge order changes: tokens are compared, not required
# equal.
# bin/main = main, bin/new = the branch; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "attention and decode GPU tests (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait $SYNTH
tokens_cmp main new "0.8b-q8_0 9b-q8_0"
el gates
gate new $M/0.8b-bf16.gguf 3000 1200 1
gate new $M/9b-q8_0.gguf 64 256 0
for b in main new; do
  for c in 1024 32768; do
    el "profile 9b-q8_0 ctx $c ($b)"
    timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx $c -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b 2>/dev/null | grep -E '^\| attn'
  done
done
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024,4096,32768 main new main new
el done
