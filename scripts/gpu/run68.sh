#!/usr/bin/env bash
# Session 11, second call: gdn_step as a cluster of 8 blocks of 128 threads
# per V head (run67's one 1024-thread block per head was slower), the gated
# norm's sum exchanged through distributed shared memory. bin/old = c013425.
# GPU tests, gates, greedy tokens, bench at 1k old/new alternating, profile.
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
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
grep -E "GDNStep|state rel err" $OUT/gputest.txt | head -8
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates, greedy tokens cuda vs cpu"
( g $M/0.8b-bf16.gguf 300 2000 0; g $M/0.8b-q8_0.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q8_0.gguf 64 1000 1; g $M/9b-bf16.gguf 300 1000 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
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
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 150 ./bin/$b/bench -model $Q -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| (graph|eager) \|' | cut -d'|' -f2,3,5,6,9,13
done
el "profile 0.8b-bf16 (new)"
timeout 60 ./bin/new/bench -model $M/0.8b-bf16.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -14
tar czf $OUT/bench.tgz -C /tmp bn
el done
