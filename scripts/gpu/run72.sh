#!/usr/bin/env bash
# Session 11, sixth call: step 33's second q-heads-per-block rule (run71's
# binaries) at 2k and 4k (9B: 4 and 4 heads per block; 0.8B: 2 and 2):
# bench old (c013425) and new alternating on the same files.
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
  el "bench 2k 4k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $Q -ctx 2048,4096 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
tar czf $OUT/bench.tgz -C /tmp bn
el done
