#!/usr/bin/env bash
# Session 22 (branch next/attn-mma): the attention split of head_dim 256 on
# the tensor cores (attention_mma.cu), first run. One binary set, bin/mm,
# built from the branch; MEMRA_ATTN_MMA=1 takes the new kernel, unset the
# CUDA-core one (main's). carry ["bin"]. ~8 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth mm "0.8b" "bf16 q8_0"; S0=$SYNTH
synth mm "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention kernel tests (every form, the mma one at d256)"
(cd engine/gpu && timeout 200 "$R/bin/mm/engine_gpu.test" -test.run 'KernelAttention' -test.v -test.timeout 190s > "$OUT/attntest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic|worst|mma true" "$OUT/attntest.txt" | grep -v "^    --- PASS" | head -30
el "decode GPU tests with MEMRA_ATTN_MMA=1"
(cd engine/gpu && MEMRA_ATTN_MMA=1 timeout 150 "$R/bin/mm/engine_gpu.test" -test.run 'DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 140s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    " | head -20)
wait_synth
for kv in 0 1; do for mma in 0 1; do
  el "profile 9b-q8_0 32k fp8=$kv mma=$mma"
  MEMRA_KV_FP8=$kv MEMRA_ATTN_MMA=$mma timeout 90 "./bin/mm/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -reps 1 -tokens 16 -profile 8 $([ $kv = 1 ] && echo "-kv fp8") -out /tmp/prof-$kv-$mma 2>/dev/null | grep -E '^\| attn_'
done; done
el "tokens 0.8b-q8_0, 9b-q8_0, mma 0 vs 1"
for m in 0.8b-q8_0 9b-q8_0; do
  for mma in 0 1; do
    MEMRA_ATTN_MMA=$mma timeout 60 ./bin/mm/memra run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda 2>/dev/null | grep -E '^[0-9 ,]+$' | head -1 > /tmp/tok-$m-$mma.txt
  done
  cmp -s /tmp/tok-$m-0.txt /tmp/tok-$m-1.txt && echo "$m: 64 greedy tokens mma 0 == 1" || { echo "$m: tokens differ"; cat /tmp/tok-$m-0.txt /tmp/tok-$m-1.txt; }
done
el "gates with MEMRA_ATTN_MMA=1"
export MEMRA_ATTN_MMA=1
gate mm $M/9b-q8_0.gguf 64 256 1
gate mm $M/0.8b-bf16.gguf 3000 300 0
unset MEMRA_ATTN_MMA
for kv in f16 fp8; do for mma in 0 1; do
  el "bench kv=$kv mma=$mma"
  MEMRA_ATTN_MMA=$mma timeout 150 "./bin/mm/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 1024,4096,32768 -reps 3 -tokens 64 -kv $kv -out /tmp/bn-$kv-$mma 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el done
