#!/usr/bin/env bash
# Session 29: the FFN in one launch (kernels/ffn.cu, perf.md step 83). The
# ffn kernels against the matvecs they replace (bit for bit) and float64,
# decode fused against unfused, the usual decode tests, two gates with the
# fused FFN, then graph tok/s at 1k with MEMRA_FFN_FUSE=0 and 1 alternating
# on one machine, and a profile of each. bin/main, built from branch
# next/ffn-fused as first written: the second product read h through L2
# (__ldcg; the branch reads it by plain loads since run187). carry ["bin"].
# ~8 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"
S1=$SYNTH
synth main "9b" "q8_0"
SYNTH="$S1 $SYNTH"
el "engine/gpu tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'KernelFFN|FFNFusedDecode|KernelMatvec|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|ProfileStep|OmitParts|EarlyLoads' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|ffn" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
wait_synth
el "gates"
gate main $M/0.8b-bf16.gguf 64 128 0
gate main $M/9b-q8_0.gguf 64 128 0
ms=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf
mkdir -p /tmp/bn
for f in 0 1 0 1; do
  el "bench 1024 MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/fuse$f-$(date +%s%N); mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 150 ./bin/main/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| (graph|eager) \|' | cut -d'|' -f2,3,4,5,6,9,13
done
for f in 0 1; do
  el "profile MEMRA_FFN_FUSE=$f"
  d=/tmp/bn/prof$f; mkdir -p "$d"
  MEMRA_FFN_FUSE=$f timeout 100 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out "$d" > "$d/stdout.txt" 2>"$d/stderr.txt"
  grep -E '^\| (ffn|matvec)' "$d/stdout.txt" | head -16
done
tar czf "$OUT/bench.tgz" -C /tmp bn
el done
