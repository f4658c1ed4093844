#!/usr/bin/env bash
# Session 22 (branch next/attn-mma), fourth form: run145's tensor-core split
# (next trip's loads before a trip's products) with the e4m3 keys converted
# on use rather than at load (run145's SASS converted them right after
# their loads, so the fp8 form waited on each trip's loads before the
# previous trip's products), and no L2 prefetch (run146: slower). Default
# rule: the tensor-core split over an FP8 cache in the buckets at the split
# cap; MEMRA_ATTN_MMA=0 main's kernels, =1 every bucket. bin/mm from the
# branch; carry ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth mm "0.8b" "q8_0"; S0=$SYNTH
synth mm "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention kernel tests"
(cd engine/gpu && timeout 200 "$R/bin/mm/engine_gpu.test" -test.run 'KernelAttention' -test.v -test.timeout 190s > "$OUT/attntest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic|tensor-core" "$OUT/attntest.txt" | grep -v "^    --- PASS" | head -30
el "decode GPU tests with MEMRA_ATTN_MMA=1"
(cd engine/gpu && MEMRA_ATTN_MMA=1 timeout 150 "$R/bin/mm/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    " | head -20)
wait_synth
for mma in 0 d 1; do
  el "profile 9b-q8_0 32k fp8 mma=$mma"
  MEMRA_ATTN_MMA=$mma timeout 90 "./bin/mm/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -reps 1 -tokens 16 -profile 8 -kv fp8 -out /tmp/prof 2>/dev/null | grep -E '^\| attn_split'
done
el "tokens with FP8 KV, MEMRA_ATTN_MMA 0 vs 1"
for m in 0.8b-q8_0 9b-q8_0; do
  for mma in 0 1; do
    MEMRA_KV_FP8=1 MEMRA_ATTN_MMA=$mma timeout 60 ./bin/mm/memra run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda 2>/dev/null | grep -E '^[0-9 ,]+$' | head -1 > /tmp/tok-$m-$mma.txt
  done
  cmp -s /tmp/tok-$m-0.txt /tmp/tok-$m-1.txt && echo "$m: 64 greedy tokens mma 0 == 1" || { echo "$m: tokens differ"; cat /tmp/tok-$m-0.txt /tmp/tok-$m-1.txt; }
done
el "gates, the default rule (the tensor-core split past the cap with FP8 KV)"
gate mm $M/9b-q8_0.gguf 4300 128 1
gate mm $M/0.8b-q8_0.gguf 8500 128 1
for r in 1 2; do for mma in 0 d; do
  el "bench fp8 mma=$mma round $r"
  MEMRA_ATTN_MMA=$mma timeout 150 "./bin/mm/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,16384,32768 -reps 3 -tokens 64 -kv fp8 -out /tmp/bn-$mma-$r 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el done
