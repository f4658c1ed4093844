#!/usr/bin/env bash
# Session 4, second call: where the long-context step goes. `bench -profile`
# at 1k and 32k for main (bin/base) and next/combined (bin/, attention
# pipelining + kv-row), 0.8B bf16 and 9B q8_0.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz
M=/tmp/models; mkdir -p $M
pids=""
for m in 0.8b-bf16 9b-q8_0; do
  ./bin/memra synth --arch qwen35 --preset ${m%-*} --type ${m#*-} -o $M/$m.gguf >/dev/null 2>&1 & pids="$pids $!"
done
wait $pids
el synth
for b in base new; do
  B=./bin/bench; [ $b = base ] && B=./bin/base/bench
  el "profile ($b)"; mkdir -p /tmp/bp-$b; timeout 200 $B -model $M/0.8b-bf16.gguf,$M/9b-q8_0.gguf \
    -ctx 1024,32768 -reps 2 -tokens 32 -profile 8 -out /tmp/bp-$b 2>/tmp/bp-$b/stderr.txt | sed -n '/## Kernel time/,$p'
done
tar czf $OUT/profile.tgz -C /tmp bp-base bp-new
el done
