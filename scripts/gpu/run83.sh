#!/usr/bin/env bash
# Prepared in session 12 for the next GPU session (branch next/prologue-loads):
# gdn_conv loads its taps and conv state, rmsnorm_gated its weight and gate,
# attn_prep the position, its rope cos/sin (float64) and norm weights, and
# attn_split prefetches its first 64 keys into L2, before griddepcontrol.wait (what kernels two or more back wrote; spec_test.go
# checks the trigger-after-wait order that makes it safe), so after the wait
# each reads only its predecessor's output. bin/old = main, bin/new = the
# branch. Every GPU test, 5 gates (FP8 on and off, one at P = 3,000), greedy
# tokens, bench at 1k and 4k old/new alternating (two rounds), a 0.8B profile.
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
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView|SplitHeads' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -40
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates, greedy tokens"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-q8_0.gguf 3000 1000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q8_0.gguf 64 1000 1; g $M/9b-bf16.gguf 1500 600 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
for d in cuda cpu; do
  timeout 200 ./bin/new/memra run -m $M/0.8b-q8_0.gguf --prompt-tokens 1,2,3 -n 24 -greedy -print-tokens -device $d > $OUT/tok-$d.txt 2>&1 &
  eval "t_$d=$!"
done
wait $g1 $g2 $t_cuda $t_cpu
cat $OUT/gates?.txt
for d in cuda cpu; do echo "$d: $(grep -E '^[0-9 ,]+$' $OUT/tok-$d.txt | head -1)"; done
cmp -s <(grep -E '^[0-9 ,]+$' $OUT/tok-cuda.txt) <(grep -E '^[0-9 ,]+$' $OUT/tok-cpu.txt) && echo "greedy tokens cuda == cpu" || echo "greedy tokens DIFFER (see tok-*.txt)"
Q=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for b in old new old new; do
  el "bench 1k 4k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 100 ./bin/$b/bench -model $Q -ctx 1024,4096 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
el "profile 0.8b-bf16 (new)"
timeout 60 ./bin/new/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -14
el done
