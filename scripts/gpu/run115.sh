#!/usr/bin/env bash
# Session 16, step 54: the repetition penalty on the device (penalty.cu,
# GraphDecodeState.SetPenalty), and the second review's mends (the CLI
# allocating its one cache at open, so --device auto falls back when it does
# not fit). Every GPU test (TestGPUKernelRepeatPenalty and
# TestGPUGraphPenaltyEqualsSession new), a gate, and memra run with
# --repeat-penalty 1.1, greedy and sampled: old (0ec070b: the host path) and
# new (the device path) in rotation.
# Build (here): new from the branch next/device-penalty as run111; old =
# tools/memra from a worktree of 0ec070b; tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b" "bf16"
gpu_tests new
grep -E "penalised|Penalty" "$OUT/gputest.txt" | head -5
wait $SYNTH
gate new $M/0.8b-bf16.gguf 300 1000 1
for a in "--greedy --repeat-penalty 1.1" "--seed 7 --repeat-penalty 1.1"; do
  for b in old new old new; do
    echo "0.8b-bf16 $a ($b): $(timeout 60 ./bin/$b/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 $a -device cuda 2>&1 >/dev/null | grep generated)"
  done
  for b in old new; do
    timeout 60 ./bin/$b/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 64 $a --print-tokens -device cuda > /tmp/tok-$b.txt 2>/dev/null
  done
  cmp -s /tmp/tok-old.txt /tmp/tok-new.txt && echo "$a: tokens old (host penalty) == new (device penalty)" || echo "$a: tokens DIFFER: $(head -c 120 /tmp/tok-old.txt) / $(head -c 120 /tmp/tok-new.txt)"
done
el done
