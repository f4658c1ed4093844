#!/usr/bin/env bash
# Session 7, fourth call: run37 kept HL = 1 in every f16/bf16 kernel; its
# chain showed the narrow kernel losing where its 74 registers (3 blocks
# per SM) no longer hold a 4,096-row matrix's 512 units in one wave, and
# the wide kernel losing a little everywhere. bin/fin4 = the narrow kernels
# bounded to 4 blocks per SM (64 registers, no spill) with HL = 1, the wide
# ones back to main's (SASS identical). bin/base = main (89bfbb7), bin/fin
# = run37's tree. Chain and bench at 1k on the three, per-kernel profiles,
# then GPU tests, gates and the full table on fin4.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q6_k; do
  ./bin/fin4/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
for b in base fin fin4; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 120 $R/bin/$b/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/(Q8_0/1024|BF16)' -test.benchtime 50x > $OUT/chain-$b.txt 2>&1)
  grep -E "Benchmark.*graph|Copy" $OUT/chain-$b.txt | awk '{print $1, $(NF-1), $NF}'
done
wait $pids
Q=$M/0.8b-bf16.gguf,$M/9b-bf16.gguf
mkdir -p /tmp/bn
for b in base fin fin4 base fin fin4; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $Q -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,5,6,9,13
done
for b in base fin4; do for m in 0.8b-bf16 9b-bf16; do
  el "profile $m ($b)"; mkdir -p /tmp/bp-$b-$m
  timeout 60 ./bin/$b/bench -model $M/$m.gguf -ctx 1024 -reps 2 -tokens 32 -profile 8 -out /tmp/bp-$b-$m 2>/tmp/bp-$b-$m/stderr.txt | sed -n '/## Kernel time/,$p' | head -9
done; done
el "engine/gpu tests (fin4)"
(cd engine/gpu && timeout 240 $R/bin/fin4/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/fin4/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (fin4)"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-bf16.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-bf16.gguf 300 1000 0; g $M/9b-bf16.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
el "bench (fin4, full table)"; mkdir -p /tmp/bn/table; timeout 200 ./bin/fin4/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn/table 2>/tmp/bn/table/stderr.txt | grep -E 'graph'
tar czf $OUT/bench.tgz -C /tmp bn bp-base-0.8b-bf16 bp-base-9b-bf16 bp-fin4-0.8b-bf16 bp-fin4-9b-bf16
el done
