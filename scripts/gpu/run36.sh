#!/usr/bin/env bash
# Session 7, second call: run35's first loads before the wait cost the
# narrow kernels registers (occupancy); here the number of loads per row
# issued early is a template argument HL. bin/base = main (89bfbb7),
# bin/h1 = HL 1, bin/h2 = HL 2 in every 16-byte matvec kernel. The
# graph-chain benchmark on each, then the bench at 1k, twice each in turn.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/base/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
wait $pids
for b in base h1 h2; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 $R/bin/$b/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/.*/graph' -test.benchtime 50x > $OUT/chain-$b.txt 2>&1)
  grep -E "Benchmark.*graph|Copy" $OUT/chain-$b.txt | awk '{print $1, $(NF-1), $NF}'
done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for b in base h1 h2 base h1 h2; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,5,6,9
done
tar czf $OUT/bench.tgz -C /tmp bn
el done
