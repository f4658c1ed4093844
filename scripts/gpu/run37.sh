#!/usr/bin/env bash
# Session 7, third call: the first load of each row issued before the wait
# (HL = 1) in the f16/bf16 kernels only, where run36 measured it paying;
# the q8_0 and K-quant kernels are main's, SASS unchanged (docs/perf.md
# step 23). bin/base = main (89bfbb7), bin/fin = this tree. GPU tests, the
# graph chain on both, the bench at 1k alternating, gates, the per-kernel
# profile of the 0.8B bf16 step on both, then the full table on fin.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q6_k; do
  ./bin/fin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests (fin)"
(cd engine/gpu && timeout 240 $R/bin/fin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
wait $pids
for b in base fin; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 $R/bin/$b/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain' -test.benchtime 50x > $OUT/chain-$b.txt 2>&1)
  grep -E "Benchmark.*graph|Copy" $OUT/chain-$b.txt | awk '{print $1, $(NF-1), $NF}'
done
Q=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for b in base fin base fin; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $Q -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,5,6,9,13
done
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/fin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (fin)"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-bf16.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-bf16.gguf 300 1000 0; g $M/9b-bf16.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
for b in base fin; do
  el "profile 0.8b-bf16 ($b)"; mkdir -p /tmp/bp-$b
  timeout 60 ./bin/$b/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 2 -tokens 32 -profile 8 -out /tmp/bp-$b 2>/tmp/bp-$b/stderr.txt | sed -n '/## Kernel time/,$p'
done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
el "bench (fin, full table)"; mkdir -p /tmp/bn/table; timeout 260 ./bin/fin/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn/table 2>/tmp/bn/table/stderr.txt | grep -E 'graph'
tar czf $OUT/bench.tgz -C /tmp bn bp-base bp-fin
el done
