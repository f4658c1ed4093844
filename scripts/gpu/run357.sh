#!/usr/bin/env bash
# Session 64, step 114: Q4_K and Q5_K codes as f16 subnormals (one AND a
# fragment, no HSUB2/HFMA2), on the card the device gives. The digests of
# every Q4_K/Q5_K matvec variant's outputs, old against new (the k4bits
# patch's test on both: equal digests, equal bits); the K-quant kernel,
# lean, batch, mixed-launch, embed and decode GPU tests on new; gates; then
# graph decode at 64 and 1k of the 0.8B and 9B Q4_K, Q5_K and Q4_K_M, old
# and new alternating, two rounds, bench -compare. carry ["bin"], binaries
# from `bash scripts/gpu/bins.sh new=HEAD+scripts/gpu/patches/k4bits.patch
# old=c2c67f1+scripts/gpu/patches/k4bits.patch:bench,engine_gpu.test`. ~8 min.
# (HEAD was 2c49908, reverted after this run: docs/perf.md step 114.)
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth new "0.8b 9b" "q4_k q5_k q4_k_m"
for b in old new; do
  el "k4bits digests ($b)"
  (cd engine/gpu && timeout 60 "$R/bin/$b/engine_gpu.test" -test.run 'GPUK4Bits' -test.v 2>&1 | grep -o 'k4bits .*' > "/tmp/k4-$b.txt")
  wc -l < "/tmp/k4-$b.txt"
done
if [ -s /tmp/k4-new.txt ] && cmp -s /tmp/k4-old.txt /tmp/k4-new.txt; then echo "k4bits: every digest old == new"; else echo "k4bits: digests DIFFER"; diff /tmp/k4-old.txt /tmp/k4-new.txt | head -20; fi
cp /tmp/k4-old.txt /tmp/k4-new.txt "$OUT/"
el "K-quant GPU tests (new)"
(cd engine/gpu && timeout 230 "$R/bin/new/engine_gpu.test" -test.run 'KernelMatvec/Q[45]_K|KernelMatvecLean|KernelMatvecBatch|KernelMatvecMix|MixedLaunch|Embed|DecodeMatchesCPU|GraphEqualsEager|PrefillMatchesTokenFeed' -test.v -test.timeout 220s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -30
wait_synth
el "gates (new)"
gate new "$M/9b-q4_k_m.gguf" 300 64 0
gate new "$M/0.8b-q5_k.gguf" 300 128 1
ms="$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q4_k_m.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q4_k_m.gguf"
mkdir -p /tmp/bn
for r in 1 2; do for b in old new; do
  el "bench $b (round $r)"
  d=/tmp/bn/$b-$r; mkdir -p "$d"
  timeout 100 "./bin/$b/bench" -model "$ms" -ctx 64,1024 -reps 3 -tokens 64 -sampled=false -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
for r in 1 2; do
  el "compare old -> new (round $r)"
  ./bin/new/bench -compare /tmp/bn/old-"$r"/bench-*.json /tmp/bn/new-"$r"/bench-*.json 2>&1 | grep -E '\| graph \||geomean new/old \(graph' | cut -d'|' -f2,4,5,6,7,8
done
tar czf "$OUT/bench-k4.tgz" -C /tmp bn
el done
