#!/usr/bin/env bash
# Session 10, fourth call: the tree as it lands (embed kernels through one
# helper, the shared-memory limit test, Q6_K's experiment moved to mvexp).
# Every GPU test, gates on every preset type, bench at 1k on all eight.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q6_k; do
  ./bin/new/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests"
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( g $M/0.8b-q4_k.gguf 64 2000 1; g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-q6_k.gguf 64 1000 0 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q4_k.gguf 300 1000 0; g $M/9b-q8_0.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
el "bench 1k"; mkdir -p /tmp/bn/1k; timeout 200 ./bin/new/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out /tmp/bn/1k 2>/tmp/bn/1k/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
tar czf $OUT/bench.tgz -C /tmp bn
el done
