#!/usr/bin/env bash
# Ready for the next GPU session (not yet run): the full gate matrix on the
# current kernels: 5 tiny fixtures, 0.8B and 9B (bf16, q8_0) × P {1,64,300} ×
# N {256,2000} × FP8 KV off/on = 108 runs, in four parallel streams
# (correctness only: no timing is read from them). Wait on explicit pids:
# a bare `wait` also waits for the tee process substitution and never returns.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
g() { local r; r=$(MEMRA_KV_FP8=$4 timeout 200 ./bin/gate $1 $2 $3 2>/dev/null | grep -E "gate (PASS|FAIL)|MISMATCH" | head -3 | tr '\n' ' '); echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $r"; }
matrix() { for n in 256 2000; do for p in 1 64 300; do for f in 0 1; do g $1 $p $n $f; done; done; done; }
el "synth"
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  [ -s $M/$p-$t.gguf ] || { ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"; }
done; done
[ -n "$pids" ] && wait $pids
ls -la $M
el "matrix"
( timeout 480 bash -c "$(declare -f g matrix); matrix $M/9b-bf16.gguf" > /tmp/sA.txt ) & A=$!
( timeout 480 bash -c "$(declare -f g matrix); matrix $M/9b-q8_0.gguf" > /tmp/sB.txt ) & B=$!
( timeout 480 bash -c "$(declare -f g matrix); for m in $M/0.8b-bf16.gguf $M/0.8b-q8_0.gguf; do matrix \$m; done" > /tmp/sC.txt ) & C=$!
( timeout 480 bash -c "$(declare -f g matrix); for m in engine/testdata/fixtures/*.gguf; do matrix \$m; done" > /tmp/sD.txt ) & D=$!
wait $A $B $C $D
cat /tmp/sA.txt /tmp/sB.txt /tmp/sC.txt /tmp/sD.txt > $OUT/matrix.txt; cat $OUT/matrix.txt
echo "runs: $(wc -l < $OUT/matrix.txt)  PASS: $(grep -c 'gate PASS' $OUT/matrix.txt)  FAIL: $(grep -c 'FAIL' $OUT/matrix.txt)  empty: $(grep -c ': $' $OUT/matrix.txt)"
el done
