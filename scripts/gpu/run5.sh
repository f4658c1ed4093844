#!/usr/bin/env bash
# GPU session 5: final kernels (q8_0 one chunk ahead, 16-bit unroll 4): tests, gates, bench.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
R=$PWD
el "engine/gpu tests"; (cd engine/gpu && timeout 90 $R/bin/engine_gpu.test -test.run 'GPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst|identical|unchanged" | grep -v "^    --- PASS" | head -40)
el "matvec bench"; (cd engine/gpu && timeout 60 $R/bin/engine_gpu.test -test.run XXX -test.bench 'Copy|Matvec/(BF16|Q8_0)' -test.benchtime 100x 2>&1 | grep -E "^Benchmark")
el "synth"
for p in 0.8b 9b; do for t in bf16 q8_0; do ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1; done; done
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 120 ./bin/gate $1 $2 $3 ${5:+$5} 2>/dev/null | grep -E "decode tok/s|captures:|gate (PASS|FAIL)|MISMATCH" | tr '\n' ' '); echo "gate $(basename $1) P=$2 N=$3 fp8=$4: $r"; }
el "gates"
for f in engine/testdata/fixtures/*.gguf; do g $f 64 256 1; done
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do g $M/$m.gguf 64 256 0 bench; done
g $M/9b-bf16.gguf 64 2000 0; g $M/9b-q8_0.gguf 1 2000 1
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
el "bench"; mkdir -p /tmp/bn; timeout 200 ./bin/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt | tail -42; tar czf $OUT/bench.tgz -C /tmp bn
el done
