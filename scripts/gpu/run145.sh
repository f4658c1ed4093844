#!/usr/bin/env bash
# Session 22 (branch next/attn-mma), second form: the tensor-core split with
# the next trip's loads issued before a trip's products, two chains for the
# scores, the weights scaled by 2^kw before their hi/lo split (run144's fp8
# error came from their lo halves in f16's subnormals). bin/mm from the
# branch; MEMRA_ATTN_MMA=1 every bucket, =cap the buckets at the split cap,
# unset main's kernel. carry ["bin"]. ~6 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth mm "0.8b" "bf16 q8_0"; S0=$SYNTH
synth mm "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention kernel tests"
(cd engine/gpu && timeout 200 "$R/bin/mm/engine_gpu.test" -test.run 'KernelAttention' -test.v -test.timeout 190s > "$OUT/attntest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic|tensor-core|FP8 KV attention error, worst" "$OUT/attntest.txt" | grep -v "^    --- PASS" | head -30
el "decode GPU tests with MEMRA_ATTN_MMA=1"
(cd engine/gpu && MEMRA_ATTN_MMA=1 timeout 150 "$R/bin/mm/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    " | head -20)
wait_synth
for kv in f16 fp8; do for mma in 0 1; do
  el "profile 9b-q8_0 32k kv=$kv mma=$mma"
  MEMRA_ATTN_MMA=$mma timeout 90 "./bin/mm/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -reps 1 -tokens 16 -profile 8 -kv $kv -out /tmp/prof-$kv-$mma 2>/dev/null | grep -E '^\| attn_'
done; done
el "gates with MEMRA_ATTN_MMA=cap"
export MEMRA_ATTN_MMA=cap
gate mm $M/9b-q8_0.gguf 4200 128 1
gate mm $M/0.8b-q8_0.gguf 8400 128 0
unset MEMRA_ATTN_MMA
for kv in f16 fp8; do for mma in 0 1 cap; do
  el "bench kv=$kv mma=$mma"
  MEMRA_ATTN_MMA=$mma timeout 150 "./bin/mm/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,16384,32768 -reps 3 -tokens 64 -kv $kv -out /tmp/bn-$kv-$mma 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el done
