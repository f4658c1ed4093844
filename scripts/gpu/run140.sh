#!/usr/bin/env bash
# Prepared in session 20 (branch next/attn-exp2, which holds next/attn-rs),
# for a later GPU session: steps 63 and 64, fewer instructions in the
# attention split's trip loop (run139: issue-bound over both caches):
#   rs = step 63, the dot products' sums by a reduce-scatter (d256 trip loop
#        883 -> 817 instructions over f16, 1,023 -> 957 over e4m3);
#   e2 = rs + step 64, the softmax in base 2 on ex2.approx, past-the-end keys
#        through the scale FMA's addend (-> 656 and 799).
# The adds and exps change, so tokens are compared, not required equal;
# eager == graph must hold (gates). bin/main = main, bin/rs = next/attn-rs,
# bin/e2 = next/attn-exp2; carry ["bin"]. ~7 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
attn_tests e2
attn_tests rs
wait_synth
el "tokens f16 KV (compared)"
tokens_cmp main e2 "0.8b-q8_0 9b-q8_0"
mv "$OUT/tokens.tgz" "$OUT/tokens-f16.tgz"; rm -rf /tmp/tok
el "tokens FP8 KV (compared)"
MEMRA_KV_FP8=1 tokens_cmp main e2 "0.8b-q8_0 9b-q8_0"
el gates
gate e2 $M/0.8b-bf16.gguf 3000 1200 0
gate e2 $M/9b-q8_0.gguf 64 256 1
gate e2 $M/9b-q8_0.gguf 4300 64 0
gate rs $M/0.8b-q8_0.gguf 3000 300 1
for kv in f16 fp8; do for b in main rs e2; do
  el "profile 9b-q8_0 32k $kv ($b)"
  timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -kv $kv -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b-$kv 2>/dev/null | grep -E '^\| attn_split'
done; done
for r in 1 2; do for kv in f16 fp8; do for b in main rs e2; do
  el "bench $kv ($b)"
  timeout 150 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,4096,32768 -kv $kv -reps 3 -tokens 64 -out /tmp/bn-$b-$kv-$r 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done; done
el done
