#!/usr/bin/env bash
# Session 10: run64's Q6_K decode steps did not follow its kernel times
# (logits 200 -> 113 us, step about even). Per-kernel profile of a 1k step
# on 0.8B and 9B Q6_K, old (1da20dc) and new binaries.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
M=/tmp/models; mkdir -p $M
pids=""
for p in 0.8b 9b; do ./bin/new/memra synth --arch qwen35 --preset $p --type q6_k -o $M/$p-q6_k.gguf > /dev/null 2>&1 & pids="$pids $!"; done
wait $pids # not a bare wait: that also waits for the tee above (its first version hung there, 300 s)
for m in 0.8b-q6_k 9b-q6_k; do for b in old new; do
  el "profile $m ($b)"; mkdir -p /tmp/bp-$b-$m
  timeout 40 ./bin/$b/bench -model $M/$m.gguf -ctx 1024 -reps 2 -tokens 32 -profile 8 -out /tmp/bp-$b-$m 2>/tmp/bp-$b-$m/stderr.txt | sed -n '/## Kernel time/,$p' | head -16
done; done
el done
