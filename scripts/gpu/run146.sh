#!/usr/bin/env bash
# Session 22 (branch next/attn-mma), third form: the tensor-core split with
# each warp's keys pulled into L2 MEMRA_AMMA_PF trips ahead: bin/p4 (4, the
# branch) and bin/p8 (8, the same tree with the define changed). Run145's
# split was latency-bound (one trip in flight a warp, one block an SM).
# MEMRA_ATTN_MMA=1 every bucket, =cap the capped buckets, unset main's
# kernel. carry ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth p4 "0.8b" "q8_0"; S0=$SYNTH
synth p4 "9b" "q8_0"; SYNTH="$S0 $SYNTH"
el "attention kernel tests (p4)"
(cd engine/gpu && timeout 200 "$R/bin/p4/engine_gpu.test" -test.run 'KernelAttention' -test.v -test.timeout 190s > "$OUT/attntest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic|tensor-core" "$OUT/attntest.txt" | grep -v "^    --- PASS" | head -30
wait_synth
for kv in f16 fp8; do for b in p4:0 p4:1 p8:1; do
  el "profile 9b-q8_0 32k kv=$kv ${b%:*} mma=${b#*:}"
  MEMRA_ATTN_MMA=${b#*:} timeout 90 "./bin/${b%:*}/bench" -model "$M/9b-q8_0.gguf" -ctx 32768 -reps 1 -tokens 16 -profile 8 -kv $kv -out /tmp/prof 2>/dev/null | grep -E '^\| attn_split'
done; done
for kv in f16 fp8; do for b in p4:0 p4:cap p8:cap; do
  el "bench kv=$kv ${b%:*} mma=${b#*:}"
  MEMRA_ATTN_MMA=${b#*:} timeout 150 "./bin/${b%:*}/bench" -model "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" -ctx 16384,32768 -reps 3 -tokens 64 -kv $kv -out /tmp/bn 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
el done
