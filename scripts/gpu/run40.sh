#!/usr/bin/env bash
# Prepared in session 7, not yet run: the staged matvec kernels of branch
# next/mv-stage (matvec_q8_0_stage, matvec_bf16_stage; docs/perf.md next
# steps), chosen for matrices of at most MEMRA_MV_STAGE rows. bin/ = that
# branch, packed with: tar cJf bin/bin.txz -C /tmp/binall . (bench, gate,
# memra, engine_gpu.test under bin/). GPU tests (the staged kernels against
# the CPU reference, decode against the CPU backend and graph = eager with
# staging on), the graph chain and the bench at 1k under several row
# limits, then gates with staging on.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests"
(cd engine/gpu && timeout 240 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
wait $pids
for st in 0 8192 1000000; do
  el "graph chain MEMRA_MV_STAGE=$st"
  (cd engine/gpu && MEMRA_MV_STAGE=$st timeout 120 $R/bin/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/.*' -test.benchtime 50x > $OUT/chain-$st.txt 2>&1)
  grep -E "Benchmark.*graph-|Copy" $OUT/chain-$st.txt | awk '{print $1, $(NF-1), $NF}'
done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for st in 0 4096 8224 16384 0 4096 8224 16384; do
  el "bench 1k MEMRA_MV_STAGE=$st"
  d=/tmp/bn/st$st-$(date +%s); mkdir -p $d
  MEMRA_MV_STAGE=$st timeout 120 ./bin/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,5,6,9,13
done
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4 stage=$5: $(MEMRA_KV_FP8=$4 MEMRA_MV_STAGE=$5 timeout 150 ./bin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (staging on)"
( g $M/0.8b-bf16.gguf 300 2000 0 16384; g $M/0.8b-q8_0.gguf 64 2000 1 16384 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q8_0.gguf 300 1000 0 16384; g $M/9b-bf16.gguf 64 1000 1 16384 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
el done
