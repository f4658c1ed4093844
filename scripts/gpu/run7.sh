#!/usr/bin/env bash
# GPU session 6b: the matvec family (R rows per warp, K split over warps,
# q8_0 repacked, SwiGLU epilogue): kernel tests, event timing, gates, bench.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
R=$PWD
el "synth (background)"
( for p in 0.8b 9b; do for t in bf16 q8_0; do ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1; done; done; touch $M/done ) &
el "engine/gpu tests"; (cd engine/gpu && timeout 150 $R/bin/engine_gpu.test -test.run 'GPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst|identical|unchanged|Error|error" | grep -v "^    --- PASS" | head -60)
el "matvec bench"; (cd engine/gpu && timeout 90 $R/bin/engine_gpu.test -test.run XXX -test.bench 'Copy|Matvec' -test.benchtime 100x 2>&1 | grep -E "^Benchmark|FAIL|panic")
while [ ! -f $M/done ]; do sleep 1; done; ls -la $M
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 120 ./bin/gate $1 $2 $3 ${5:+$5} 2>/dev/null | grep -E "decode tok/s|captures:|gate (PASS|FAIL)|MISMATCH" | head -5 | tr '\n' ' '); echo "gate $(basename $1) P=$2 N=$3 fp8=$4: $r"; }
el "gates"
for f in engine/testdata/fixtures/*.gguf; do g $f 64 256 0; g $f 300 256 1; done
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do g $M/$m.gguf 64 256 0 bench; done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
el "bench"; mkdir -p /tmp/bn; timeout 240 ./bin/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt | tail -42; tar czf $OUT/bench.tgz -C /tmp bn
el done
