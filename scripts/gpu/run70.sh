#!/usr/bin/env bash
# Session 11, fourth call: attn_split with hpb q heads per block, chosen per
# bucket (bucket.go splitHeads: 1 at short contexts, whole groups at the
# split cap), perf.md step 33. bin/old = c013425. Attention and decode GPU
# tests, gates (one across the 4k buckets where hpb = 2), bench at 1k, 4k
# and 32k old/new alternating, a 9B bf16 profile.
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
el "engine/gpu tests"
(cd engine/gpu && timeout 200 $R/bin/new/engine_gpu.test -test.run 'GPUKernelAttention|GPUDecode|GPUGraph|SplitHeads' -test.v -test.timeout 190s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst" $OUT/gputest.txt | grep -v "^    --- PASS" | head -30
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-q8_0.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q8_0.gguf 64 1000 1; g $M/9b-bf16.gguf 3000 1000 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
Q=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for b in old new old new; do
  el "bench 1k 4k 32k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 150 ./bin/$b/bench -model $Q -ctx 1024,4096,32768 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
el "profile 9b-bf16 (new)"
timeout 60 ./bin/new/bench -model $M/9b-bf16.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -14
tar czf $OUT/bench.tgz -C /tmp bn
el done
