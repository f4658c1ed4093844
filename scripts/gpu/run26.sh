#!/usr/bin/env bash
# Session 5, first call. bin/ = branch next/gdn-norm (9a22a66: the gated
# output norm inside gdn_delta, rmsnorm_gated gone), bin/base/ = main
# (890e99c); bin/mvexp + bin/mvexp.cubin = main's mvexp with the session-5
# q8_0 variants. Packed as bin/bin.tgz (carry limit). run25.sh's content
# (GPU tests, gates, bench of both at 1k/32k, profile), then mvexp on the
# q8_0 decode shapes.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
tar xzf bin/bin.tgz -C bin
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
M=/tmp/models; mkdir -p $M
R=$PWD
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"
done; done
el "engine/gpu tests (branch)"
(cd engine/gpu && timeout 200 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 190s > $OUT/gputest.txt 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" $OUT/gputest.txt | grep -v "^    --- PASS"
wait $pids
g() { echo "gate $(basename $1 .gguf) P=$2 N=$3 fp8=$4: $(MEMRA_KV_FP8=$4 timeout 150 ./bin/gate $1 $2 $3 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"; }
el "gates"
( for f in engine/testdata/fixtures/*.gguf; do g $f 300 2000 0; g $f 300 2000 1; done ) > $OUT/gates1.txt 2>&1 & g1=$!
( for m in 0.8b-bf16 9b-q8_0 9b-bf16 0.8b-q8_0; do g $M/$m.gguf 300 2000 0; g $M/$m.gguf 64 2000 1; done ) > $OUT/gates2.txt 2>&1 & g2=$!
wait $g1 $g2
echo "gates PASS: $(cat $OUT/gates?.txt | grep -c 'gate PASS') of $(cat $OUT/gates?.txt | wc -l)"
grep -v "gate PASS" $OUT/gates?.txt
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf
for b in base new; do
  B=./bin/bench; [ $b = base ] && B=./bin/base/bench
  el "bench ($b)"; mkdir -p /tmp/bn-$b; timeout 150 $B -model $ALL -ctx 1024,32768 -reps 3 -tokens 64 -out /tmp/bn-$b 2>/tmp/bn-$b/stderr.txt | grep graph
done
./bin/bench -compare /tmp/bn-base/latest.json /tmp/bn-new/latest.json | head -30
el "profile (branch)"; mkdir -p /tmp/bp; timeout 100 ./bin/bench -model $M/0.8b-bf16.gguf,$M/9b-q8_0.gguf \
  -ctx 1024 -reps 2 -tokens 32 -profile 8 -out /tmp/bp 2>/tmp/bp/stderr.txt | sed -n '/## Kernel time/,$p'
tar czf $OUT/bench.tgz -C /tmp bn-base bn-new bp
el "mvexp (q8_0 shapes)"
timeout 150 ./bin/mvexp -cubin bin/mvexp.cubin -variants q8 \
  -shapes 4096x12288,4096x4096,12352x4096,10240x4096,1024x3584,1024x2048,8224x1024,7168x1024 > $OUT/mvexp.txt 2>&1
grep -E "^==|engine matvec_q8|copy" $OUT/mvexp.txt | head -40
el done
