#!/usr/bin/env bash
# Session 7, first call: a matvec block's first batch of weight loads issued
# into registers before griddepcontrol.wait and the fused norm, and each
# unit's successor batch before its reduction (docs/perf.md step 23).
# bin/base = main before the change (89bfbb7), bin/new = with it. GPU tests
# on new, the graph-chain benchmark on both, the bench at 1k alternating
# base/new, then gates on new.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/new/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests (new)"
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
wait $pids
for b in base new; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 $R/bin/$b/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain' -test.benchtime 50x > $OUT/chain-$b.txt 2>&1)
  grep -E "Benchmark.*graph|Copy" $OUT/chain-$b.txt
done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for b in base new base new; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|'
done
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (new)"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-q8_0.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q8_0.gguf 300 1000 0; g $M/9b-bf16.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
tar czf $OUT/bench.tgz -C /tmp bn
el done
