#!/usr/bin/env bash
# Session 3, the last call: the full gate matrix on the final kernels (commit
# 17c931c, binaries in bin/base/): 5 tiny fixtures, 0.8B and 9B (bf16, q8_0) x
# P {1,64,300} x N {256,2000} x FP8 KV off/on = 108 runs in four parallel
# streams, after the GPU tests of those kernels. Streams write to $OUT as
# they go. Wait on explicit pids (a bare wait also waits for tee).
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 200 ./bin/base/gate $1 $2 $3 2>/dev/null | grep -E "gate (PASS|FAIL)|MISMATCH" | head -3 | tr '\n' ' '); echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $r"; }
matrix() { for n in 256 2000; do for p in 1 64 300; do for f in 0 1; do g $1 $p $n $f; done; done; done; }
el "synth"
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  [ -s $M/$p-$t.gguf ] || { ./bin/base/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"; }
done; done
[ -n "$pids" ] && wait $pids
ls -la $M
el "engine/gpu tests (base)"; (cd engine/gpu && timeout 90 $PWD/../../bin/base/engine_gpu.test -test.run GPU -test.v -test.timeout 85s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|identical|memory|heap" | grep -v "^    --- PASS" | head -40)
el "matrix"
( timeout 420 bash -c "$(declare -f g matrix); matrix $M/9b-bf16.gguf" > $OUT/sA.txt ) & A=$!
( timeout 420 bash -c "$(declare -f g matrix); matrix $M/9b-q8_0.gguf" > $OUT/sB.txt ) & B=$!
( timeout 420 bash -c "$(declare -f g matrix); for m in $M/0.8b-bf16.gguf $M/0.8b-q8_0.gguf; do matrix \$m; done" > $OUT/sC.txt ) & C=$!
( timeout 420 bash -c "$(declare -f g matrix); for m in engine/testdata/fixtures/*.gguf; do matrix \$m; done" > $OUT/sD.txt ) & D=$!
wait $A $B $C $D
cat $OUT/sA.txt $OUT/sB.txt $OUT/sC.txt $OUT/sD.txt > $OUT/matrix.txt; cat $OUT/matrix.txt
echo "runs: $(wc -l < $OUT/matrix.txt)  PASS: $(grep -c 'gate PASS' $OUT/matrix.txt)  FAIL: $(grep -c 'FAIL' $OUT/matrix.txt)  empty: $(grep -c ': $' $OUT/matrix.txt)"
el done
