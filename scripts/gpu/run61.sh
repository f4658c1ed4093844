#!/usr/bin/env bash
# Session 10, second call: run60 found the Q4_K kernels writing the
# unpaired last row of an odd-row SwiGLU launch (the CUDA-core kernels skip
# it; the engine never launches one). bin/new = that fixed. GPU kernel and
# decode tests, the Q4_K kernel timings again, gates (Q4_K and, as a check,
# bf16 and q8_0, whose kernels are SASS-identical to main's), the per-kernel
# profile of a 9B Q4_K step, and the full table.
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
(cd engine/gpu && timeout 240 $R/bin/new/engine_gpu.test -test.run 'GPU|Matvec|RowsView' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
el "mvexp Q4_K: engine (tensor cores) vs mvk_q4_cuda (before)"
timeout 200 ./bin/new/mvexp -cubin bin/mvexp.cubin -variants mvk_q4 \
  -shapes 4096x4096,4096x12288,12352x4096,24576x4096,1024x3584,7168x1024,8224x1024,1024x2048,248320x1024,248320x4096 | grep -v -E 'bf16|q8_0'
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/new/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( g $M/0.8b-q4_k.gguf 300 2000 0; g $M/0.8b-bf16.gguf 64 2000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q4_k.gguf 64 1000 1; g $M/9b-q8_0.gguf 300 1000 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
el "profile 9b-q4_k"; mkdir -p /tmp/bp
timeout 60 ./bin/new/bench -model $M/9b-q4_k.gguf -ctx 1024 -reps 2 -tokens 32 -profile 8 -out /tmp/bp 2>/tmp/bp/stderr.txt | sed -n '/## Kernel time/,$p' | head -14
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
el "bench (full table)"; mkdir -p /tmp/bn/table; timeout 200 ./bin/new/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn/table 2>/tmp/bn/table/stderr.txt | grep -E 'graph'
tar czf $OUT/bench.tgz -C /tmp bn bp
el done
