#!/usr/bin/env bash
# Session 7, fifth call: step 23's one-wave bound for q8_0. bin/main = main
# (92c0aca); bin/A = matvec_q8_0_wide with HL = 1 bounded to 4 blocks per SM
# (64 registers, no spill: 528 resident blocks hold the 512 units of a
# 4,096-row matrix, 264 before); bin/B = A plus HL = 1 in matvec_q8_0 (80
# registers either way). Chain and bench at 1k on the three (q8_0 presets),
# then GPU tests and gates on A and on B.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin   # packed here with: tar cJf bin/bin.txz -C /tmp/binall .
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do
  ./bin/main/memra synth --arch qwen35 --preset $p --type q8_0 -o $M/$p-q8_0.gguf > $M/$p-q8_0.log 2>&1 & pids="$pids $!"
done
for b in main A B; do
  el "graph chain ($b)"
  (cd engine/gpu && timeout 60 $R/bin/$b/engine_gpu.test -test.run '^$' -test.bench 'Copy|GraphChain/Q8_0' -test.benchtime 50x > $OUT/chain-$b.txt 2>&1)
  grep -E "Benchmark.*graph|Copy" $OUT/chain-$b.txt | awk '{print $1, $(NF-1), $NF}'
done
wait $pids
Q=$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf
for b in main A B main A B; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 60 ./bin/$b/bench -model $Q -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,5,6,9,13
done
g() { echo "gate $(basename $2 .gguf) P=$3 N=$4 fp8=$5: $(MEMRA_KV_FP8=$5 timeout 100 ./bin/$1/gate $2 $3 $4 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
for b in A B; do
  el "GPU tests ($b)"
  (cd engine/gpu && timeout 100 $R/bin/$b/engine_gpu.test -test.run 'GPUKernelMatvec|GPUGraphEqualsEager|GPUDecodeMatchesCPU' -test.v -test.timeout 95s > $OUT/gputest-$b.txt 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest-$b.txt | grep -v "^    --- PASS" | head -20
  el "gates ($b)"
  ( g $b $M/9b-q8_0.gguf 300 1000 0 ) > $OUT/gates1-$b.txt 2>&1 & g1=$!
  ( g $b $M/0.8b-q8_0.gguf 64 2000 1 ) > $OUT/gates2-$b.txt 2>&1 & g2=$!
  wait $g1 $g2
  cat $OUT/gates?-$b.txt
done
el done
