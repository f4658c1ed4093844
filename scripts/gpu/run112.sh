#!/usr/bin/env bash
# Session 16, step 53: the prompt's tokens before its last fed without their
# logits (stepArgs.feed: GenerateGraph's prime, Session.Feed through
# sample.Feeder). Every GPU test (TestGPUSessionFeed new), 3 gates (the
# prime is what a gate's graph stream starts from), then prompt priming in
# the bench, old (a26b606) and new in rotation at P = 256, and the CLI's
# prompt rate on a 300-token prompt, greedy and sampled, old and new.
# Build (here): new from the working tree as run111; old = tools/bench and
# tools/memra from a worktree of a26b606; tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0"
gpu_tests new
wait $SYNTH
gate new $M/0.8b-q8_0.gguf 300 1000 1
gate new $M/0.8b-bf16.gguf 3000 200 0
gate new $M/9b-q8_0.gguf 64 256 1
for b in old new old new; do
  el "bench prime ($b)"
  d=/tmp/bn/$b-$(date +%s%N); mkdir -p $d
  timeout 150 ./bin/$b/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf -ctx 64 -reps 3 -tokens 16 -prompt 256 -sampled=false -out $d 2>/dev/null \
    | grep -E '^\| [0-9]' | cut -d'|' -f2,12
done
P=$(seq -s, 1 300)
for m in 0.8b-bf16 9b-q8_0; do
  for b in old new old new; do
    g=$(timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens $P -n 64 --greedy -device cuda 2>&1 >/dev/null | grep generated)
    s=$(timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens $P -n 64 --seed 3 -device cuda 2>&1 >/dev/null | grep generated)
    echo "$m ($b) greedy: $g"
    echo "$m ($b) sampled: $s"
  done
done
el done
