#!/usr/bin/env bash
# Session 3: the Gated DeltaNet conv as the input matvec's epilogue, the
# gated output norm as the output matvec's prologue, argmax partials as the
# logits matvec's epilogue and the counter advance in argmax_final (0.8B
# graph nodes 173 -> 135, 9B 229 -> 179). Kernel tests, matvec event timing
# (one block per unit vs the engine's resident grid), gates, the full bench
# compared with run11 (docs/results/h200-run11.json).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  [ -s $M/$p-$t.gguf ] || { ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"; }
done; done
el "engine/gpu tests"; (cd engine/gpu && timeout 200 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst rel|identical|rror|memory|heap" | grep -v "^    --- PASS" | head -60)
el "matvec bench"; (cd engine/gpu && timeout 120 $R/bin/engine_gpu.test -test.run XXX -test.bench 'Copy|Matvec' -test.benchtime 100x 2>&1 | grep -E "^Benchmark|FAIL|panic")
[ -n "$pids" ] && wait $pids
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 120 ./bin/gate $1 $2 $3 ${5:+$5} 2>/dev/null | grep -E "decode tok/s|gate (PASS|FAIL)|MISMATCH|nodes" | head -4 | tr '\n' ' '); echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $r"; }
el "gates"
for f in engine/testdata/fixtures/*.gguf; do g $f 64 256 0; g $f 300 256 1; done
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do g $M/$m.gguf 64 256 0; done
g $M/0.8b-bf16.gguf 64 256 0 bench; g $M/9b-bf16.gguf 64 256 0 bench
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
el "bench"; mkdir -p /tmp/bn; timeout 240 ./bin/bench -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn 2>/tmp/bn/stderr.txt | tail -42
./bin/bench -compare docs/results/h200-run11.json /tmp/bn/latest.json | head -46
tar czf $OUT/bench.tgz -C /tmp bn
el done
