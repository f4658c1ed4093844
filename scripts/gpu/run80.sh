#!/usr/bin/env bash
# Session 12: the Q4_K kernels' x staging in one pass fewer (memra_stage_x
# forms the run sums by shuffles as it writes the split, loads x as float4).
# bin/old = d5865ea (step 35), bin/new = the change. Every GPU test, the
# engine's Q4_K kernels and mvexp's (KW, S) forms of the same template, 2
# Q4_K gates, greedy tokens, bench old/new alternating on the Q4_K presets.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do
  ./bin/new/memra synth --arch qwen35 --preset $p --type q4_k -o $M/$p-q4_k.gguf > $M/$p-q4_k.log 2>&1 & pids="$pids $!"
done
el "engine/gpu tests"
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView|SplitHeads' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -40
echo "Q4_K kernel cases passed: $(grep -cE '^    --- PASS: TestGPUKernelMatvec/Q4_K' $OUT/gputest.txt)"
el "mvexp: Q4_K kernels, norm fused"
timeout 150 ./bin/new/mvexp -cubin bin/mvexp.cubin -xnorm -variants mmak_q4 \
  -shapes 24576x4096,12352x4096,4096x12288,4096x4096,248320x4096,7168x1024,1024x3584,248320x1024 | grep -E '==|q4_k.*resident|copy'
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates, greedy tokens"
g $M/0.8b-q4_k.gguf 300 2000 1 > $OUT/gates1.txt 2>&1 & g1=$!
g $M/9b-q4_k.gguf 64 1000 0 > $OUT/gates2.txt 2>&1 & g2=$!
for d in cuda cpu; do
  timeout 200 ./bin/new/memra run -m $M/0.8b-q4_k.gguf --prompt-tokens 1,2,3 -n 24 -greedy -print-tokens -device $d > $OUT/tok-$d.txt 2>&1 &
  eval "t_$d=$!"
done
wait $g1 $g2 $t_cuda $t_cpu
cat $OUT/gates?.txt
for d in cuda cpu; do echo "$d: $(grep -E '^[0-9 ,]+$' $OUT/tok-$d.txt | head -1)"; done
cmp -s <(grep -E '^[0-9 ,]+$' $OUT/tok-cuda.txt) <(grep -E '^[0-9 ,]+$' $OUT/tok-cpu.txt) && echo "greedy tokens cuda == cpu" || echo "greedy tokens DIFFER (see tok-*.txt)"
Q=$M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf
mkdir -p /tmp/bn
for b in old new old new; do
  el "bench 1k 4k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 100 ./bin/$b/bench -model $Q -ctx 1024,4096 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done
el done
