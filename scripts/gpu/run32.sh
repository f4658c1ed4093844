#!/usr/bin/env bash
# Session 6, second call: the L2 prefetch forked onto a side stream after
# each mixer's input projection (docs/perf.md step 21; run31 measured the
# same prefetch issued from the matvecs' epilogues: slower). bin/ = branch
# next/l2-prefetch (5a6a469). GPU tests, then the bench at 1k for the bf16 and q8_0 presets under
# several MEMRA_L2PF plans (window MiB, stride, blocks), each alone on the
# GPU, the 32k rows off vs default, then gates with the default plan.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests"
(cd engine/gpu && timeout 240 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|prefetch forks" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
wait $pids
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for pf in off 24 off 8 16 32 48 24,32 24,128,33 24,128,264; do
  el "bench MEMRA_L2PF=$pf"
  d=/tmp/bn/pf-${pf//,/_}-$(date +%s); mkdir -p $d
  MEMRA_L2PF=$pf timeout 120 ./bin/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|'
done
el "bench 32k: off vs 24"
for pf in off 24; do
  d=/tmp/bn/long-${pf//,/_}; mkdir -p $d
  MEMRA_L2PF=$pf timeout 120 ./bin/bench -model $M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf -ctx 32768 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|'
done
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (default plan)"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-q8_0.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q8_0.gguf 300 1000 0; g $M/9b-bf16.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
tar czf $OUT/bench.tgz -C /tmp bn
el done
