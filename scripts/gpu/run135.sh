#!/usr/bin/env bash
# Session 19, step 60 (branch next/attn-trip-prefetch), a first look in the
# ~4 device minutes session 19 had left: each attention split trip sends the
# warp's keys MEMRA_ATTN_PF_TRIPS trips ahead to L2. Prefetches change no
# arithmetic, so tokens must equal main's. bin/main = main (e1e5eee's
# kernels), bin/pf1 = the branch (1 trip ahead), bin/pf2 = the branch with
# MEMRA_ATTN_PF_TRIPS 2 (sed on kernels/common.cuh in a worktree, then
# `go tool mage cuda:kernels`); carry ["bin"]. Most telling first, in case
# the device time ends.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
el "attention tests (pf1, pf2)"
for b in pf1 pf2; do
  (cd engine/gpu && timeout 60 "$R/bin/$b/engine_gpu.test" -test.run 'KernelAttention|GraphEqualsEager' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    " | sed "s/^/$b /")
done
wait_synth
for r in 1 2; do for b in main pf1 pf2; do
  el "bench 32k ($b)"
  timeout 60 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 32768 -reps 2 -tokens 32 -out /tmp/bn32-$b 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
tokens_cmp main pf1 "0.8b-q8_0 9b-q8_0"
el done
