#!/usr/bin/env bash
# Session 23: main after the tensor-core splits joined the generated
# attn_split family (d2a5d06; no kernel changed, the dispatch did): the
# attention and decode GPU tests with the default rule, with MEMRA_ATTN_MMA=1
# (the tensor-core split in every bucket) and =0, 64 greedy tokens with FP8 KV
# against MEMRA_ATTN_MMA=0's, two FP8 gates past the split cap; then run153's
# flagchain again with the bytes' column fixed and 2 loads a thread added
# (step 69). bin/main (buildbins), bin/flagchain, bin/flagchain.cubin;
# carry ["bin"]. ~4 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
for mma in "" 1 0; do
  el "attention and decode GPU tests (MEMRA_ATTN_MMA=${mma:-unset})"
  (cd engine/gpu && MEMRA_ATTN_MMA=$mma timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|Bucket|SplitHeads|AttnSplit' -test.v -test.timeout 190s > "$OUT/attntest-${mma:-unset}.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|panic|tensor-core" "$OUT/attntest-${mma:-unset}.txt" | grep -v "^    --- PASS" | head -20
done
wait_synth
el "64 greedy tokens with FP8 KV from a 3-token prompt: the tensor-core split in every bucket (=1) against none (=0)"
for m in 0.8b-q8_0 9b-q8_0; do
  for x in 0 1; do
    MEMRA_KV_FP8=1 MEMRA_ATTN_MMA=$x timeout 60 ./bin/main/memra run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda 2>/dev/null | grep -E '^[0-9 ,]+$' | head -1 > /tmp/tok-$m-$x.txt
  done
  cmp -s /tmp/tok-$m-0.txt /tmp/tok-$m-1.txt && echo "$m: 64 greedy tokens mma 0 == 1" || { echo "$m: tokens differ"; cat /tmp/tok-$m-0.txt /tmp/tok-$m-1.txt; }
done
el "gates (the default rule past the cap with FP8 KV)"
gate main $M/9b-q8_0.gguf 4300 128 1
gate main $M/0.8b-q8_0.gguf 8500 128 1
el "flagchain (step 69)"
./bin/flagchain -cubin bin/flagchain.cubin -grids 132,264,528 -words 1024 -wper 0,2,4,8 -sleep 0,128
el done
