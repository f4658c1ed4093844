#!/usr/bin/env bash
# Session 28: bench -profile with each kernel's bytes and their rate against
# the copy bandwidth (main after the profile change): every engine/gpu GPU
# test (TestGPUProfileStepBytes among them), a gate, and the profile of a
# 1k step on the ten presets. bin/main. carry ["bin"]. ~8 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
gpu_tests main
grep -E 'ProfileStep' "$OUT/gputest.txt" | head -8
wait_synth
gate main $M/9b-q8_0.gguf 64 128 0
el "bench -profile 8 at 1k (ten presets)"
mkdir -p /tmp/prof
ms=""; for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q5_k q6_k; do ms="$ms,$M/$p-$t.gguf"; done; done
timeout 300 ./bin/main/bench -model "${ms#,}" -ctx 1024 -reps 3 -tokens 64 -profile 8 -out /tmp/prof > /tmp/prof/stdout.txt 2> /tmp/prof/stderr.txt
echo "bench rc=$?"
grep -E 'copy|profile' /tmp/prof/stderr.txt | head -14
grep -E '\| graph \|' /tmp/prof/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/prof.tgz" -C /tmp prof
el done
