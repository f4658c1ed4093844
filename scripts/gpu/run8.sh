#!/usr/bin/env bash
# GPU session 6c: programmatic dependent launch (every kernel waits with
# griddepcontrol; matvecs prefetch weights into L2 first). Tests with PDL on,
# gates, gate bench lines with PDL on and off, the bench with clocks logged.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
R=$PWD
( for p in 0.8b 9b; do for t in bf16 q8_0; do ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1; done; done; touch $M/done ) &
el "engine/cuda tests"; (cd engine/cuda && timeout 60 $R/bin/engine_cuda.test -test.run 'GPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | head -20)
el "engine/gpu tests"; (cd engine/gpu && timeout 150 $R/bin/engine_gpu.test -test.run 'GPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst rel|identical|unchanged|rror" | grep -v "^    --- PASS" | head -40)
while [ ! -f $M/done ]; do sleep 1; done
(cd engine/gpu && MEMRA_TEST_MODEL=$M/0.8b-bf16.gguf timeout 60 $R/bin/engine_gpu.test -test.run 'GPUModelAgainstCPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL)|identical|rror")
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 120 ./bin/gate $1 $2 $3 ${5:+$5} 2>&1 | grep -E "decode tok/s|captures:|gate (PASS|FAIL)|MISMATCH|dependent" | head -6 | tr '\n' ' '); echo "gate $(basename $1) P=$2 N=$3 fp8=$4: $r"; }
el "gates"
for f in engine/testdata/fixtures/*.gguf; do g $f 64 256 0; g $f 300 256 1; done
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do g $M/$m.gguf 64 256 0 bench; MEMRA_PDL=0 g $M/$m.gguf 64 256 0 bench; done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
el "bench"; mkdir -p /tmp/bn
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 1000 > /tmp/bn/smi.csv 2>&1 &
SMI=$!
timeout 240 ./bin/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt | tail -42
kill $SMI; sort -t, -k4 -n /tmp/bn/smi.csv | tail -3; awk -F, 'NR>1{print $2}' /tmp/bn/smi.csv | sort | uniq -c | sort -rn | head -5
tar czf $OUT/bench.tgz -C /tmp bn
el done
