#!/usr/bin/env bash
# Session 11, seventh call: the q-heads-per-block rule as it lands (the fewest
# heads per block whose grid fits one wave of 3 blocks per SM: 9B 1, 2, 4
# at 1k, 2k, 4k; 0.8B 1, 1, 2): bench old (c013425) and new alternating.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
M=/tmp/models; mkdir -p $M
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/new/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
wait $pids
Q=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for b in old new old new; do
  el "bench 1k 2k 4k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 100 ./bin/$b/bench -model $Q -ctx 1024,2048,4096 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
tar czf $OUT/bench.tgz -C /tmp bn
el done
