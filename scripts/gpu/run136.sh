#!/usr/bin/env bash
# Prepared in session 19 (branch next/attn-fp8-8warp), for a later GPU
# session: step 61, the fp8 attention split kernels at 8 warps like the f16
# ones, the vector form loading 8 bytes a lane (8 e4m3) so that G stays 4
# and the kernel fits 128 registers, two blocks an SM (main keeps them at 4
# warps, 16-byte loads, three blocks an SM: step 59). Over f16 nothing
# changes (tokens must equal main's); over e4m3 the merge order and the
# split cap change (9B: 99 -> 66 splits), so FP8 tokens are compared, not
# required equal. bin/main = main, bin/new = the branch; carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention and decode GPU tests (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads|AttnSplit|Bucket|SplitHeads' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el "tokens f16 KV (must be equal)"
tokens_cmp main new "0.8b-q8_0 9b-q8_0"
mv "$OUT/tokens.tgz" "$OUT/tokens-f16.tgz"; rm -rf /tmp/tok # the FP8 comparison writes the same names
el "tokens FP8 KV (compared)"
MEMRA_KV_FP8=1 tokens_cmp main new "0.8b-q8_0 9b-q8_0"
el gates
gate new $M/0.8b-bf16.gguf 3000 1200 1
gate new $M/9b-q8_0.gguf 64 256 1
gate new $M/9b-q8_0.gguf 4100 200 1 # across the new fp8 split cap (66 splits = 4,224 keys)
for b in main new; do
  el "profile 9b-q8_0 32k fp8 ($b)"
  timeout 90 "./bin/$b/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -kv fp8 -reps 1 -tokens 16 -profile 8 -out /tmp/prof-$b 2>/dev/null | grep -E '^\| attn'
done
for r in 1 2; do for b in main new; do
  el "bench fp8 ($b)"
  timeout 150 "./bin/$b/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,4096,32768 -kv fp8 -reps 3 -tokens 64 -out /tmp/bnf-$b-$r 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el done
