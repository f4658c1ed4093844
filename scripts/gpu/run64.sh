#!/usr/bin/env bash
# Session 10: Q6_K output projections (>= 65,536 rows) tiled for the
# tensor-core kernel matvec_q6_k_tc, embed_q6_k_tiles for a tied table.
# bin/new = this tree, bin/old = main before it (1da20dc). GPU tests, the
# kernel on the two vocabulary shapes (mvexp, engine kernels only), gates
# on the Q6_K presets, greedy tokens cuda against cpu on 0.8B Q6_K, bench
# at 1k old/new alternating, then the full table.
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
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView|Tiles' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
el "mvexp: matvec_q6_k vs matvec_q6_k_tc"
timeout 120 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants none -shapes 248320x1024,248320x4096 | grep -E '==|q6_k'
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( g $M/0.8b-q6_k.gguf 300 2000 0; g $M/0.8b-q6_k.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q6_k.gguf 300 1000 0; g $M/9b-q6_k.gguf 64 1000 1 ) > $OUT/gates2.txt 2>&1 & g2=$!
( timeout 200 ./bin/new/memra run -m $M/0.8b-q6_k.gguf --prompt-tokens 100,107,114,1000,2000 -n 24 -greedy -print-tokens -device cuda > $OUT/run-cuda.txt 2>$OUT/run-cuda.err
  timeout 200 ./bin/new/memra run -m $M/0.8b-q6_k.gguf --prompt-tokens 100,107,114,1000,2000 -n 24 -greedy -print-tokens -device cpu > $OUT/run-cpu.txt 2>$OUT/run-cpu.err ) & g3=$!
wait $g1 $g2 $g3
cat $OUT/gates?.txt
echo "cuda: $(cat $OUT/run-cuda.txt)"; echo "cpu:  $(cat $OUT/run-cpu.txt)"
cmp -s $OUT/run-cuda.txt $OUT/run-cpu.txt && echo "greedy tokens cuda == cpu" || { echo "greedy tokens DIFFER"; tail -3 $OUT/run-cuda.err $OUT/run-cpu.err; }
Q=$M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf
mkdir -p /tmp/bn
for b in old new old new; do
  el "bench 1k ($b)"
  d=/tmp/bn/$b-$(date +%s); mkdir -p $d
  timeout 120 ./bin/$b/bench -model $Q -ctx 1024 -reps 3 -tokens 64 -out $d 2>$d/stderr.txt | grep -E '\| (graph|eager) \|' | cut -d'|' -f2,4,5,6,9,13
done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
el "bench (full table)"; mkdir -p /tmp/bn/table; timeout 200 ./bin/new/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn/table 2>/tmp/bn/table/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
tar czf $OUT/bench.tgz -C /tmp bn
el done
