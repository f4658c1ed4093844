#!/usr/bin/env bash
# Session 3: the wide matvecs issue a row's tail loads at once and every
# matvec block prefetches its next unit's first lines into L2. bin/ is this
# commit, bin/base/ commit 17c931c (main before it). GPU tests and gates on
# the new kernels; matvec event timing and the bench, base and new, in one run.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  [ -s $M/$p-$t.gguf ] || { ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"; }
done; done
el "engine/gpu tests (new)"; (cd engine/gpu && timeout 200 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst rel|identical|rror|memory|heap" | grep -v "^    --- PASS" | head -60)
for b in base new; do
  t=$R/bin/engine_gpu.test; [ $b = base ] && t=$R/bin/base/engine_gpu.test
  el "matvec bench ($b)"; (cd engine/gpu && timeout 100 $t -test.run XXX -test.bench 'Copy|Matvec/(BF16|Q8_0)' -test.benchtime 100x 2>&1 | grep -E "^Benchmark|FAIL|panic" | awk -v b=$b '{print b, $1, $(NF-1), $NF}')
done
[ -n "$pids" ] && wait $pids
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 120 ./bin/gate $1 $2 $3 2>/dev/null | grep -E "gate (PASS|FAIL)|MISMATCH" | head -3 | tr '\n' ' '); echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $r"; }
el "gates (new)"
for f in engine/testdata/fixtures/*.gguf; do g $f 64 256 0; g $f 300 256 1; done
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do g $M/$m.gguf 64 256 0; done
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
for b in base new; do
  B=./bin/bench; [ $b = base ] && B=./bin/base/bench
  el "bench ($b)"; mkdir -p /tmp/bn-$b; timeout 150 $B -model $ALL -ctx 64,1024,32768 -reps 3 -tokens 64 -out /tmp/bn-$b 2>/tmp/bn-$b/stderr.txt | grep graph
done
./bin/bench -compare /tmp/bn-base/latest.json /tmp/bn-new/latest.json | head -40
tar czf $OUT/bench.tgz -C /tmp bn-base bn-new
el done
