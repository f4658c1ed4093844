#!/usr/bin/env bash
# Session 19, step 59 with the fp8 kernels at main's shape (branch
# next/attn-8warp-fp8): run131b found the 8-warp split kernels faster over
# an f16 cache (0.8B 32k +5%, 9B 32k +2.9%) but 9B at 32k with FP8 KV 10%
# slower (G of 2: two blocks read every K/V row). Here the fp8 kernels keep
# 4 warps, G = 4 and 3 blocks an SM (their split cap back at 3·SMs/n_kv),
# the f16 ones 8 warps. bin/main = main, bin/new = next/attn-8warp (run131b),
# bin/new2 = this branch; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention and decode GPU tests (new2)"
(cd engine/gpu && timeout 200 "$R/bin/new2/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "tokens f16 KV"
tokens_cmp new new2 "0.8b-q8_0 9b-q8_0"
el "tokens FP8 KV (the fp8 kernels are main's)"
MEMRA_KV_FP8=1 tokens_cmp main new2 "0.8b-q8_0 9b-q8_0"
el gates
gate new2 $M/0.8b-bf16.gguf 3000 1200 1
gate new2 $M/9b-q8_0.gguf 64 256 0
gate new2 $M/9b-q8_0.gguf 6400 64 1 # past the fp8 split cap (99 splits = 6,336 keys)
for r in 1 2; do for b in main new new2; do
  el "bench 9b-q8_0 32k fp8 ($b)"
  timeout 120 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -kv fp8 -reps 3 -tokens 64 -out /tmp/bn-fp8-$b 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
bench_rotation $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf 1024,32768 main new2 main new2
el done
