#!/usr/bin/env bash
# Session 4, the last call (383 s of device time left): the gate matrix on
# main's final kernels (commit 352153d; their GPU tests ran in run23) as far
# as the time goes: 5 tiny fixtures, 0.8B and 9B (bf16, q8_0) x P {300,64,1}
# x N {2000,256} x FP8 KV off/on in four parallel streams, N = 2000 first.
# Streams write to $OUT as they go; wait on explicit pids.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 200 ./bin/gate $1 $2 $3 2>/dev/null | grep -E "gate (PASS|FAIL)|MISMATCH" | head -3 | tr '\n' ' '); echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $r"; }
matrix() { for n in 2000 256; do for p in 300 64 1; do for f in 0 1; do g $1 $p $n $f; done; done; done; }
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"
done; done
wait $pids
el "matrix"
( timeout 235 bash -c "$(declare -f g matrix); matrix $M/9b-bf16.gguf" > $OUT/sA.txt ) & A=$!
( timeout 235 bash -c "$(declare -f g matrix); matrix $M/9b-q8_0.gguf" > $OUT/sB.txt ) & B=$!
( timeout 235 bash -c "$(declare -f g matrix); for m in $M/0.8b-bf16.gguf $M/0.8b-q8_0.gguf; do matrix \$m; done" > $OUT/sC.txt ) & C=$!
( timeout 235 bash -c "$(declare -f g matrix); for m in engine/testdata/fixtures/*.gguf; do matrix \$m; done" > $OUT/sD.txt ) & D=$!
wait $A $B $C $D
cat $OUT/sA.txt $OUT/sB.txt $OUT/sC.txt $OUT/sD.txt > $OUT/matrix.txt; cat $OUT/matrix.txt
echo "runs: $(wc -l < $OUT/matrix.txt)  PASS: $(grep -c 'gate PASS' $OUT/matrix.txt)  FAIL: $(grep -c 'FAIL' $OUT/matrix.txt)  empty: $(grep -c ': $' $OUT/matrix.txt)"
el done
