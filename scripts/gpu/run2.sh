#!/usr/bin/env bash
# GPU session 2: synth presets, the gate matrix, GPU-vs-CPU on 0.8B, kernel tests, benches.
set -u
log=$OUT/log.txt
exec > >(tee -a "$log") 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s)
el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
el "kernel tests"; timeout 120 ./bin/engine_gpu.test -test.run 'TestGPUKernel|TestGPUFixtures' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|error|FP8|worst|Log|:[0-9]+:" | head -120
el "matvec + copy bench"; timeout 120 ./bin/engine_gpu.test -test.run XXX -test.bench . -test.benchtime 200x 2>&1 | grep -E "Benchmark|ok"
el "synth"
for p in 0.8b 9b; do for t in bf16 q8_0; do
  /usr/bin/time -f "synth $p $t: %e s, %M KB max RSS" ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf 2>&1 | tail -1
done; done
ls -la $M
el "gpu vs cpu 0.8b bf16 (64 steps)"; MEMRA_TEST_MODEL=$M/0.8b-bf16.gguf timeout 300 ./bin/engine_gpu.test -test.run TestGPUModelAgainstCPU -test.v 2>&1 | tail -5
g() { # model P N fp8
  local r; r=$(MEMRA_KV_FP8=$4 timeout 300 ./bin/gate $1 $2 $3 2>/dev/null | grep -E "buckets crossed|captures:|gate (PASS|FAIL)|MISMATCH" | tr '\n' ' ')
  echo "gate $(basename $1) P=$2 N=$3 fp8=$4: $r"
}
el "gate tiny fixtures"
for f in engine/testdata/fixtures/*.gguf; do for fp8 in 0 1; do for p in 1 64 300; do for n in 256 2000; do g $f $p $n $fp8; done; done; done; done 2>&1 | sed -E 's/buckets crossed \(fa_vec, n_splits\): \[([^]]{0,60})[^]]*\]/buckets [\1...]/'
el "gate 0.8b"
for t in bf16 q8_0; do for fp8 in 0 1; do for p in 1 64 300; do for n in 256 2000; do g $M/0.8b-$t.gguf $p $n $fp8; done; done; done; done 2>&1 | sed -E 's/buckets crossed \(fa_vec, n_splits\): \[([^]]{0,60})[^]]*\]/buckets [\1...]/'
el "bench lines"
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do for p in 64; do echo "$m P=$p: $(timeout 200 ./bin/gate $M/$m.gguf $p 256 bench 2>/dev/null | grep -E 'decode tok/s|gate (PASS|FAIL)' | tr '\n' ' ')"; done; done
el "gate 9b (N=256)"
for t in bf16 q8_0; do for fp8 in 0 1; do for p in 1 64 300; do g $M/9b-$t.gguf $p 256 $fp8; done; done; done
el "gate 9b N=2000 P=64"
for t in bf16 q8_0; do for fp8 in 0 1; do g $M/9b-$t.gguf 64 2000 $fp8; done; done
el done
