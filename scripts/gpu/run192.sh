#!/usr/bin/env bash
# Session 29, step 84's flat barrier in step 83's launch: branch
# next/ffn-fused-flat (bin/flat: the ffn tests, then bench) against
# next/ffn-fused (bin/v1: the generation form), graph tok/s at 1k with
# MEMRA_FFN_FUSE=0 and 1, twice round. carry ["bin"]. ~2 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth flat "0.8b" "bf16 q8_0"
S1=$SYNTH
synth flat "9b" "q8_0"
SYNTH="$S1 $SYNTH"
el "engine/gpu tests (flat)"
(cd engine/gpu && timeout 120 "$R/bin/flat/engine_gpu.test" -test.run 'KernelFFN|FFNFusedDecode|GraphEqualsEager' -test.v -test.timeout 110s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
wait_synth
ms=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for r in flat:0 flat:1 v1:1 flat:0 flat:1 v1:1; do
  b=${r%:*} f=${r#*:}
  el "bench 1024 $b MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/$b-fuse$f-$(date +%s%N); mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,3,4,5,6,9,13
done
tar czf "$OUT/bench.tgz" -C /tmp bn
el done
