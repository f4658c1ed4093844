#!/usr/bin/env bash
# Session 4, fourth call. bin/ = main's working tree with the attention split
# cap raised to 3 blocks per SM (bucket.go: the split kernels now hold 168
# registers); bin/base = commit d4d7086 (cap 2). GPU tests, gates that cross
# the new cap (9B: 6,336 keys; 0.8B: 12,672), and the full bench table of
# both at 64/1k/4k/16k/32k, then the profile of the new build at 32k.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests (new)"
(cd engine/gpu && timeout 200 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 190s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|FP8 KV attention error, worst" $OUT/gputest.txt | grep -v "^    --- PASS"
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 200 ./bin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates across the cap"
( g $M/9b-q8_0.gguf 6000 700 0; g $M/9b-bf16.gguf 6200 300 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( g $M/0.8b-bf16.gguf 12400 600 1; g $M/0.8b-q8_0.gguf 12500 400 0; g engine/testdata/fixtures/qwen35-tiny-bf16.gguf 300 2000 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
cat $OUT/gates1.txt $OUT/gates2.txt | cut -c1-220
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
for b in base new; do
  B=./bin/bench; [ $b = base ] && B=./bin/base/bench
  el "bench ($b)"; mkdir -p /tmp/bn-$b; timeout 170 $B -model $ALL -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/bn-$b 2>/tmp/bn-$b/stderr.txt | grep -E "graph|eager" | grep "^| [09]"
done
./bin/bench -compare /tmp/bn-base/latest.json /tmp/bn-new/latest.json | head -50
el "profile (new)"; mkdir -p /tmp/bp; timeout 100 ./bin/bench -model $M/0.8b-bf16.gguf,$M/9b-q8_0.gguf \
  -ctx 32768 -reps 2 -tokens 32 -profile 8 -out /tmp/bp 2>/tmp/bp/stderr.txt | sed -n '/## Kernel time/,$p'
tar czf $OUT/bench.tgz -C /tmp bn-base bn-new bp
el done
