#!/usr/bin/env bash
# Session 20, branch next/e4m3-hw: step 62, the fp8 vector attention splits
# decoding e4m3 pairs with Hopper's cvt.rn.f16x2.e4m3x2 instead of the bit
# decode (the same values, so tokens over FP8 KV must equal main's). run136
# had FP8 KV slower than f16 at every context (9B q8_0 32k: 272.9 against
# 329.3 tok/s), the split at ~0.5 TB/s: issue-bound on the decode.
# bin/main = main (1b1f835), bin/hw = the branch; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention and decode GPU tests (hw)"
(cd engine/gpu && timeout 200 "$R/bin/hw/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads|Bucket|SplitHeads' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "tokens FP8 KV (must be equal)"
MEMRA_KV_FP8=1 tokens_cmp main hw "0.8b-q8_0 9b-q8_0"
el gates
gate hw $M/0.8b-bf16.gguf 3000 1200 1
gate hw $M/9b-q8_0.gguf 4100 200 1
for b in main hw; do
  el "profile 9b-q8_0 32k fp8 ($b)"
  timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -kv fp8 -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b 2>/dev/null | grep -E '^\| attn'
done
for r in 1 2; do for b in main hw; do
  el "bench fp8 ($b)"
  timeout 150 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,4096,32768 -kv fp8 -reps 3 -tokens 64 -out /tmp/bnf-$b-$r 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el "bench f16 KV (main, for reference)"
timeout 150 "./bin/main/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,4096,32768 -reps 3 -tokens 64 -out /tmp/bnh 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
el done
