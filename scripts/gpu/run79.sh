#!/usr/bin/env bash
# Session 12: step 35 in the engine: matvec_q4_k / _wide with each run's sums
# in its own B column pair and the tiles streamed through a per-warp ring
# (KW4 S3, KW8 S4). bin/old = a7b69b7 (main's kernels), bin/new = the change.
# Every GPU test, the engine's Q4_K kernels in mvexp, 4 Q4_K gates, greedy
# tokens cuda == cpu on Q4_K, bench old/new alternating at 1k and 4k (two
# rounds) on the Q4_K presets, a 9B Q4_K profile.
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
grep -cE '^    --- PASS: TestGPUKernelMatvec/q4_K' $OUT/gputest.txt  # wrong name (the cases are Q4_K-…): printed 0 in run79
el "mvexp: the engine's Q4_K kernels (new), norm fused"
timeout 120 ./bin/new/mvexp -cubin bin/mvexp.cubin -xnorm -variants NONE \
  -shapes 24576x4096,12352x4096,4096x12288,4096x4096,248320x4096,7168x1024,1024x3584,248320x1024 | grep -E '==|q4_k|copy'
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates, greedy tokens"
( g $M/0.8b-q4_k.gguf 300 2000 0; g $M/0.8b-q4_k.gguf 3000 1000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q4_k.gguf 64 1000 1; g $M/9b-q4_k.gguf 1500 600 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
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
el "profile 9b-q4_k (new)"
timeout 60 ./bin/new/bench -model $M/9b-q4_k.gguf -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/bn/prof 2>/dev/null | sed -n '/Kernel time per step/,$p' | head -14
tar czf $OUT/bench.tgz -C /tmp bn
el done
