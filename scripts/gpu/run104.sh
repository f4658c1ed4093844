#!/usr/bin/env bash
# Session 15, first call: run100 (prepared in session 14, never run) and
# run102's sampled-generation check in one call, binaries of four trees in
# bin/: new = main, tile = next/tile-overlap (bench), gl = next/graph-logits
# (memra, engine_gpu.test). Every GPU test of main (session 14's review mends
# have not run on the H200), gates on the 9B Q4_K/Q6_K presets (step 45's
# wide kernels) and 0.8B q8_0 with FP8 KV, the K-quant load times of main
# and tile alternating, then the graph-logits branch: its Session test, and
# `memra run --temp 0.8 --seed 7` main against the branch, alternating, on
# 0.8B and 9B bf16 (same seed: same tokens; the summary gives tok/s).
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# the branches' binaries from worktrees into /tmp/binall/{tile,gl}/,
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q6_k"
gpu_tests new
el "graph-logits branch: Session tests"
(cd engine/gpu && timeout 120 "$R/bin/gl/engine_gpu.test" -test.run 'Session|GraphEqualsEager' -test.v -test.timeout 110s > "$OUT/gltest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gltest.txt" | grep -v "^    --- PASS" | head -20
wait $SYNTH
el "gates"
gate new $M/9b-q4_k.gguf 64 400 1
gate new $M/9b-q6_k.gguf 300 400 0
gate new $M/0.8b-q8_0.gguf 300 600 1
el "sampled generation, main (new) / graph-logits (gl) alternating"
for m in 0.8b-bf16 9b-bf16; do
  for b in new gl new gl; do
    timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --temp 0.8 --seed 7 -print-tokens -device cuda \
      > $OUT/samp-$m-$b.txt 2> $OUT/samp-$m-$b.err
    echo "$m $b: $(grep -E 'generated' $OUT/samp-$m-$b.err | tail -1)"
  done
  cmp -s $OUT/samp-$m-new.txt $OUT/samp-$m-gl.txt && echo "$m: sampled tokens main == branch" || echo "$m: sampled tokens DIFFER"
done
el "load times (models table: load s), new / tile alternating"
for b in new tile new tile; do
  d=/tmp/ld/$b-$(date +%s%N); mkdir -p $d
  timeout 150 ./bin/$b/bench -model $M/9b-q4_k.gguf,$M/9b-q6_k.gguf,$M/9b-q8_0.gguf -ctx 64 -reps 1 -tokens 8 -out $d > $d/out.txt 2>&1
  grep -E '^\| 9b-' $d/out.txt | grep -v ' graph \| eager ' | cut -d'|' -f2,4,5 | sed "s/^/$b /"
done
el done
