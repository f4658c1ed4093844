#!/usr/bin/env bash
# Session 5, after review: the K kernels' L2 prefetch now aims at the code
# bytes (memra_kq_code_off), a one-superblock matvec shape, the CPU Q4_K/Q5_K
# decoder's products rounded explicitly. GPU tests of the changed paths, one
# gate, the Q4_K presets' bench at 1k against run29.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do
  ./bin/memra synth --arch qwen35 --preset $p --type q4_k -o $M/$p-q4_k.gguf > $M/$p.log 2>&1 & pids="$pids $!"
done
el "engine/gpu tests (matvec, embed, decode vs CPU, graph == eager)"
(cd engine/gpu && timeout 150 $R/bin/engine_gpu.test -test.run 'GPUKernelMatvec|GPUKernelEmbed|GPUDecodeMatchesCPU|GPUGraphEqualsEager' -test.v -test.timeout 140s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|q4_k|q5_k|q6_k|k-mix" $OUT/gputest.txt | grep -v "^    --- PASS" | head -40
wait $pids
el "gate"; echo "gate 0.8b-q4_k P=300 N=1000: $(timeout 100 ./bin/gate $M/0.8b-q4_k.gguf 300 1000 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3)"
el "bench"; mkdir -p /tmp/bn; timeout 90 ./bin/bench -model $M/0.8b-q4_k.gguf,$M/9b-q4_k.gguf -ctx 1024 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt | grep -E 'graph'
tar czf $OUT/bench.tgz -C /tmp bn
el done
