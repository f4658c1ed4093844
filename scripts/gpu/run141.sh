#!/usr/bin/env bash
# Session 21 (branch next/attn-fused-combine, which holds next/attn-lazy):
#   lz = step 65, a head's accumulator rescaled only when its max moved (the
#        same bits: tokens must EQUAL main's; a review after the run found the
#        accumulator's first FMA rounds once where main rounded twice, so
#        ulp-level differences: perf.md step 65);
#   fc = lz + step 66, the combine fused into the split up to 32 splits (the
#        last block of a group merges it with attn_combine's sums in its
#        order: the same bits again, one node fewer an attention layer).
# bin/main = main after steps 63-64, bin/lz = next/attn-lazy, bin/fc =
# next/attn-fused-combine; carry ["bin"]. ~8 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention, decode, omit and profile GPU tests (fc)"
(cd engine/gpu && timeout 200 "$R/bin/fc/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads|Bucket|SplitHeads|OmitParts|Profile' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic|fused" | grep -v "^    " | head -40)
attn_tests lz
wait_synth
el "tokens f16 KV (must be equal)"
tokens_cmp main lz "0.8b-q8_0 9b-q8_0"
tokens_cmp main fc "0.8b-q8_0 9b-q8_0"
mv "$OUT/tokens.tgz" "$OUT/tokens-f16.tgz"; rm -rf /tmp/tok
el "tokens FP8 KV (must be equal)"
MEMRA_KV_FP8=1 tokens_cmp main fc "0.8b-q8_0 9b-q8_0"
el gates
gate fc $M/0.8b-bf16.gguf 1500 1000 0
gate fc $M/9b-q8_0.gguf 64 256 1
gate fc $M/9b-q8_0.gguf 1900 300 0
gate lz $M/0.8b-q8_0.gguf 3000 300 1
for b in main lz; do
  el "profile 9b-q8_0 32k f16 ($b)"
  timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b 2>/dev/null | grep -E '^\| attn_'
done
for b in lz fc; do
  el "profile 0.8b-q8_0 1k f16 ($b)"
  timeout 90 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/prof1k-$b 2>/dev/null | grep -E '^\| attn_'
done
for r in 1 2; do for b in main lz fc; do
  el "bench f16 ($b)"
  timeout 150 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,2048,4096,32768 -reps 3 -tokens 64 -out /tmp/bn-$b-$r 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el done
