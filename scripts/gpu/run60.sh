#!/usr/bin/env bash
# Session 10, first call: step 29's Q4_K tensor-core matvec landed in the
# engine (kernels/matvec_q4k.cu, tiled upload, embed_q4_k on tiles).
# bin/new = this tree, bin/old = main before it (80ffaa7). GPU tests, the
# kernel against the old CUDA-core one (mvexp: engine matvec_q4_k vs
# mvk_q4_cuda, outputs checked against float64 first), Q4_K gates, and
# bench at 1k, old and new binaries alternating on the same files.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xJf bin/bin.txz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do
  ./bin/new/memra synth --arch qwen35 --preset $p --type q4_k -o $M/$p-q4_k.gguf > $M/$p-q4_k.log 2>&1 & pids="$pids $!"
done
el "engine/gpu tests"
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
grep -E "Q4_K.*max\|gpu" $OUT/gputest.txt | head -12
el "mvexp Q4_K: engine (tensor cores) vs mvk_q4_cuda (before)"
timeout 200 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants mvk_q4 \
  -shapes 4096x4096,4096x12288,12352x4096,24576x4096,1024x3584,7168x1024,8224x1024,1024x2048,248320x1024,248320x4096 | grep -v -E 'bf16|q8_0'
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( g $M/0.8b-q4_k.gguf 300 2000 0; g $M/0.8b-q4_k.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q4_k.gguf 300 1000 0; g $M/9b-q4_k.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
Q=$M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf
mkdir -p /tmp/bn
for b in old new old new; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $Q -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| (graph|eager) \|' | cut -d'|' -f2,3,5,6,9,13
done
tar czf $OUT/bench.tgz -C /tmp bn
el done
