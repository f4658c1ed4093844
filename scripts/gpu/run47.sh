#!/usr/bin/env bash
# Session 8: docs/perf.md step 26, the preloaded matvecs (matvec_bf16_pre,
# matvec_q8_0_pre: a block's whole unit loaded before the grid wait, chosen
# where one wave holds the matrix and a row fits the head). bin/main = main
# (bench, gate, engine_gpu.test), bin/new = this tree (+ memra); packed with
# tar cJf bin/bin.txz -C /tmp/binall . GPU tests of new, graph chain and
# bench at 1k of main and new alternating, gates of new.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/new/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests (new)"
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -40
grep -c -- "--- PASS: TestGPUKernelMatvec/.*pre1" $OUT/gputest.txt
wait $pids
for v in main new; do
  el "graph chain $v"
  (cd engine/gpu && timeout 120 $R/bin/$v/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/(BF16|Q8_0)/(7168x1024|1024x3584)' -test.benchtime 50x > $OUT/chain-$v.txt 2>&1)
  grep -E "Benchmark.*graph-|Copy|FAIL" $OUT/chain-$v.txt | awk '{print $1, $(NF-1), $NF}'
done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for v in main new main new; do
  el "bench 1k $v"
  d=/tmp/bn/$v-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$v/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,5,6,9,13
done
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (new)"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/9b-q8_0.gguf 64 1000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/0.8b-q8_0.gguf 64 2000 1; g $M/9b-bf16.gguf 300 1000 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
el done
