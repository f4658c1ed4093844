#!/usr/bin/env bash
# Session 5, third call: the K-quant kernels with x quantised per 16 and dp4a (Q4_K, Q5_K, Q6_K matvec and
# embedding, kernels/kquant.cuh). bin/ = this tree. GPU tests (the new
# kernel tests against the CPU decoder, tiny Q4_K/Q5_K/Q6_K/mixed models
# decoded against the CPU backend), gates on synth Q4_K presets, the K-quant
# matvec event timing, bench of the Q4_K presets beside bf16/q8_0, profile.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q6_k; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf > $M/$p-$t.log 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests"
(cd engine/gpu && timeout 240 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 230s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|q4_k|q5_k|q6_k|k-mix" $OUT/gputest.txt | grep -v "^    --- PASS" | head -60
el "matvec event timing (K-quants, copy)"
(cd engine/gpu && timeout 120 $R/bin/engine_gpu.test -test.run '^$' -test.bench 'Copy|Matvec/(Q4_K|Q5_K|Q6_K|Q8_0)' -test.benchtime 100x > $OUT/mvbench.txt 2>&1)
grep -E "Benchmark|ok|FAIL" $OUT/mvbench.txt | head -30
wait $pids
ls -la $M
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates (Q4_K presets)"
( g $M/0.8b-q4_k.gguf 300 2000 0; g $M/0.8b-q4_k.gguf 64 2000 1; g $M/0.8b-q6_k.gguf 300 2000 0 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/9b-q4_k.gguf 300 2000 0; g $M/9b-q4_k.gguf 64 2000 1; g $M/9b-q6_k.gguf 300 2000 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates?.txt
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q6_k.gguf
el "bench"; mkdir -p /tmp/bn; timeout 240 ./bin/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt | grep -E 'graph|eager \| 1k'
el "profile"; mkdir -p /tmp/bp; timeout 100 ./bin/bench -model $M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf \
  -ctx 1024 -reps 2 -tokens 32 -profile 8 -out /tmp/bp 2>/tmp/bp/stderr.txt | sed -n '/## Kernel time/,$p'
tar czf $OUT/bench.tgz -C /tmp bn bp
el done
