#!/usr/bin/env bash
# Session 4, first call: branches next/attn-pipeline and next/kv-row merged
# (next/combined, kernels rebuilt) in bin/, main in bin/base/, packed as
# bin/bin.tgz (the carry limit). The combined build's GPU tests (bit-exact
# kernel tests, attention against the CPU reference to t_kv 32768, and the
# first run of TestGPUProfileStep), gates at N=2000, the bench of main and
# the branch at 1k/16k/32k, then `bench -profile` and mvexp (run16's
# content) with what time is left.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests (combined)"
(cd engine/gpu && timeout 200 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 190s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|FP8 KV attention error, worst|profile" $OUT/gputest.txt | grep -v "^    --- PASS"
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( for f in engine/testdata/fixtures/*.gguf; do g $f 300 2000 0; g $f 300 2000 1; done ) > $OUT/gates1.txt 2>&1 & g1=$!
( for m in 0.8b-bf16 9b-q8_0; do g $M/$m.gguf 300 2000 0; g $M/$m.gguf 300 2000 1; done ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates1.txt $OUT/gates2.txt
echo "gates PASS: $(cat $OUT/gates?.txt | grep -c 'gate PASS') of $(cat $OUT/gates?.txt | wc -l)"
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
for b in base new; do
  B=./bin/bench; [ $b = base ] && B=./bin/base/bench
  el "bench ($b)"; mkdir -p /tmp/bn-$b; timeout 150 $B -model $ALL -ctx 1024,16384,32768 -reps 3 -tokens 64 -out /tmp/bn-$b 2>/tmp/bn-$b/stderr.txt | grep graph
done
./bin/bench -compare /tmp/bn-base/latest.json /tmp/bn-new/latest.json | head -40
tar czf $OUT/bench.tgz -C /tmp bn-base bn-new
el "profile (combined)"; mkdir -p /tmp/bp; timeout 150 ./bin/bench -model $ALL \
  -ctx 1024 -reps 3 -tokens 64 -profile 16 -out /tmp/bp 2>/tmp/bp/stderr.txt
tar czf $OUT/profile.tgz -C /tmp bp
left=$(( 570 - ($(date +%s) - T0) ))
el "mvexp (timeout ${left}s)"; [ $left -gt 20 ] && timeout $left ./bin/mvexp -cubin bin/mvexp.cubin > $OUT/mvexp.txt 2>&1; tail -60 $OUT/mvexp.txt
el done
