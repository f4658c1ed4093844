#!/usr/bin/env bash
# Session 14: run95's -omit split kernel by kernel. bin/new = main + bench
# -omit with one part per small kernel (gdn-conv, gdn-delta, gdn-norm,
# attn-prep, attn-split, attn-combine). The omit test; then each small
# kernel left out at 1k on the four goal presets (graph ms/token), the whole
# step first and last; then `bench -profile 8` of the same presets (each
# kernel alone between events) for the same kernels' standalone times.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'GPUOmitParts' -test.v > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | head -20
wait $SYNTH
el "bench -omit (1k, graph ms/token)"
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
i=0
for p in none gdn-conv gdn-delta gdn-norm attn-prep attn-split attn-combine gdn,attn none; do
  o=""; [ $p != none ] && o="-omit $p"
  i=$((i+1)); d=/tmp/om/$i-$p; mkdir -p $d
  timeout 120 ./bin/new/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 $o -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6 | sed "s/^/$p /"
done
el "profile"
mkdir -p $OUT/prof
timeout 200 ./bin/new/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -profile 8 -out $OUT/prof > $OUT/prof/table.txt 2>&1
grep -E 'profile|attn|gdn|rmsnorm|matvec|embed|argmax' $OUT/prof/table.txt | head -80
el done
