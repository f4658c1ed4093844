#!/usr/bin/env bash
# Prepared in session 14 on branch next/graph-logits (not yet run): sampled
# generation through graph replays (gpu.Session: counters_set + the bucket's
# graph of the device-counter step without argmax + the logits read back)
# instead of eager steps, and the logits read back into pinned memory (both
# paths). bin/old = main, bin/new = the branch. Every GPU
# test (TestGPUSessionEqualsEager: the logits bit for bit against DecodeStep,
# f16 and FP8 KV, across buckets and a Reset), then `memra run` with
# temperature sampling, old and new alternating on 0.8B and 9B bf16: the
# same seed must give the same tokens (same logits, same sampler), and the
# summary line gives the generation tok/s.
# Build (here, on the branch): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/memra,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# memra from a worktree of main into /tmp/binall/old/,
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16"
gpu_tests new
wait $SYNTH
for m in 0.8b-bf16 9b-bf16; do
  for b in old new old new; do
    timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --temp 0.8 --seed 7 -print-tokens -device cuda \
      > $OUT/samp-$m-$b.txt 2> $OUT/samp-$m-$b.err
    echo "$m $b: $(grep -E 'generated' $OUT/samp-$m-$b.err | tail -1)"
  done
  cmp -s $OUT/samp-$m-old.txt $OUT/samp-$m-new.txt && echo "$m: sampled tokens old == new" || echo "$m: sampled tokens DIFFER"
done
el done
